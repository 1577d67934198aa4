//===- reduce_kernels.cpp - reduce_sum, reduce_max on CUDA ----------------===//
//
// kernels/cpu/dense_reduce.cpp's contract (attr axes, keepdims; float32
// out; reduce_max over an empty extent is an error, sum of nothing 0). A
// warp per output element (reduce.cu, reduce_device.cuh).
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/dense_registration.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/reduce_shape.h"

namespace ember::cuda::dense {
namespace {

template <int Op> Status reduceKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::ReduceShape s,
                         cpu::reduceShape(ctx, Op == kReduceMax));
  const Tensor &x = ctx.input(0);
  const bool *reduced = s.reduced;
  const Shape &outShape = s.outShape;
  EMBER_ASSIGN_OR_RETURN(const float *in, deviceFloatInput(ctx, x, "x"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, DType::kFloat32, outShape));
  int64_t outCount = outShape.numel();
  if (outCount == 0)
    return Status::ok();
  if (x.numel() == 0) // an empty reduced extent: sums are 0 (max was refused)
    return cpu::atLocation(ctx,
                           launchFill(*env, out->data<float>(), 0.f, outCount));
  int64_t dims[Shape::kMaxRank];
  for (int i = 0; i < x.rank(); ++i)
    dims[i] = x.dim(i);
  ReduceIndex ix = makeReduceIndex(dims, x.rank(), reduced);
  return cpu::atLocation(ctx,
                         launchReduce(*env, in, out->data<float>(), ix, Op));
}

} // namespace

Status registerReduceKernels(KernelRegistry &r) {
  return addCudaKernels(
      r, {{"reduce_sum", reduceKernel<kReduceSum>, "warp per output"},
          {"reduce_max", reduceKernel<kReduceMax>, "warp per output"}});
}

} // namespace ember::cuda::dense
