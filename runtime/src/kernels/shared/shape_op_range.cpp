//===- shape_op_range.cpp - Checks and range of the shape op --------------===//
#include "kernels/shared/shape_op_range.h"

#include "kernels/shared/dense_common.h"

#include <algorithm>

namespace ember::cpu {

Status validateShape(const Attributes &attrs, int, int) {
  EMBER_RETURN_IF_ERROR(attrs.getInt("start").status());
  return attrs.getInt("end").status();
}

Result<ShapeOpRange> shapeOpRange(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateShape(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  int64_t r = x.rank();
  // ONNX Shape-15 start/end: negative counts from the back, then clamped.
  auto clampIndex = [r](int64_t v) {
    if (v < 0)
      v += r;
    return std::clamp<int64_t>(v, 0, r);
  };
  ShapeOpRange s;
  s.start = clampIndex(*ctx.attrs().getInt("start"));
  int64_t end = clampIndex(*ctx.attrs().getInt("end")); // default INT64_MAX
  s.count = std::max<int64_t>(0, end - s.start);
  return s;
}

} // namespace ember::cpu
