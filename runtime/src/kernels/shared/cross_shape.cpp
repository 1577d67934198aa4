//===- cross_shape.cpp - Checks and sizes of dcn_cross --------------------===//
#include "kernels/shared/cross_shape.h"

#include "kernels/shared/dense_common.h"

#include <string>

namespace ember::cpu {

Status validateCross(const Attributes &attrs, int numInputs, int) {
  EMBER_RETURN_IF_ERROR(validateBoolAttr(attrs, "low_rank"));
  bool lowRank = *attrs.getInt("low_rank") != 0;
  int minInputs = lowRank ? 4 : 3, maxInputs = lowRank ? 5 : 4;
  if (numInputs != 0 && (numInputs < minInputs || numInputs > maxInputs))
    return invalidArgument(
        std::string("dcn_cross") +
        (lowRank ? " (low_rank) takes x0, xl, V, W and an optional bias"
                 : " takes x0, xl, weight and an optional bias") +
        ", got " + std::to_string(numInputs) + " inputs");
  return Status::ok();
}

Result<CrossShape> crossShape(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(
      atLocation(ctx, validateCross(ctx.attrs(), ctx.numInputs(), 1)));
  bool lowRank = *ctx.attrs().getInt("low_rank") != 0;
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x0"));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "xl"));
  const Tensor &x0 = ctx.input(0), &xl = ctx.input(1);
  EMBER_RETURN_IF_ERROR(requireRank(ctx, x0, "dcn_cross: x0", 2));
  if (xl.shape() != x0.shape())
    return kernelError(ctx, "dcn_cross: xl " + xl.describe() +
                                " must have the shape of x0 " + x0.describe());
  int64_t d = x0.dim(1);
  int biasIndex = lowRank ? 4 : 3;
  const Tensor *bias =
      ctx.numInputs() > biasIndex && ctx.input(biasIndex).defined()
          ? &ctx.input(biasIndex)
          : nullptr;
  if (bias &&
      !(bias->numel() == d &&
        (bias->rank() == 1 || (bias->rank() == 2 && bias->dim(1) == 1))))
    return kernelError(ctx, "dcn_cross: bias must be [" + std::to_string(d) +
                                "] or [" + std::to_string(d) + ", 1], got " +
                                bias->describe());
  int64_t rank = 0;
  if (lowRank) {
    EMBER_RETURN_IF_ERROR(requireInput(ctx, 2, "V"));
    EMBER_RETURN_IF_ERROR(requireInput(ctx, 3, "W"));
    const Tensor &v = ctx.input(2), &w = ctx.input(3);
    rank = v.rank() == 2 ? v.dim(0) : -1;
    if (v.rank() != 2 || v.dim(1) != d)
      return kernelError(ctx, "dcn_cross: V must be [r, " + std::to_string(d) +
                                  "], got " + v.describe());
    if (w.rank() != 2 || w.dim(0) != d || w.dim(1) != rank)
      return kernelError(ctx, "dcn_cross: W must be [" + std::to_string(d) +
                                  ", " + std::to_string(rank) +
                                  "] (D, r of V), got " + w.describe());
  } else {
    EMBER_RETURN_IF_ERROR(requireInput(ctx, 2, "weight"));
    const Tensor &w = ctx.input(2);
    if (w.rank() != 2 || w.dim(0) != d || w.dim(1) != d)
      return kernelError(ctx, "dcn_cross: weight must be [" +
                                  std::to_string(d) + ", " + std::to_string(d) +
                                  "], got " + w.describe());
  }
  CrossShape s;
  s.lowRank = lowRank;
  s.batch = x0.dim(0);
  s.dim = d;
  s.rank = rank;
  s.bias = bias;
  return s;
}

} // namespace ember::cpu
