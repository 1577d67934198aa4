//===- register_cuda_collective_kernels.cpp - CUDA collective kernels -----===//
#include "cuda/collectives/cuda_collective_defs.h"
#include "cuda/cuda_kernels.h"

namespace ember::cuda {

Status registerCollectiveKernels(KernelRegistry &r) {
  using namespace collectives;
  for (KernelDef (*make)() :
       {kjtAllToAllKernel, pooledAllToAllKernel, sequenceAllToAllKernel,
        reduceScatterKernel, allGatherKernel, allReduceKernel})
    EMBER_RETURN_IF_ERROR(r.add(make()));
  return Status::ok();
}

} // namespace ember::cuda
