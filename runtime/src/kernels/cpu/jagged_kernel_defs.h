//===- jagged_kernel_defs.h - The jagged and KJT kernels -------*- C++ -*-===//
//
// One function per kernel (each in its own file);
// register_jagged_kernels.cpp registers them. Contracts:
// docs/kernels-embedding.md.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_CPU_JAGGED_KERNEL_DEFS_H
#define EMBER_KERNELS_CPU_JAGGED_KERNEL_DEFS_H

#include "kernels/kernel_registry.h"

namespace ember::jagged {

KernelEntry
lengthsToOffsetsKernelEntry();           // jagged_lengths_to_offsets_kernel.cpp
KernelEntry jaggedToPaddedKernelEntry(); // jagged_padding_kernels.cpp
KernelEntry paddedToJaggedKernelEntry(); // jagged_padding_kernels.cpp
KernelEntry jaggedSumKernelEntry();      // jagged_padding_kernels.cpp
KernelEntry kjtPermuteKernelEntry();     // kjt_permute_kernel.cpp
KernelEntry kjtSplitKernelEntry();       // kjt_split_kernel.cpp
KernelEntry kjtConcatKernelEntry();      // kjt_concat_kernel.cpp
KernelEntry kjtBucketizeKernelEntry();   // kjt_bucketize_kernel.cpp
KernelEntry kjtFromBagsKernelEntry();    // kjt_from_bags_kernel.cpp

} // namespace ember::jagged

#endif // EMBER_KERNELS_CPU_JAGGED_KERNEL_DEFS_H
