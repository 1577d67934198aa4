//===- register_cuda_kernels.cpp - The CUDA kernel registry ---------------===//
#include "cuda/cuda_kernels.h"

#include <cstdio>
#include <cstdlib>

namespace ember::cuda {

const KernelRegistry &cudaKernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    for (auto registerFn : {registerEmbeddingKernels, registerJaggedKernels,
                            registerDenseKernels, registerCollectiveKernels}) {
      Status s = registerFn(r);
      if (!s.isOk()) {
        // A duplicate or malformed kernel definition is a bug in Ember itself.
        std::fprintf(stderr, "ember: CUDA kernel registration failed: %s\n",
                     s.toString().c_str());
        std::abort();
      }
    }
    return r;
  }();
  return registry;
}

} // namespace ember::cuda
