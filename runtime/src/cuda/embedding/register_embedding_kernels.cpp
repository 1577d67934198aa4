//===- register_embedding_kernels.cpp - CUDA embedding kernels ------------===//
#include "cuda/cuda_kernels.h"
#include "cuda/embedding/embedding_kernels.h"

namespace ember::cuda {

Status registerEmbeddingKernels(KernelRegistry &r) {
  for (KernelDef &def : embedding::embeddingKernelDefs())
    EMBER_RETURN_IF_ERROR(r.add(std::move(def)));
  return Status::ok();
}

} // namespace ember::cuda
