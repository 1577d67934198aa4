//===- ElementwiseOps.cpp - Arithmetic, activations, compare, cast --------===//
//
// Add/Sub/Mul/Div, Relu/Sigmoid/Tanh/Exp/Log/Abs/Neg,
// Equal/Greater/Less(OrEqual), Where, Cast, Identity. Integer ops over small
// constants fold at import time (ConstantFolding.h). Binary ops broadcast
// numpy-style: lower-rank operands get leading unit dims (tensor.expand_shape),
// tosa broadcasts unit dims.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ConstantFolding.h"
#include "frontends/onnx/IRBuilders.h"
#include "frontends/onnx/OpConverterRegistry.h"
#include "frontends/onnx/TypeConversion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

#include <limits>

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

LogicalResult broadcastError(ImportContext &ctx, Value lhs, Value rhs) {
  return ctx.emitError() << "operand shapes " << lhs.getType() << " and "
                         << rhs.getType() << " do not broadcast";
}

template <typename OpT, FoldKind kind>
LogicalResult convertBinary(ImportContext &ctx) {
  if (tryFoldIntegerOp(ctx, kind))
    return success();
  Value lhs = ctx.input(0), rhs = ctx.input(1);
  if (!lhs || !rhs)
    return failure();
  Value result = createBroadcastBinary<OpT>(ctx.builder, ctx.loc(), lhs, rhs,
                                            tensorTypeOf(lhs).getElementType());
  if (!result)
    return broadcastError(ctx, lhs, rhs);
  ctx.setOutput(0, result);
  return success();
}

LogicalResult convertMul(ImportContext &ctx) {
  if (tryFoldIntegerOp(ctx, FoldKind::Mul))
    return success();
  Value lhs = ctx.input(0), rhs = ctx.input(1);
  if (!lhs || !rhs)
    return failure();
  Value result = createMul(ctx.builder, ctx.loc(), lhs, rhs);
  if (!result)
    return broadcastError(ctx, lhs, rhs);
  ctx.setOutput(0, result);
  return success();
}

LogicalResult convertDiv(ImportContext &ctx) {
  if (tryFoldIntegerOp(ctx, FoldKind::Div))
    return success();
  Value lhs = ctx.input(0), rhs = ctx.input(1);
  if (!lhs || !rhs)
    return failure();
  OpBuilder &b = ctx.builder;
  Type elementType = tensorTypeOf(lhs).getElementType();
  if (isa<FloatType>(elementType)) {
    // a / b as a * (1 / b): tosa has no float division. The reciprocal
    // rounds once more than a true division (at most 1 ulp apart).
    Value reciprocal =
        tosa::ReciprocalOp::create(b, ctx.loc(), rhs.getType(), rhs);
    Value result = createMul(b, ctx.loc(), lhs, reciprocal);
    if (!result)
      return broadcastError(ctx, lhs, rhs);
    ctx.setOutput(0, result);
    return success();
  }
  // Integer division truncates toward zero, like arith.divsi; it needs
  // operands of one shape (broadcast through a zero add).
  if (lhs.getType() != rhs.getType())
    return ctx.emitError() << "integer Div needs operands of one type, got "
                           << lhs.getType() << " and " << rhs.getType();
  ctx.setOutput(0, arith::DivSIOp::create(b, ctx.loc(), lhs, rhs));
  return success();
}

LogicalResult convertRelu(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  OpBuilder &b = ctx.builder;
  Type elementType = tensorTypeOf(x).getElementType();
  Attribute minVal, maxVal;
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    minVal = b.getFloatAttr(floatType, 0.0);
    maxVal = b.getFloatAttr(floatType,
                            APFloat::getLargest(floatType.getFloatSemantics()));
  } else {
    unsigned width = elementType.getIntOrFloatBitWidth();
    minVal = b.getIntegerAttr(elementType, 0);
    maxVal = b.getIntegerAttr(elementType, APInt::getSignedMaxValue(width));
  }
  ctx.setOutput(
      0, tosa::ClampOp::create(b, ctx.loc(), x.getType(), x, minVal, maxVal));
  return success();
}

