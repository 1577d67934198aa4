//===- embedding_kernels.cpp - Embedding kernel registrations (being written) -----===//
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel_registry.h"

namespace ember {

Status registerEmbeddingKernels(KernelRegistry &registry) { return Status::ok(); }

} // namespace ember
