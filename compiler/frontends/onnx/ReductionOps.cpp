//===- ReductionOps.cpp - ReduceSum/Mean/Max and Softmax ------------------===//
//
// One tosa.reduce_* per reduced axis (tosa keeps reduced dims as 1); keepdims
// = 0 drops them afterwards. ReduceMean multiplies by 1/N (N static).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/IRBuilders.h"
#include "frontends/onnx/OpConverterRegistry.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

enum class ReduceKind { Sum, Mean, Max };

template <typename OpT>
Value reduceAxis(OpBuilder &b, Location loc, Value v, int64_t axis) {
  auto type = tensorTypeOf(v);
  llvm::SmallVector<int64_t> shape(type.getShape());
  shape[axis] = 1;
  return OpT::create(b, loc,
                     RankedTensorType::get(shape, type.getElementType()), v,
                     b.getI32IntegerAttr(axis))
      .getResult();
}

template <ReduceKind kind> LogicalResult convertReduce(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = tensorTypeOf(x);
  int64_t rank = type.getRank();
  llvm::SmallVector<int64_t> axes;
  if (auto attr = ctx.intsAttr("axes")) {
    axes = *attr;
  } else if (ctx.hasInput(1)) {
    auto values = ctx.constantInts(1, "axes");
    if (failed(values))
      return failure();
    axes = *values;
  }
  if (axes.empty()) {
    if (ctx.intAttr("noop_with_empty_axes", 0)) {
      ctx.setOutput(0, x);
      return success();
    }
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  for (int64_t &a : axes) {
    if (a < -rank || a >= rank)
      return ctx.emitError() << "axis " << a << " is out of range";
    if (a < 0)
      a += rank;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  if (rank == 0)
    return ctx.emitError() << "reducing a scalar is not supported";
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  Value result = x;
  int64_t count = 1;
  for (int64_t a : axes) {
    if (kind == ReduceKind::Max)
      result = reduceAxis<tosa::ReduceMaxOp>(b, loc, result, a);
    else
      result = reduceAxis<tosa::ReduceSumOp>(b, loc, result, a);
    count = ShapedType::isDynamic(type.getDimSize(a)) || count < 0
                ? -1
                : count * type.getDimSize(a);
  }
  if (kind == ReduceKind::Mean) {
    Type elementType = type.getElementType();
    if (!isa<FloatType>(elementType))
      return ctx.emitError() << "ReduceMean needs a floating-point input";
    Value inverse;
    if (count >= 0) {
      inverse = scalarConstant(b, loc, elementType,
                               1.0 / static_cast<double>(count), rank);
    } else {
      // Element count known at run time (torch's mean bags): 1 / N as a
      // [1, ..., 1] tensor. An empty reduction gives NaN, as in ONNX.
      Value n = arith::ConstantIndexOp::create(b, loc, 1);
      for (int64_t a : axes)
        n = arith::MulIOp::create(
            b, loc, n,
            getValueOrCreateConstantIndexOp(b, loc, dimOf(b, loc, x, a)));
      Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), n);
      Value asFloat = arith::SIToFPOp::create(b, loc, elementType, asInt);
      auto oneType = RankedTensorType::get(llvm::SmallVector<int64_t>(rank, 1),
                                           elementType);
      Value countTensor =
          tensor::FromElementsOp::create(b, loc, oneType, ValueRange{asFloat});
      inverse = tosa::ReciprocalOp::create(b, loc, oneType, countTensor);
    }
    result = createMul(b, loc, result, inverse);
  }
  if (!ctx.intAttr("keepdims", 1))
    result = dropUnitDims(b, loc, result, axes);
  ctx.setOutput(0, result);
  return success();
}

LogicalResult convertSoftmax(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = tensorTypeOf(x);
  int64_t rank = type.getRank();
  int64_t axis = ctx.intAttr("axis", -1);
  if (axis < -rank || axis >= rank)
    return ctx.emitError() << "axis " << axis << " is out of range";
  if (axis < 0)
    axis += rank;
  if (!isa<FloatType>(type.getElementType()))
    return ctx.emitError() << "Softmax needs a floating-point input";
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  // exp(x - max) / sum(exp(x - max)) along `axis`.
  Value max = reduceAxis<tosa::ReduceMaxOp>(b, loc, x, axis);
  Value shifted = tosa::SubOp::create(b, loc, type, x, max);
  Value exp = tosa::ExpOp::create(b, loc, type, shifted);
  Value sum = reduceAxis<tosa::ReduceSumOp>(b, loc, exp, axis);
  Value inverse = tosa::ReciprocalOp::create(b, loc, sum.getType(), sum);
  ctx.setOutput(0, createMul(b, loc, exp, inverse));
  return success();
}

} // namespace

void registerReductionConverters(OpConverterRegistry &r) {
  r.add(kOnnxDomain, "ReduceSum", convertReduce<ReduceKind::Sum>,
        {"keepdims", "noop_with_empty_axes"});
  r.add(kOnnxDomain, "ReduceMean", convertReduce<ReduceKind::Mean>,
        {"axes", "keepdims", "noop_with_empty_axes"});
  r.add(kOnnxDomain, "ReduceMax", convertReduce<ReduceKind::Max>,
        {"axes", "keepdims", "noop_with_empty_axes"});
  r.add(kOnnxDomain, "Softmax", convertSoftmax, {"axis"});
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
