//===- jagged_kernels.h - The CUDA jagged and KJT kernels -------*- C++ -*-===//
//
// The run functions of the CUDA jagged and KJT kernels; register_jagged_
// kernels.cpp pairs each with the CPU kernel's definition (name, arity,
// attribute validation), which they share. Contracts: docs/cuda-jagged.md.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_JAGGED_JAGGED_KERNELS_H
#define EMBER_CUDA_JAGGED_JAGGED_KERNELS_H

#include "ember/status.h"

namespace ember {
class KernelContext;
}

namespace ember::cuda::jagged {

Status runLengthsToOffsets(KernelContext &ctx); // jagged_offsets_kernels.cu
Status runJaggedToPadded(KernelContext &ctx);   // jagged_offsets_kernels.cu
Status runPaddedToJagged(KernelContext &ctx);   // jagged_offsets_kernels.cu
Status runKjtPermute(KernelContext &ctx);       // kjt_reorder_kernels.cu
Status runKjtSplit(KernelContext &ctx);         // kjt_reorder_kernels.cu
Status runKjtConcat(KernelContext &ctx);        // kjt_reorder_kernels.cu
Status runKjtBucketize(KernelContext &ctx);     // kjt_bucketize_kernel.cu
Status runKjtFromBags(KernelContext &ctx);      // kjt_from_bags_kernel.cu

} // namespace ember::cuda::jagged

#endif // EMBER_CUDA_JAGGED_JAGGED_KERNELS_H
