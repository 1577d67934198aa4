//===- cpu_kernels.h - Registration of the CPU kernels ---------*- C++ -*-===//
#ifndef EMBER_KERNELS_CPU_CPU_KERNELS_H
#define EMBER_KERNELS_CPU_CPU_KERNELS_H

#include "ember/status.h"

namespace ember {
class KernelRegistry;

/// Embedding lookups: embedding_bag, grouped_embedding_bag, embedding_sequence.
Status registerEmbeddingKernels(KernelRegistry &registry);
/// Jagged and KJT ops: kjt_permute, kjt_split, kjt_concat, kjt_bucketize,
/// lengths_to_offsets, jagged_to_padded, padded_to_jagged.
Status registerJaggedKernels(KernelRegistry &registry);
/// Dense math: linear (GEMM + bias + activation), matmul,
/// elementwise binary/unary ops, softmax, layer_norm, dot_interaction,
/// dcn_cross.
Status registerDenseKernels(KernelRegistry &registry);
/// Data movement: concat, reshape, transpose, slice, gather, cast, ...
Status registerShapeKernels(KernelRegistry &registry);

} // namespace ember

#endif // EMBER_KERNELS_CPU_CPU_KERNELS_H
