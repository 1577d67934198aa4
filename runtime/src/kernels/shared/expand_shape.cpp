//===- expand_shape.cpp - Checks and output shape of expand ---------------===//
#include "kernels/shared/expand_shape.h"

#include "kernels/shared/broadcast.h"
#include "kernels/shared/dense_common.h"

#include <string>

namespace ember::cpu {

Status validateExpand(const Attributes &attrs, int numInputs, int) {
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *shape,
                         findInts(attrs, "shape"));
  if (!shape && numInputs == 1)
    return invalidArgument("expand needs attribute 'shape' (or a shape input)");
  if (shape)
    for (int64_t d : *shape)
      if (d < 0)
        return invalidArgument(
            "attribute 'shape' of expand has the negative dim " +
            std::to_string(d));
  return Status::ok();
}

Result<Shape> expandShape(KernelContext &ctx,
                          const ExpandShapeInputReader &readShapeInput) {
  EMBER_RETURN_IF_ERROR(
      atLocation(ctx, validateExpand(ctx.attrs(), ctx.numInputs(), 1)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *attr,
                         findInts(ctx.attrs(), "shape"));
  std::vector<int64_t> target;
  if (attr) {
    target = *attr;
  } else {
    EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "shape"));
    const Tensor &s = ctx.input(1);
    if (s.dtype() != DType::kInt64 || s.rank() != 1)
      return kernelError(ctx,
                         "expand: the shape input must be int64 [n], got " +
                             s.describe());
    EMBER_ASSIGN_OR_RETURN(target, readShapeInput(s));
  }
  Result<Shape> targetShape = Shape::fromDims(target.data(), target.size());
  if (!targetShape.isOk()) // keeps its code: a shape too large to hold is
                           // ResourceExhausted
    return Status(targetShape.status().code(),
                  ctx.location() +
                      ": expand: " + targetShape.status().message());
  Shape shapes[2] = {x.shape(), *targetShape};
  Result<Shape> outShape = broadcastShapes(shapes, 2);
  if (!outShape.isOk())
    return kernelError(ctx, "expand: " + outShape.status().message());
  return *outShape;
}

} // namespace ember::cpu
