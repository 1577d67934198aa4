//===- cuda_collective_defs.h - The CUDA collective kernels -----*- C++ -*-===//
//
// The run functions of the CUDA collective kernels, which keep the data on
// the device. register_cuda_collective_kernels.cpp registers each with the
// CPU kernel's KernelDef (comm/kernels/collective_kernel_defs.h: the same
// name, arity, attribute validation and collective kind).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_COLLECTIVES_CUDA_COLLECTIVE_DEFS_H
#define EMBER_CUDA_COLLECTIVES_CUDA_COLLECTIVE_DEFS_H

#include "ember/status.h"

namespace ember {
class KernelContext;
namespace cuda::collectives {

Status runKjtAllToAll(KernelContext &ctx);
Status runPooledAllToAll(KernelContext &ctx);
Status runSequenceAllToAll(KernelContext &ctx);
Status runReduceScatter(KernelContext &ctx);
Status runAllGather(KernelContext &ctx);
Status runAllReduce(KernelContext &ctx);

} // namespace cuda::collectives
} // namespace ember

#endif // EMBER_CUDA_COLLECTIVES_CUDA_COLLECTIVE_DEFS_H
