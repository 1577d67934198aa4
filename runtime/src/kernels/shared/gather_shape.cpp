//===- gather_shape.cpp - Checks and shapes of gather ops -----------------===//
#include "kernels/shared/gather_shape.h"

#include "kernels/shared/dense_common.h"

#include <string>

namespace ember::cpu {

namespace {

Status requireIndexDType(KernelContext &ctx, const Tensor &indices,
                         const char *op) {
  if (indices.dtype() != DType::kInt64 && indices.dtype() != DType::kInt32)
    return kernelError(ctx, std::string(op) +
                                ": indices must be int32 or int64, got " +
                                indices.describe());
  return Status::ok();
}

} // namespace

Status validateGatherAxis(const Attributes &attrs, int, int) {
  return attrs.getInt("axis").status();
}

Result<GatherShape> gatherShape(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateGatherAxis(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "data"));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "indices"));
  const Tensor &data = ctx.input(0), &indices = ctx.input(1);
  if (data.rank() < 1)
    return kernelError(ctx, "gather: data must have rank >= 1, got " +
                                data.describe());
  EMBER_RETURN_IF_ERROR(requireIndexDType(ctx, indices, "gather"));
  GatherShape s;
  EMBER_ASSIGN_OR_RETURN(
      s.axis,
      normalizeAxis(ctx, *ctx.attrs().getInt("axis"), data.rank(), "axis"));
  const int axis = s.axis;
  int outRank = data.rank() - 1 + indices.rank();
  if (outRank > Shape::kMaxRank)
    return kernelError(ctx, "gather: result rank " + std::to_string(outRank) +
                                " exceeds " + std::to_string(Shape::kMaxRank));
  int64_t dims[Shape::kMaxRank];
  int r = 0;
  for (int i = 0; i < axis; ++i)
    dims[r++] = data.dim(i);
  for (int i = 0; i < indices.rank(); ++i)
    dims[r++] = indices.dim(i);
  for (int i = axis + 1; i < data.rank(); ++i)
    dims[r++] = data.dim(i);
  EMBER_ASSIGN_OR_RETURN(s.outShape, Shape::fromDims(dims, outRank));
  for (int i = 0; i < axis; ++i)
    s.outer *= data.dim(i);
  for (int i = axis + 1; i < data.rank(); ++i)
    s.inner *= data.dim(i);
  return s;
}

Result<int> gatherElementsAxis(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateGatherAxis(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "data"));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "indices"));
  const Tensor &data = ctx.input(0), &indices = ctx.input(1);
  EMBER_RETURN_IF_ERROR(requireIndexDType(ctx, indices, "gather_elements"));
  if (data.rank() < 1 || indices.rank() != data.rank())
    return kernelError(ctx, "gather_elements: indices " + indices.describe() +
                                " must have the rank of data " +
                                data.describe() + " (>= 1)");
  EMBER_ASSIGN_OR_RETURN(
      int axis,
      normalizeAxis(ctx, *ctx.attrs().getInt("axis"), data.rank(), "axis"));
  for (int k = 0; k < data.rank(); ++k)
    if (k != axis && indices.dim(k) > data.dim(k))
      return kernelError(ctx, "gather_elements: indices " + indices.describe() +
                                  " exceed data " + data.describe() +
                                  " along axis " + std::to_string(k));
  return axis;
}

} // namespace ember::cpu
