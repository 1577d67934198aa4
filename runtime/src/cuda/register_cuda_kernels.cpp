//===- register_cuda_kernels.cpp - The CUDA kernel registry ---------------===//
#include "cuda/cuda_kernels.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ember::cuda {

Result<const KernelDef *> cpuKernelDef(const char *name) {
  const KernelDef *def = cpuKernels().find(name);
  if (!def)
    return internalError(std::string("CUDA kernel '") + name +
                         "' has no CPU kernel to share the contract with");
  return def;
}

Result<KernelDef> cudaDefLike(const char *name, KernelFn run, const char *how) {
  EMBER_ASSIGN_OR_RETURN(const KernelDef *cpu, cpuKernelDef(name));
  KernelDef def = *cpu;
  def.run = run;
  def.summary = cpu->summary + " [CUDA: " + how + "]";
  return def;
}

Status addCudaKernels(KernelRegistry &r,
                      std::initializer_list<CudaKernelEntry> entries) {
  for (const CudaKernelEntry &e : entries) {
    EMBER_ASSIGN_OR_RETURN(KernelDef def, cudaDefLike(e.name, e.run, e.how));
    EMBER_RETURN_IF_ERROR(r.add(std::move(def)));
  }
  return Status::ok();
}

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