template <typename OpT> LogicalResult convertUnary(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  ctx.setOutput(0, OpT::create(ctx.builder, ctx.loc(), x.getType(), x));
  return success();
}

LogicalResult convertNeg(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  Type elementType = tensorTypeOf(x).getElementType();
  Value zp = zeroTensor1D(ctx.builder, ctx.loc(), elementType);
  ctx.setOutput(0, tosa::NegateOp::create(ctx.builder, ctx.loc(), x.getType(),
                                          x, zp, zp));
  return success();
}

LogicalResult convertEqual(ImportContext &ctx) {
  if (tryFoldIntegerOp(ctx, FoldKind::Equal))
    return success();
  Value lhs = ctx.input(0), rhs = ctx.input(1);
  if (!lhs || !rhs)
    return failure();
  Value result = createBroadcastBinary<tosa::EqualOp>(
      ctx.builder, ctx.loc(), lhs, rhs, ctx.builder.getI1Type());
  if (!result)
    return broadcastError(ctx, lhs, rhs);
  ctx.setOutput(0, result);
  return success();
}

/// Greater/Less(OrEqual): tosa.greater(_equal), operands swapped for Less.
template <typename OpT, bool swap>
LogicalResult convertCompare(ImportContext &ctx) {
  Value lhs = ctx.input(0), rhs = ctx.input(1);
  if (!lhs || !rhs)
    return failure();
  if (swap)
    std::swap(lhs, rhs);
  Value result = createBroadcastBinary<OpT>(ctx.builder, ctx.loc(), lhs, rhs,
                                            ctx.builder.getI1Type());
  if (!result)
    return broadcastError(ctx, lhs, rhs);
  ctx.setOutput(0, result);
  return success();
}

LogicalResult convertWhere(ImportContext &ctx) {
  if (tryFoldIntegerOp(ctx, FoldKind::Where))
    return success();
  Value cond = ctx.input(0), x = ctx.input(1), y = ctx.input(2);
  if (!cond || !x || !y)
    return failure();
  OpBuilder &b = ctx.builder;
  int64_t rank =
      std::max({tensorTypeOf(cond).getRank(), tensorTypeOf(x).getRank(),
                tensorTypeOf(y).getRank()});
  cond = expandToRank(b, ctx.loc(), cond, rank);
  x = expandToRank(b, ctx.loc(), x, rank);
  y = expandToRank(b, ctx.loc(), y, rank);
  auto xy =
      broadcastShapes(tensorTypeOf(x).getShape(), tensorTypeOf(y).getShape());
  FailureOr<llvm::SmallVector<int64_t>> shape = failure();
  if (succeeded(xy))
    shape = broadcastShapes(*xy, tensorTypeOf(cond).getShape());
  if (failed(shape))
    return ctx.emitError() << "operand shapes do not broadcast";
  auto type = RankedTensorType::get(*shape, tensorTypeOf(x).getElementType());
  ctx.setOutput(0, tosa::SelectOp::create(b, ctx.loc(), type, cond, x, y));
  return success();
}

