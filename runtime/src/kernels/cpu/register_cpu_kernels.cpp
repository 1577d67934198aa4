//===- register_cpu_kernels.cpp - The CPU kernel registry ------------------===//
#include "comm/kernels/collective_kernels.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel_registry.h"

#include <cstdio>
#include <cstdlib>

namespace ember {

const KernelRegistry &cpuKernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    for (auto registerFn :
         {registerEmbeddingKernels, registerJaggedKernels, registerDenseKernels,
          registerShapeKernels, registerCollectiveKernels}) {
      Status s = registerFn(r);
      if (!s.isOk()) {
        // A duplicate or malformed kernel definition is a bug in Ember itself,
        // found by any test run; it does not depend on user input.
        std::fprintf(stderr, "ember: CPU kernel registration failed: %s\n",
                     s.toString().c_str());
        std::abort();
      }
    }
    return r;
  }();
  return registry;
}

} // namespace ember
