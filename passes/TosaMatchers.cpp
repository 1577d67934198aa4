//===- TosaMatchers.cpp - Small predicates on imported tosa IR ------------===//
#include "passes/TosaMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

#include <cfloat>

namespace mlir::ember {

bool isZeroConstant(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  if (isa<FloatType>(attr.getElementType()))
    return llvm::all_of(attr.getValues<APFloat>(),
                        [](const APFloat &f) { return f.isZero(); });
  if (isa<IntegerType>(attr.getElementType()))
    return llvm::all_of(attr.getValues<APInt>(),
                        [](const APInt &i) { return i.isZero(); });
  return false;
}

bool isConstantLike(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isa<RankedTensorType>(v.getType()))
    return false;
  if (isa<arith::ConstantOp, tosa::ConstOp>(def))
    return true;
  if (isa<tosa::TransposeOp, tosa::ReshapeOp, tensor::ExpandShapeOp,
          tensor::CollapseShapeOp>(def))
    return isConstantLike(def->getOperand(0));
  return false;
}

bool isReluClamp(Operation *op) {
  auto clamp = dyn_cast<tosa::ClampOp>(op);
  if (!clamp)
    return false;
  auto lo = dyn_cast<FloatAttr>(clamp.getMinValAttr());
  auto hi = dyn_cast<FloatAttr>(clamp.getMaxValAttr());
  return lo && hi && lo.getValueAsDouble() == 0.0 &&
         hi.getValueAsDouble() >= static_cast<double>(FLT_MAX);
}

} // namespace mlir::ember
