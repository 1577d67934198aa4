//===- register_embedding_kernels.cpp - Registering the embedding kernels -===//
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/embedding_kernel_defs.h"
#include "kernels/kernel_registry.h"

namespace ember {

Status registerEmbeddingKernels(KernelRegistry &registry) {
  using namespace embedding;
  return addKernels(registry, {embeddingBagKernelEntry(),
                               groupedEmbeddingBagKernelEntry(),
                               embeddingSequenceKernelEntry()});
}

} // namespace ember
