//===- embedding_kernel_defs.h - The embedding lookup kernels --*- C++ -*-===//
//
// One function per kernel, each defined in its own file;
// register_embedding_kernels.cpp registers them. Contracts:
// docs/kernels-embedding.md.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_CPU_EMBEDDING_KERNEL_DEFS_H
#define EMBER_KERNELS_CPU_EMBEDDING_KERNEL_DEFS_H

#include "kernels/kernel_registry.h"

namespace ember::embedding {

KernelEntry embeddingBagKernelEntry(); // embedding_bag_kernel.cpp
KernelEntry
groupedEmbeddingBagKernelEntry();           // grouped_embedding_bag_kernel.cpp
KernelEntry embeddingSequenceKernelEntry(); // embedding_sequence_kernel.cpp

} // namespace ember::embedding

#endif // EMBER_KERNELS_CPU_EMBEDDING_KERNEL_DEFS_H
