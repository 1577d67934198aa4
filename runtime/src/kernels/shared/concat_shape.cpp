//===- concat_shape.cpp - Checks and shape of concat ----------------------===//
#include "kernels/shared/concat_shape.h"

#include "kernels/shared/dense_common.h"

#include <string>

namespace ember::cpu {

Status validateConcat(const Attributes &attrs, int, int) {
  return attrs.getInt("axis").status();
}

Result<ConcatShape> concatShape(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateConcat(ctx.attrs(), 0, 0)));
  int count = ctx.numInputs();
  for (int i = 0; i < count; ++i)
    EMBER_RETURN_IF_ERROR(requireInput(ctx, i, "concat operand"));
  const Tensor &first = ctx.input(0);
  if (first.rank() < 1)
    return kernelError(ctx, "concat: inputs must have rank >= 1, got " +
                                first.describe());
  ConcatShape s;
  EMBER_ASSIGN_OR_RETURN(s.axis, normalizeAxis(ctx, *ctx.attrs().getInt("axis"),
                                               first.rank(), "axis"));
  const int axis = s.axis;
  Shape &outShape = s.outShape;
  outShape = first.shape();
  outShape[axis] = 0;
  for (int i = 0; i < count; ++i) {
    const Tensor &t = ctx.input(i);
    bool ok = t.dtype() == first.dtype() && t.rank() == first.rank();
    for (int k = 0; ok && k < t.rank(); ++k)
      ok = k == axis || t.dim(k) == first.dim(k);
    if (!ok)
      return kernelError(ctx, "concat: input " + std::to_string(i) + " " +
                                  t.describe() + " does not match input 0 " +
                                  first.describe() + " outside axis " +
                                  std::to_string(axis));
    outShape[axis] += t.dim(axis);
  }
  for (int k = 0; k < axis; ++k)
    s.outer *= outShape[k];
  for (int k = axis + 1; k < outShape.rank(); ++k)
    s.inner *= outShape[k];
  return s;
}

} // namespace ember::cpu
