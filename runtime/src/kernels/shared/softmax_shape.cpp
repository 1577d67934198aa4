//===- softmax_shape.cpp - Checks and sizes of softmax --------------------===//
#include "kernels/shared/softmax_shape.h"

#include "kernels/shared/dense_common.h"

namespace ember::cpu {

Status validateSoftmax(const Attributes &attrs, int, int) {
  return attrs.getInt("axis").status();
}

Result<SoftmaxShape> softmaxShape(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateSoftmax(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  if (x.rank() < 1)
    return kernelError(ctx,
                       "softmax: x must have rank >= 1, got " + x.describe());
  SoftmaxShape s;
  EMBER_ASSIGN_OR_RETURN(
      s.axis,
      normalizeAxis(ctx, *ctx.attrs().getInt("axis"), x.rank(), "axis"));
  s.len = x.dim(s.axis);
  for (int i = 0; i < s.axis; ++i)
    s.outer *= x.dim(i);
  for (int i = s.axis + 1; i < x.rank(); ++i)
    s.inner *= x.dim(i);
  return s;
}

} // namespace ember::cpu
