//===- layer_norm_shape.cpp - Checks and sizes of layer_norm --------------===//
#include "kernels/shared/layer_norm_shape.h"

#include "kernels/shared/dense_common.h"

#include <string>

namespace ember::cpu {

Status validateLayerNorm(const Attributes &attrs, int, int) {
  EMBER_RETURN_IF_ERROR(attrs.getInt("axis").status());
  EMBER_ASSIGN_OR_RETURN(double eps, attrs.getFloat("epsilon"));
  if (!(eps >= 0))
    return invalidArgument("attribute 'epsilon' must be >= 0, got " +
                           std::to_string(eps));
  return Status::ok();
}

Result<LayerNormShape> layerNormShape(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateLayerNorm(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  if (x.rank() < 1)
    return kernelError(ctx, "layer_norm: x must have rank >= 1, got " +
                                x.describe());
  LayerNormShape s;
  EMBER_ASSIGN_OR_RETURN(
      s.axis,
      normalizeAxis(ctx, *ctx.attrs().getInt("axis"), x.rank(), "axis"));
  s.epsilon = static_cast<float>(*ctx.attrs().getFloat("epsilon"));
  for (int i = 0; i < s.axis; ++i)
    s.rows *= x.dim(i);
  for (int i = s.axis; i < x.rank(); ++i)
    s.d *= x.dim(i);
  return s;
}

Status checkAffine(KernelContext &ctx, const Tensor &t, const char *name,
                   const Tensor &x, int axis, int64_t d) {
  bool ok = t.numel() == d;
  if (ok && t.rank() != 1) {
    ok = t.rank() == x.rank() - axis;
    for (int i = 0; ok && i < t.rank(); ++i)
      ok = t.dim(i) == x.dim(axis + i);
  }
  if (!ok)
    return kernelError(ctx,
                       std::string("layer_norm: ") + name + " " + t.describe() +
                           " does not match the normalized dims of x " +
                           x.describe() + " from axis " + std::to_string(axis));
  return Status::ok();
}

} // namespace ember::cpu
