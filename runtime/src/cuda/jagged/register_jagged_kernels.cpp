//===- register_jagged_kernels.cpp - CUDA jagged kernels ----------------------===//
#include "cuda/cuda_kernels.h"

namespace ember::cuda {

Status registerJaggedKernels(KernelRegistry &r) {
  (void)r;
  return Status::ok();
}

} // namespace ember::cuda
