//===- register_embedding_kernels.cpp - Registering the embedding kernels -===//
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/embedding_kernel_defs.h"
#include "kernels/kernel_registry.h"

namespace ember {

Status registerEmbeddingKernels(KernelRegistry &registry) {
  EMBER_RETURN_IF_ERROR(registry.add(embedding::embeddingBagKernelDef()));
  EMBER_RETURN_IF_ERROR(
      registry.add(embedding::groupedEmbeddingBagKernelDef()));
  EMBER_RETURN_IF_ERROR(registry.add(embedding::embeddingSequenceKernelDef()));
  return Status::ok();
}

} // namespace ember
