//===- embedding_kernels.h - The CUDA embedding lookup kernels -*- C++ -*-===//
#ifndef EMBER_CUDA_EMBEDDING_EMBEDDING_KERNELS_H
#define EMBER_CUDA_EMBEDDING_EMBEDDING_KERNELS_H

#include "ember/status.h"

namespace ember {
class KernelContext;
namespace cuda::embedding {

/// The run functions of embedding_bag, grouped_embedding_bag and
/// embedding_sequence on the GPU (embedding_kernels.cpp);
/// register_embedding_kernels.cpp registers them with the CPU kernels'
/// contracts.
Status runEmbeddingBag(KernelContext &ctx);
Status runGroupedEmbeddingBag(KernelContext &ctx);
Status runEmbeddingSequence(KernelContext &ctx);

} // namespace cuda::embedding
} // namespace ember

#endif // EMBER_CUDA_EMBEDDING_EMBEDDING_KERNELS_H
