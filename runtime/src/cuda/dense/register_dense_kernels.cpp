//===- register_dense_kernels.cpp - CUDA dense kernels
//----------------------===//
#include "cuda/cuda_kernels.h"
#include "cuda/dense/dense_registration.h"

namespace ember::cuda {

Status registerDenseKernels(KernelRegistry &r) {
  for (auto registerFn :
       {dense::registerGemmKernels, dense::registerCrossKernels,
        dense::registerInteractionKernels, dense::registerElementwiseKernels,
        dense::registerCastKernels, dense::registerConcatKernels,
        dense::registerNormKernels, dense::registerReduceKernels,
        dense::registerShapeKernels, dense::registerGatherKernels,
        dense::registerViewKernels})
    EMBER_RETURN_IF_ERROR(registerFn(r));
  return Status::ok();
}

} // namespace ember::cuda