LogicalResult convertCast(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  int64_t to = ctx.intAttr("to", 0);
  Type target = convertElementType(ctx.getContext(), to);
  if (!target)
    return ctx.emitError() << "unsupported target type " << onnxTypeName(to);
  auto type = tensorTypeOf(x);
  Type source = type.getElementType();
  auto resultType = type.clone(target);
  // Integer/bool constants (torch's loop conditions, shape values) fold.
  if (DenseElementsAttr attr = ctx.getConstant(x);
      attr && source.isSignlessInteger() && target.isSignlessInteger() &&
      attr.getNumElements() <= (1 << 16)) {
    unsigned width = target.getIntOrFloatBitWidth();
    llvm::SmallVector<APInt> values;
    for (const APInt &v : attr.getValues<APInt>())
      values.push_back(width == 1            ? APInt(1, !v.isZero())
                       : source.isInteger(1) ? v.zext(width)
                                             : v.sextOrTrunc(width));
    auto folded = DenseElementsAttr::get(resultType, values);
    Value c = arith::ConstantOp::create(b, loc, folded);
    ctx.setConstant(c, folded);
    ctx.setOutput(0, c);
    return success();
  }
  Value result;
  // arith casts follow ONNX exactly: float -> int truncates toward zero,
  // anything -> bool is `!= 0`, bool -> number is 0/1.
  if (source == target) {
    result = x;
  } else if (target.isInteger(1)) {
    if (isa<FloatType>(source)) {
      Value zero = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(type, b.getFloatAttr(source, 0.0)));
      result =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x, zero);
    } else {
      Value zero = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(type, b.getIntegerAttr(source, 0)));
      result = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero);
    }
  } else if (source.isInteger(1)) {
    result = isa<FloatType>(target)
                 ? arith::UIToFPOp::create(b, loc, resultType, x).getResult()
                 : arith::ExtUIOp::create(b, loc, resultType, x).getResult();
  } else if (isa<FloatType>(source) && isa<FloatType>(target)) {
    if (source.getIntOrFloatBitWidth() < target.getIntOrFloatBitWidth())
      result = arith::ExtFOp::create(b, loc, resultType, x);
    else
      result = arith::TruncFOp::create(b, loc, resultType, x);
  } else if (isa<FloatType>(source)) {
    result = arith::FPToSIOp::create(b, loc, resultType, x);
  } else if (isa<FloatType>(target)) {
    result = arith::SIToFPOp::create(b, loc, resultType, x);
  } else if (source.getIntOrFloatBitWidth() < target.getIntOrFloatBitWidth()) {
    result = arith::ExtSIOp::create(b, loc, resultType, x);
  } else if (source.getIntOrFloatBitWidth() > target.getIntOrFloatBitWidth()) {
    result = arith::TruncIOp::create(b, loc, resultType, x);
  } else {
    return ctx.emitError() << "unsupported cast from " << source << " to "
                           << target;
  }
  // A cast to int64 keeps a shape-like value known.
  if (auto info = ctx.getShapeInfo(x); info && target.isInteger(64))
    ctx.setShapeInfo(result, *info);
  ctx.setOutput(0, result);
  return success();
}

LogicalResult convertIdentity(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  ctx.setOutput(0, x);
  return success();
}

} // namespace

void registerElementwiseConverters(OpConverterRegistry &r) {
  r.add(kOnnxDomain, "Add", convertBinary<tosa::AddOp, FoldKind::Add>);
  r.add(kOnnxDomain, "Sub", convertBinary<tosa::SubOp, FoldKind::Sub>);
  r.add(kOnnxDomain, "Mul", convertMul);
  r.add(kOnnxDomain, "Div", convertDiv);
  r.add(kOnnxDomain, "Relu", convertRelu);
  r.add(kOnnxDomain, "Sigmoid", convertUnary<tosa::SigmoidOp>);
  r.add(kOnnxDomain, "Tanh", convertUnary<tosa::TanhOp>);
  r.add(kOnnxDomain, "Exp", convertUnary<tosa::ExpOp>);
  r.add(kOnnxDomain, "Log", convertUnary<tosa::LogOp>);
  r.add(kOnnxDomain, "Abs", convertUnary<tosa::AbsOp>);
  r.add(kOnnxDomain, "Neg", convertNeg);
  r.add(kOnnxDomain, "Equal", convertEqual);
  r.add(kOnnxDomain, "Greater", convertCompare<tosa::GreaterOp, false>);
  r.add(kOnnxDomain, "GreaterOrEqual",
        convertCompare<tosa::GreaterEqualOp, false>);
  r.add(kOnnxDomain, "Less", convertCompare<tosa::GreaterOp, true>);
  r.add(kOnnxDomain, "LessOrEqual", convertCompare<tosa::GreaterEqualOp, true>);
  r.add(kOnnxDomain, "Where", convertWhere);
  r.add(kOnnxDomain, "Cast", convertCast, {"to"});
  r.add(kOnnxDomain, "Identity", convertIdentity);
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
