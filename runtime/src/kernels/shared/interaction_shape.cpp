//===- interaction_shape.cpp - Checks and sizes of dot_interaction --------===//
#include "kernels/shared/interaction_shape.h"

#include "kernels/shared/dense_common.h"

#include <string>

namespace ember::cpu {

Status validateInteraction(const Attributes &attrs, int, int) {
  EMBER_ASSIGN_OR_RETURN(int64_t f, attrs.getInt("num_features"));
  if (f < 0)
    return invalidArgument("attribute 'num_features' must be >= 0, got " +
                           std::to_string(f));
  EMBER_RETURN_IF_ERROR(validateBoolAttr(attrs, "self_interaction"));
  EMBER_ASSIGN_OR_RETURN(std::string order, attrs.getString("pair_order"));
  if (order != "dlrm" && order != "torchrec")
    return invalidArgument(
        "attribute 'pair_order' must be dlrm or torchrec, got '" + order + "'");
  return Status::ok();
}

Result<InteractionShape> interactionShape(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(
      atLocation(ctx, validateInteraction(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "dense"));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "sparse"));
  const Tensor &dense = ctx.input(0), &sparse = ctx.input(1);
  int64_t f = *ctx.attrs().getInt("num_features");
  InteractionShape s;
  s.self = *ctx.attrs().getInt("self_interaction") != 0;
  s.torchrecOrder = *ctx.attrs().getString("pair_order") == "torchrec";
  EMBER_RETURN_IF_ERROR(requireRank(ctx, dense, "dot_interaction: dense", 2));
  EMBER_RETURN_IF_ERROR(requireRank(ctx, sparse, "dot_interaction: sparse", 2));
  int64_t b = dense.dim(0), d = dense.dim(1);
  if (sparse.dim(0) != b || sparse.dim(1) != f * d)
    return kernelError(
        ctx, "dot_interaction: sparse must be [" + std::to_string(b) + ", " +
                 std::to_string(f) + " * " + std::to_string(d) +
                 "] (batch, num_features * dense width), got " +
                 sparse.describe() + " with dense " + dense.describe());
  int64_t n = f + 1;
  s.batch = b;
  s.dim = d;
  s.rows = n;
  s.pairs = s.self ? n * (n + 1) / 2 : n * (n - 1) / 2;
  return s;
}

} // namespace ember::cpu
