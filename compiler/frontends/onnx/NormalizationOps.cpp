//===- NormalizationOps.cpp - LayerNormalization
//---------------------------===//
//
// y = (x - mean) * rsqrt(var + epsilon) * scale + bias over the dims from
// `axis` on, with mean and (biased) variance from tosa.reduce_sum / N.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/IRBuilders.h"
#include "frontends/onnx/OpConverterRegistry.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

Value meanOver(OpBuilder &b, Location loc, Value v, int64_t from,
               double inverseCount) {
  auto type = tensorTypeOf(v);
  Value sum = v;
  for (int64_t a = from; a < type.getRank(); ++a) {
    llvm::SmallVector<int64_t> shape(tensorTypeOf(sum).getShape());
    shape[a] = 1;
    sum = tosa::ReduceSumOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), sum,
        b.getI32IntegerAttr(a));
  }
  return createMul(b, loc, sum,
                   scalarConstant(b, loc, type.getElementType(), inverseCount,
                                  type.getRank()));
}

LogicalResult convertLayerNormalization(ImportContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1);
  if (!x || !scale)
    return failure();
  if (failed(ctx.checkNoOutputsFrom(1)))
    return failure();
  auto type = tensorTypeOf(x);
  int64_t rank = type.getRank();
  int64_t axis = ctx.intAttr("axis", -1);
  if (axis < -rank || axis >= rank)
    return ctx.emitError() << "axis " << axis << " is out of range";
  if (axis < 0)
    axis += rank;
  if (ctx.intAttr("stash_type", 1) != 1)
    return ctx.emitError() << "stash_type " << ctx.intAttr("stash_type", 1)
                           << " is not supported (only 1, float)";
  if (!type.getElementType().isF32())
    return ctx.emitError() << "only f32 inputs are supported";
  int64_t count = 1;
  for (int64_t a = axis; a < rank; ++a) {
    if (type.isDynamicDim(a))
      return ctx.emitError() << "normalized dim " << a << " must be static";
    count *= type.getDimSize(a);
  }
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  Type f32 = type.getElementType();
  double inverseCount = 1.0 / static_cast<double>(count);
  Value mean = meanOver(b, loc, x, axis, inverseCount);
  Value centered = tosa::SubOp::create(b, loc, type, x, mean);
  Value squares = createMul(b, loc, centered, centered);
  Value variance = meanOver(b, loc, squares, axis, inverseCount);
  Value epsilon =
      scalarConstant(b, loc, f32, ctx.floatAttr("epsilon", 1e-5f), rank);
  Value shifted =
      tosa::AddOp::create(b, loc, variance.getType(), variance, epsilon);
  Value inverseStd = tosa::RsqrtOp::create(b, loc, shifted.getType(), shifted);
  Value result = createMul(b, loc, centered, inverseStd);
  result = createMul(b, loc, result, scale);
  if (!result)
    return ctx.emitError() << "Scale " << scale.getType()
                           << " does not broadcast to " << x.getType();
  if (ctx.hasInput(2)) {
    Value bias = ctx.input(2);
    if (!bias)
      return failure();
    result = createBroadcastBinary<tosa::AddOp>(b, loc, result, bias, f32);
    if (!result)
      return ctx.emitError() << "B " << bias.getType()
                             << " does not broadcast to " << x.getType();
  }
  ctx.setOutput(0, result);
  return success();
}

} // namespace

void registerNormalizationConverters(OpConverterRegistry &r) {
  r.add(kOnnxDomain, "LayerNormalization", convertLayerNormalization,
        {"axis", "epsilon", "stash_type"});
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
