//===- gather_kernels.cpp - gather, gather_elements on CUDA ---------------===//
//
// kernels/cpu/shape_gather.cpp's contract (attr axis, int32/int64 indices,
// negative indices count from the back, any data dtype). The CPU checks
// every index before writing; here the indices are device memory, so the
// kernel checks each one as it reads it: an index outside [-dim, dim) raises
// kIndexOutOfRange (the run fails with OutOfRange naming the index and its
// position) and its elements are written as zeros, never read out of bounds.
//
//===----------------------------------------------------------------------===//
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/dense_registration.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/gather_shape.h"

namespace ember::cuda::dense {
namespace {

Status gatherKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::GatherShape s, cpu::gatherShape(ctx));
  const Tensor &data = ctx.input(0), &indices = ctx.input(1);
  const int axis = s.axis;
  const int64_t inner = s.inner;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, data.dtype(), s.outShape));
  return cpu::atLocation(
      ctx,
      launchGather(*env, data.data(), indices.data(),
                   indices.dtype() == DType::kInt64, indices.numel(), inner,
                   data.dim(axis), out->data(),
                   static_cast<int>(dtypeSize(data.dtype())), out->numel()));
}

Status gatherElementsKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(int axis, cpu::gatherElementsAxis(ctx));
  const Tensor &data = ctx.input(0), &indices = ctx.input(1);
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out, cpu::allocateOutput(ctx, data.dtype(), indices.shape()));
  int64_t dims[Shape::kMaxRank], strides[Shape::kMaxRank];
  for (int k = 0; k < indices.rank(); ++k)
    dims[k] = indices.dim(k);
  cpu::contiguousStrides(data.shape(), strides);
  return cpu::atLocation(
      ctx, launchGatherElements(*env, data.data(), indices.data(),
                                indices.dtype() == DType::kInt64, dims, strides,
                                data.rank(), axis, data.dim(axis), out->data(),
                                static_cast<int>(dtypeSize(data.dtype())),
                                out->numel()));
}

} // namespace

Status registerGatherKernels(KernelRegistry &r) {
  constexpr const char *kHow =
      "thread per element, bad indices raise a device error";
  return addCudaKernels(r, {{"gather", gatherKernel, kHow},
                            {"gather_elements", gatherElementsKernel, kHow}});
}

} // namespace ember::cuda::dense
