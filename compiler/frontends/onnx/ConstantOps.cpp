//===- ConstantOps.cpp - Constant, ConstantOfShape, Range -----------------===//

#include "frontends/onnx/IRBuilders.h"
#include "frontends/onnx/OpConverterRegistry.h"
#include "frontends/onnx/ShapeTracking.h"
#include "frontends/onnx/TypeConversion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

LogicalResult defineConstant(ImportContext &ctx, DenseElementsAttr attr) {
  Value value = arith::ConstantOp::create(ctx.builder, ctx.loc(), attr);
  ctx.setConstant(value, attr);
  ctx.setOutput(0, value);
  return success();
}

LogicalResult convertConstant(ImportContext &ctx) {
  const auto &node = ctx.node();
  if (node.attribute_size() != 1)
    return ctx.emitError() << "needs exactly one value attribute";
  const auto &a = node.attribute(0);
  OpBuilder &b = ctx.builder;
  if (a.name() == "value") {
    auto attr = convertTensorProto(a.t(), ctx.getContext(), ctx.loc());
    if (failed(attr))
      return failure();
    return defineConstant(ctx, *attr);
  }
  if (a.name() == "value_float")
    return defineConstant(
        ctx, DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                    a.f()));
  if (a.name() == "value_int")
    return defineConstant(
        ctx, DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                    static_cast<int64_t>(a.i())));
  if (a.name() == "value_floats") {
    llvm::SmallVector<float> v(a.floats().begin(), a.floats().end());
    return defineConstant(
        ctx, DenseElementsAttr::get(
                 RankedTensorType::get({static_cast<int64_t>(v.size())},
                                       b.getF32Type()),
                 llvm::ArrayRef<float>(v)));
  }
  if (a.name() == "value_ints") {
    llvm::SmallVector<int64_t> v(a.ints().begin(), a.ints().end());
    return defineConstant(
        ctx, DenseElementsAttr::get(
                 RankedTensorType::get({static_cast<int64_t>(v.size())},
                                       b.getI64Type()),
                 llvm::ArrayRef<int64_t>(v)));
  }
  return ctx.emitError() << "unsupported attribute '" << a.name() << "'";
}

LogicalResult convertConstantOfShape(ImportContext &ctx) {
  std::optional<ShapeInfo> target = ctx.knownInts(0);
  if (!target)
    return ctx.emitError() << "the shape (input 0) must be known at import "
                              "time (a constant or a Shape chain)";
  OpBuilder &b = ctx.builder;
  DenseElementsAttr fill =
      DenseElementsAttr::get(RankedTensorType::get({1}, b.getF32Type()), 0.0f);
  if (const auto *a = ctx.attr("value")) {
    auto attr = convertTensorProto(a->t(), ctx.getContext(), ctx.loc());
    if (failed(attr))
      return failure();
    if (attr->getNumElements() != 1)
      return ctx.emitError() << "value must hold one element";
    fill = *attr;
  }
  ShapeInfo entries = simplifyShapeInfo(*target);
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<Value> dynamicSizes;
  for (const DimEntry &e : entries) {
    if (e.isConstant()) {
      if (e.constant < 0)
        return ctx.emitError() << "negative dim " << e.constant;
      shape.push_back(e.constant);
    } else {
      shape.push_back(ShapedType::kDynamic);
      dynamicSizes.push_back(
          tensor::DimOp::create(b, ctx.loc(), e.source, e.dim));
    }
  }
  if (!staticElementsWithinLimit(shape))
    return ctx.emitError() << "the shape holds more than 2^48 elements";
  Attribute element = fill.getValues<Attribute>()[0];
  auto type = RankedTensorType::get(shape, fill.getElementType());
  if (dynamicSizes.empty())
    return defineConstant(ctx, DenseElementsAttr::get(type, element));
  Value scalar =
      arith::ConstantOp::create(b, ctx.loc(), cast<TypedAttr>(element));
  ctx.setOutput(
      0, tensor::SplatOp::create(b, ctx.loc(), scalar, type, dynamicSizes));
  return success();
}

LogicalResult convertRange(ImportContext &ctx) {
  Value start = ctx.input(0), limit = ctx.input(1), delta = ctx.input(2);
  if (!start || !limit || !delta)
    return failure();
  DenseElementsAttr s = ctx.getConstant(start), l = ctx.getConstant(limit),
                    d = ctx.getConstant(delta);
  if (!s || !l || !d)
    return ctx.emitError() << "start, limit and delta must be constants "
                              "(a Range over run-time values is not "
                              "supported)";
  Type elementType = s.getElementType();
  auto asDouble = [](DenseElementsAttr a) {
    Attribute v = a.getValues<Attribute>()[0];
    if (auto f = dyn_cast<FloatAttr>(v))
      return f.getValueAsDouble();
    return static_cast<double>(cast<IntegerAttr>(v).getInt());
  };
  double s0 = asDouble(s), l0 = asDouble(l), d0 = asDouble(d);
  if (d0 == 0)
    return ctx.emitError() << "delta is zero";
  int64_t count =
      std::max<int64_t>(static_cast<int64_t>(std::ceil((l0 - s0) / d0)), 0);
  constexpr int64_t kMaxRangeElements = int64_t(1) << 24;
  if (count > kMaxRangeElements)
    return ctx.emitError() << "Range of " << count
                           << " elements is too large to fold at import time";
  auto type = RankedTensorType::get({count}, elementType);
  llvm::SmallVector<Attribute> values;
  OpBuilder &b = ctx.builder;
  for (int64_t i = 0; i < count; ++i) {
    if (isa<FloatType>(elementType))
      values.push_back(b.getFloatAttr(elementType, s0 + i * d0));
    else
      values.push_back(
          b.getIntegerAttr(elementType, static_cast<int64_t>(s0) +
                                            i * static_cast<int64_t>(d0)));
  }
  return defineConstant(ctx, DenseElementsAttr::get(type, values));
}

} // namespace

void registerConstantConverters(OpConverterRegistry &r) {
  r.add(kOnnxDomain, "Constant", convertConstant,
        {"value", "value_float", "value_floats", "value_int", "value_ints",
         "sparse_value", "value_string", "value_strings"});
  r.add(kOnnxDomain, "ConstantOfShape", convertConstantOfShape, {"value"});
  r.add(kOnnxDomain, "Range", convertRange);
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
