//===- embedding_kernels.h - The CUDA embedding lookup kernels -*- C++ -*-===//
#ifndef EMBER_CUDA_EMBEDDING_EMBEDDING_KERNELS_H
#define EMBER_CUDA_EMBEDDING_EMBEDDING_KERNELS_H

#include "kernels/kernel_registry.h"

#include <vector>

namespace ember::cuda::embedding {

/// embedding_bag, grouped_embedding_bag and embedding_sequence on the GPU
/// (embedding_kernels.cpp); registerEmbeddingKernels adds them.
std::vector<KernelDef> embeddingKernelDefs();

} // namespace ember::cuda::embedding

#endif // EMBER_CUDA_EMBEDDING_EMBEDDING_KERNELS_H
