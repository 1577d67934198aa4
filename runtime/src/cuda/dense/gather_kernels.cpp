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
#include "kernels/cpu/dense_common.h"

namespace ember::cuda::dense {
namespace {

Status requireIndexDType(KernelContext &ctx, const Tensor &indices,
                         const char *op) {
  if (indices.dtype() != DType::kInt64 && indices.dtype() != DType::kInt32)
    return cpu::kernelError(ctx, std::string(op) +
                                     ": indices must be int32 or int64, got " +
                                     indices.describe());
  return Status::ok();
}

Status gatherKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(const KernelDef *cpuDef, cpuKernelDef("gather"));
  EMBER_RETURN_IF_ERROR(
      cpu::atLocation(ctx, cpuDef->validate(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 0, "data"));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 1, "indices"));
  const Tensor &data = ctx.input(0), &indices = ctx.input(1);
  if (data.rank() < 1)
    return cpu::kernelError(ctx, "gather: data must have rank >= 1, got " +
                                     data.describe());
  EMBER_RETURN_IF_ERROR(requireIndexDType(ctx, indices, "gather"));
  EMBER_ASSIGN_OR_RETURN(int axis,
                         cpu::normalizeAxis(ctx, ctx.attrs().getInt("axis", 0),
                                            data.rank(), "axis"));
  int outRank = data.rank() - 1 + indices.rank();
  if (outRank > Shape::kMaxRank)
    return cpu::kernelError(ctx, "gather: result rank " +
                                     std::to_string(outRank) + " exceeds " +
                                     std::to_string(Shape::kMaxRank));
  int64_t dims[Shape::kMaxRank];
  int r = 0;
  for (int i = 0; i < axis; ++i)
    dims[r++] = data.dim(i);
  for (int i = 0; i < indices.rank(); ++i)
    dims[r++] = indices.dim(i);
  for (int i = axis + 1; i < data.rank(); ++i)
    dims[r++] = data.dim(i);
  EMBER_ASSIGN_OR_RETURN(Shape outShape, Shape::fromDims(dims, outRank));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, data.dtype(), outShape));
  int64_t inner = 1;
  for (int i = axis + 1; i < data.rank(); ++i)
    inner *= data.dim(i);
  return cpu::atLocation(
      ctx,
      launchGather(*env, data.data(), indices.data(),
                   indices.dtype() == DType::kInt64, indices.numel(), inner,
                   data.dim(axis), out->data(),
                   static_cast<int>(dtypeSize(data.dtype())), out->numel()));
}

Status gatherElementsKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(const KernelDef *cpuDef,
                         cpuKernelDef("gather_elements"));
  EMBER_RETURN_IF_ERROR(
      cpu::atLocation(ctx, cpuDef->validate(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 0, "data"));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 1, "indices"));
  const Tensor &data = ctx.input(0), &indices = ctx.input(1);
  EMBER_RETURN_IF_ERROR(requireIndexDType(ctx, indices, "gather_elements"));
  if (data.rank() < 1 || indices.rank() != data.rank())
    return cpu::kernelError(
        ctx, "gather_elements: indices " + indices.describe() +
                 " must have the rank of data " + data.describe() + " (>= 1)");
  EMBER_ASSIGN_OR_RETURN(int axis,
                         cpu::normalizeAxis(ctx, ctx.attrs().getInt("axis", 0),
                                            data.rank(), "axis"));
  for (int k = 0; k < data.rank(); ++k)
    if (k != axis && indices.dim(k) > data.dim(k))
      return cpu::kernelError(ctx, "gather_elements: indices " +
                                       indices.describe() + " exceed data " +
                                       data.describe() + " along axis " +
                                       std::to_string(k));
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
  EMBER_ASSIGN_OR_RETURN(
      KernelDef gather,
      cudaDefLike("gather", gatherKernel,
                  "thread per element, bad indices raise a device error"));
  EMBER_RETURN_IF_ERROR(r.add(std::move(gather)));
  EMBER_ASSIGN_OR_RETURN(
      KernelDef elements,
      cudaDefLike("gather_elements", gatherElementsKernel,
                  "thread per element, bad indices raise a device error"));
  return r.add(std::move(elements));
}

} // namespace ember::cuda::dense
