//===- register_collective_kernels.cpp - The collective kernels -----------===//
#include "comm/kernels/collective_kernel_defs.h"
#include "comm/kernels/collective_kernels.h"

namespace ember {

Status registerCollectiveKernels(KernelRegistry &registry) {
  using namespace collective;
  for (KernelDef (*make)() :
       {kjtAllToAllKernel, pooledAllToAllKernel, sequenceAllToAllKernel,
        reduceScatterKernel, allGatherKernel, allReduceKernel})
    EMBER_RETURN_IF_ERROR(registry.add(make()));
  return Status::ok();
}

} // namespace ember
