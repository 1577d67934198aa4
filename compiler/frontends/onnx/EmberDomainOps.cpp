//===- EmberDomainOps.cpp - The 'ember' custom ONNX domain ----------------===//
//
// Nodes the PyTorch frontend emits for what ONNX lacks. Documented (names,
// inputs, attributes) in docs/frontend-onnx.md.
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberTypes.h"
#include "frontends/onnx/IRBuilders.h"
#include "frontends/onnx/OpConverterRegistry.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

/// ember.EmbeddingBag(weight [R, D], indices [N], offsets [B or B+1]
///                    [, per_sample_weights [N]]) -> [B, D]
/// attributes: mode ("sum" | "mean" | "max", default "sum"),
///             padding_idx (int, optional), include_last_offset (0 | 1).
LogicalResult convertEmbeddingBag(ImportContext &ctx) {
  Value weight = ctx.input(0), indices = ctx.input(1), offsets = ctx.input(2);
  if (!weight || !indices || !offsets)
    return failure();
  Value perSampleWeights;
  if (ctx.hasInput(3) && !(perSampleWeights = ctx.input(3)))
    return failure();
  for (Value v : {indices, offsets}) {
    auto type = tensorTypeOf(v);
    if (type.getRank() != 1 || !(type.getElementType().isInteger(32) ||
                                 type.getElementType().isInteger(64)))
      return ctx.emitError()
             << "indices and offsets must be 1-D i32/i64, got " << v.getType();
  }
  if (perSampleWeights &&
      (tensorTypeOf(perSampleWeights).getRank() != 1 ||
       !isa<FloatType>(tensorTypeOf(perSampleWeights).getElementType())))
    return ctx.emitError() << "per_sample_weights must be 1-D float, got "
                           << perSampleWeights.getType();
  auto weightType = tensorTypeOf(weight);
  if (weightType.getRank() != 2 || !weightType.hasStaticShape())
    return ctx.emitError() << "weight must be a static 2-D tensor, got "
                           << weight.getType();
  TableFormat format;
  Type elementType = weightType.getElementType();
  if (elementType.isF32())
    format = TableFormat::f32;
  else if (elementType.isF16())
    format = TableFormat::f16;
  else if (elementType.isBF16())
    format = TableFormat::bf16;
  else
    return ctx.emitError() << "weight element type " << elementType
                           << " is not a table format (f32, f16, bf16)";
  std::string mode = ctx.stringAttr("mode", "sum");
  std::optional<PoolingMode> pooling = symbolizePoolingMode(mode);
  if (!pooling)
    return ctx.emitError() << "unsupported mode '" << mode
                           << "' (sum, mean or max)";
  int64_t rows = weightType.getDimSize(0), dim = weightType.getDimSize(1);
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  IntegerAttr paddingIdx;
  if (const auto *a = ctx.attr("padding_idx")) {
    int64_t p = a->i();
    if (p < 0)
      p += rows;
    if (p < 0 || p >= rows)
      return ctx.emitError() << "padding_idx " << a->i()
                             << " is outside the table of " << rows << " rows";
    paddingIdx = b.getI64IntegerAttr(p);
  }
  int64_t includeLast = ctx.intAttr("include_last_offset", 0);
  if (includeLast != 0 && includeLast != 1)
    return ctx.emitError() << "include_last_offset must be 0 or 1";
  int64_t bags = tensorTypeOf(offsets).getRank() == 1
                     ? tensorTypeOf(offsets).getDimSize(0)
                     : ShapedType::kDynamic;
  if (includeLast && !ShapedType::isDynamic(bags))
    bags -= 1;
  auto tableType = TableType::get(ctx.getContext(), rows, dim, format);
  Value table = TableFromTensorOp::create(b, loc, tableType, weight);
  auto resultType = RankedTensorType::get({bags, dim}, elementType);
  ctx.setOutput(0, EmbeddingBagOp::create(
                       b, loc, resultType, table, indices, offsets,
                       perSampleWeights,
                       PoolingModeAttr::get(ctx.getContext(), *pooling),
                       paddingIdx, includeLast ? b.getUnitAttr() : UnitAttr()));
  return success();
}

} // namespace

void registerEmberDomainConverters(OpConverterRegistry &r) {
  r.add(kEmberDomain, "EmbeddingBag", convertEmbeddingBag,
        {"mode", "padding_idx", "include_last_offset"});
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
