//===- cuda_collective_defs.h - The CUDA collective kernels -----*- C++ -*-===//
//
// Each is the CPU kernel's KernelDef (comm/kernels/collective_kernel_defs.h:
// the same name, arity, attribute validation and collective kind) with a
// `run` that keeps the data on the device.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_COLLECTIVES_CUDA_COLLECTIVE_DEFS_H
#define EMBER_CUDA_COLLECTIVES_CUDA_COLLECTIVE_DEFS_H

#include "kernels/kernel_registry.h"

namespace ember::cuda::collectives {

KernelDef kjtAllToAllKernel();
KernelDef pooledAllToAllKernel();
KernelDef sequenceAllToAllKernel();
KernelDef reduceScatterKernel();
KernelDef allGatherKernel();
KernelDef allReduceKernel();

} // namespace ember::cuda::collectives

#endif // EMBER_CUDA_COLLECTIVES_CUDA_COLLECTIVE_DEFS_H
