//===- ShapeTracking.cpp - Shape-like values known at import time ---------===//

#include "frontends/onnx/ShapeTracking.h"

#include "frontends/onnx/IRBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

ShapeInfo simplifyShapeInfo(const ShapeInfo &info) {
  ShapeInfo result;
  for (const DimEntry &e : info) {
    if (!e.isConstant()) {
      int64_t size = tensorTypeOf(e.source).getDimSize(e.dim);
      if (!ShapedType::isDynamic(size)) {
        result.push_back(DimEntry{size, Value(), -1});
        continue;
      }
    }
    result.push_back(e);
  }
  return result;
}

OpFoldResult entrySize(OpBuilder &b, Location loc, const DimEntry &entry) {
  if (entry.isConstant())
    return b.getIndexAttr(entry.constant);
  return dimOf(b, loc, entry.source, entry.dim);
}

Value materializeShapeInfo(ImportContext &ctx, const ShapeInfo &rawInfo,
                           bool scalar) {
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  ShapeInfo info = simplifyShapeInfo(rawInfo);
  llvm::SmallVector<int64_t> shape;
  if (!scalar)
    shape.push_back(info.size());
  auto type = RankedTensorType::get(shape, b.getI64Type());
  bool allConstant = llvm::all_of(info, [](auto &e) { return e.isConstant(); });
  Value result;
  if (allConstant) {
    llvm::SmallVector<int64_t> values;
    for (const DimEntry &e : info)
      values.push_back(e.constant);
    auto attr = DenseElementsAttr::get(type, llvm::ArrayRef<int64_t>(values));
    result = arith::ConstantOp::create(b, loc, attr);
    ctx.setConstant(result, attr);
  } else {
    llvm::SmallVector<Value> elements;
    for (const DimEntry &e : info) {
      Value index =
          getValueOrCreateConstantIndexOp(b, loc, entrySize(b, loc, e));
      elements.push_back(
          arith::IndexCastOp::create(b, loc, b.getI64Type(), index));
    }
    result = tensor::FromElementsOp::create(b, loc, type, elements);
  }
  ctx.setShapeInfo(result, info);
  return result;
}

OpFoldResult dimProduct(OpBuilder &b, Location loc, Value v, int64_t from,
                        int64_t to) {
  int64_t product = 1;
  Value dynamic;
  for (int64_t i = from; i < to; ++i) {
    int64_t size = tensorTypeOf(v).getDimSize(i);
    if (!ShapedType::isDynamic(size)) {
      product *= size;
      continue;
    }
    Value dim = tensor::DimOp::create(b, loc, v, i);
    dynamic =
        dynamic ? arith::MulIOp::create(b, loc, dynamic, dim).getResult() : dim;
  }
  if (!dynamic)
    return b.getIndexAttr(product);
  if (product != 1)
    dynamic = arith::MulIOp::create(
        b, loc, dynamic, arith::ConstantIndexOp::create(b, loc, product));
  return dynamic;
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
