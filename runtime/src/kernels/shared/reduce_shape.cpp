//===- reduce_shape.cpp - Checks and shape of the reductions --------------===//
#include "kernels/shared/reduce_shape.h"

#include "kernels/shared/dense_common.h"

#include <string>

namespace ember::cpu {

Status validateReduce(const Attributes &attrs, int, int) {
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *axes,
                         findInts(attrs, "axes"));
  if (!axes)
    return invalidArgument("missing attribute 'axes'");
  return validateBoolAttr(attrs, "keepdims");
}

Result<ReduceShape> reduceShape(KernelContext &ctx, bool emptyExtentIsError) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateReduce(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *axes,
                         findInts(ctx.attrs(), "axes"));
  bool keepdims = *ctx.attrs().getInt("keepdims") != 0;
  ReduceShape s;
  bool *reduced = s.reduced;
  bool all = axes->empty();
  for (int i = 0; i < x.rank(); ++i)
    reduced[i] = all;
  if (!all) {
    for (int64_t a : *axes) {
      EMBER_ASSIGN_OR_RETURN(int axis, normalizeAxis(ctx, a, x.rank(), "axes"));
      if (reduced[axis])
        return kernelError(ctx, "attribute 'axes' names axis " +
                                    std::to_string(a) + " twice");
      reduced[axis] = true;
    }
  }
  int64_t outDims[Shape::kMaxRank];
  int r = 0;
  for (int i = 0; i < x.rank(); ++i) {
    if (!reduced[i])
      outDims[r++] = x.dim(i);
    else if (keepdims)
      outDims[r++] = 1;
    if (reduced[i] && x.dim(i) == 0 && emptyExtentIsError)
      return kernelError(ctx, "reduce_max over the empty axis " +
                                  std::to_string(i) + " of " + x.describe());
  }
  EMBER_ASSIGN_OR_RETURN(s.outShape, Shape::fromDims(outDims, r));
  return s;
}

} // namespace ember::cpu
