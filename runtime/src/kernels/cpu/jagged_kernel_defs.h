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

KernelDef lengthsToOffsetsKernelDef(); // jagged_lengths_to_offsets_kernel.cpp
KernelDef jaggedToPaddedKernelDef();   // jagged_padding_kernels.cpp
KernelDef paddedToJaggedKernelDef();   // jagged_padding_kernels.cpp
KernelDef jaggedSumKernelDef();        // jagged_padding_kernels.cpp
KernelDef kjtPermuteKernelDef();       // kjt_permute_kernel.cpp
KernelDef kjtSplitKernelDef();         // kjt_split_kernel.cpp
KernelDef kjtConcatKernelDef();        // kjt_concat_kernel.cpp
KernelDef kjtBucketizeKernelDef();     // kjt_bucketize_kernel.cpp
KernelDef kjtFromBagsKernelDef();      // kjt_from_bags_kernel.cpp

} // namespace ember::jagged

#endif // EMBER_KERNELS_CPU_JAGGED_KERNEL_DEFS_H
