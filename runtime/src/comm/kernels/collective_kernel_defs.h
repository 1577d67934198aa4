//===- collective_kernel_defs.h - One KernelDef per collective --*- C++ -*-===//
#ifndef EMBER_COMM_KERNELS_COLLECTIVE_KERNEL_DEFS_H
#define EMBER_COMM_KERNELS_COLLECTIVE_KERNEL_DEFS_H

#include "comm/collective_info.h"
#include "kernels/kernel_registry.h"

namespace ember::collective {

KernelDef kjtAllToAllKernel();
KernelDef pooledAllToAllKernel();
KernelDef sequenceAllToAllKernel();
KernelDef reduceScatterKernel();
KernelDef allGatherKernel();
KernelDef allReduceKernel();

} // namespace ember::collective

#endif // EMBER_COMM_KERNELS_COLLECTIVE_KERNEL_DEFS_H
