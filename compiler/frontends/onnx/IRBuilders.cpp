//===- IRBuilders.cpp - Small IR building blocks for the converters -------===//

#include "frontends/onnx/IRBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

OpFoldResult dimOf(OpBuilder &b, Location loc, Value v, int64_t i) {
  int64_t size = tensorTypeOf(v).getDimSize(i);
  if (!ShapedType::isDynamic(size))
    return b.getIndexAttr(size);
  return tensor::DimOp::create(b, loc, v, i).getResult();
}

Value constShape(OpBuilder &b, Location loc, llvm::ArrayRef<int64_t> values) {
  auto shapeType = tosa::shapeType::get(b.getContext(), values.size());
  auto attr = DenseIntElementsAttr::get(
      RankedTensorType::get({static_cast<int64_t>(values.size())},
                            b.getIndexType()),
      values);
  return tosa::ConstShapeOp::create(b, loc, shapeType, attr).getResult();
}

Value createReshape(OpBuilder &b, Location loc, Value input,
                    llvm::ArrayRef<OpFoldResult> target) {
  auto inputType = tensorTypeOf(input);
  llvm::SmallVector<int64_t> staticShape;
  int dynamicCount = 0;
  for (OpFoldResult size : target) {
    std::optional<int64_t> c = getConstantIntValue(size);
    staticShape.push_back(c ? *c : ShapedType::kDynamic);
    dynamicCount += !c;
  }
  auto resultType =
      RankedTensorType::get(staticShape, inputType.getElementType());
  if (resultType == inputType)
    return input;
  if (dynamicCount <= 1) {
    llvm::SmallVector<int64_t> shape(staticShape);
    for (int64_t &s : shape)
      if (ShapedType::isDynamic(s))
        s = -1;
    // A fully static target from a static input is checked by tosa itself.
    return tosa::ReshapeOp::create(b, loc, resultType, input,
                                   constShape(b, loc, shape))
        .getResult();
  }
  llvm::SmallVector<Value> sizes;
  for (OpFoldResult size : target) {
    Value index = getValueOrCreateConstantIndexOp(b, loc, size);
    sizes.push_back(
        arith::IndexCastOp::create(b, loc, b.getI64Type(), index).getResult());
  }
  Value shape = tensor::FromElementsOp::create(b, loc, sizes).getResult();
  return tensor::ReshapeOp::create(b, loc, resultType, input, shape)
      .getResult();
}

Value insertUnitDims(OpBuilder &b, Location loc, Value v,
                     llvm::ArrayRef<int64_t> axes) {
  if (axes.empty())
    return v;
  auto type = tensorTypeOf(v);
  int64_t resultRank = type.getRank() + axes.size();
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<bool> isUnit(resultRank, false);
  for (int64_t a : axes)
    isUnit[a] = true;
  int64_t src = 0;
  for (int64_t i = 0; i < resultRank; ++i)
    shape.push_back(isUnit[i] ? 1 : type.getDimSize(src++));
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, resultType, v,
                                         llvm::ArrayRef<ReassociationIndices>{})
        .getResult();
  // Each source dim takes the unit dims before it; the last one also takes
  // the trailing unit dims.
  llvm::SmallVector<ReassociationIndices> groups;
  ReassociationIndices current;
  for (int64_t i = 0; i < resultRank; ++i) {
    current.push_back(i);
    if (!isUnit[i]) {
      groups.push_back(current);
      current.clear();
    }
  }
  for (int64_t i : current)
    groups.back().push_back(i);
  llvm::SmallVector<OpFoldResult> outputShape;
  src = 0;
  for (int64_t i = 0; i < resultRank; ++i)
    outputShape.push_back(isUnit[i] ? OpFoldResult(b.getIndexAttr(1))
                                    : dimOf(b, loc, v, src++));
  return tensor::ExpandShapeOp::create(b, loc, resultType, v, groups,
                                       outputShape)
      .getResult();
}

Value expandToRank(OpBuilder &b, Location loc, Value v, int64_t rank) {
  int64_t missing = rank - tensorTypeOf(v).getRank();
  llvm::SmallVector<int64_t> axes;
  for (int64_t i = 0; i < missing; ++i)
    axes.push_back(i);
  return insertUnitDims(b, loc, v, axes);
}

Value dropUnitDims(OpBuilder &b, Location loc, Value v,
                   llvm::ArrayRef<int64_t> axes) {
  if (axes.empty())
    return v;
  auto type = tensorTypeOf(v);
  llvm::SmallVector<bool> drop(type.getRank(), false);
  for (int64_t a : axes)
    drop[a] = true;
  llvm::SmallVector<int64_t> shape;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (!drop[i])
      shape.push_back(type.getDimSize(i));
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  llvm::SmallVector<ReassociationIndices> groups;
  ReassociationIndices current;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    current.push_back(i);
    if (!drop[i]) {
      groups.push_back(current);
      current.clear();
    }
  }
  if (!groups.empty())
    for (int64_t i : current)
      groups.back().push_back(i);
  return tensor::CollapseShapeOp::create(b, loc, resultType, v, groups)
      .getResult();
}

FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  llvm::SmallVector<int64_t> result;
  for (auto [x, y] : llvm::zip_equal(a, b)) {
    if (x == 1)
      result.push_back(y);
    else if (y == 1)
      result.push_back(x);
    else if (ShapedType::isDynamic(x))
      result.push_back(y);
    else if (ShapedType::isDynamic(y) || x == y)
      result.push_back(x);
    else
      return failure();
  }
  return result;
}

Value scalarConstant(OpBuilder &b, Location loc, Type elementType, double value,
                     int64_t rank) {
  auto type =
      RankedTensorType::get(llvm::SmallVector<int64_t>(rank, 1), elementType);
  Attribute element;
  if (auto floatType = dyn_cast<FloatType>(elementType))
    element = b.getFloatAttr(floatType, value);
  else
    element = b.getIntegerAttr(elementType, static_cast<int64_t>(value));
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, element))
      .getResult();
}

Value zeroTensor1D(OpBuilder &b, Location loc, Type elementType) {
  auto type = RankedTensorType::get({1}, elementType);
  Attribute element;
  if (auto floatType = dyn_cast<FloatType>(elementType))
    element = b.getFloatAttr(floatType, 0.0);
  else
    element = b.getIntegerAttr(elementType, 0);
  return tosa::ConstOp::create(b, loc, type,
                               DenseElementsAttr::get(type, element))
      .getResult();
}

Value createMul(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  Value shift = zeroTensor1D(b, loc, b.getIntegerType(8));
  return createBroadcastBinary<tosa::MulOp>(
      b, loc, lhs, rhs, tensorTypeOf(lhs).getElementType(), shift);
}

Value createCast(OpBuilder &b, Location loc, Value v, Type elementType) {
  auto type = tensorTypeOf(v);
  if (type.getElementType() == elementType)
    return v;
  return tosa::CastOp::create(b, loc, type.clone(elementType), v).getResult();
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
