//===- PlanLinearFusion.cpp - Finding nn.Linear in imported IR ------------===//
#include "plan/PlanLinearFusion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <cfloat>

namespace mlir::ember::plan_emitter {

/// True when `v` is a constant whose elements are all zero.
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

/// True for constants and transposes/reshapes of constants (what
/// foldConstantOp turns into constants).
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

/// True for a tosa.clamp that is a ReLU.
bool isReluClamp(Operation *op) {
  auto clamp = dyn_cast<tosa::ClampOp>(op);
  if (!clamp)
    return false;
  auto lo = dyn_cast<FloatAttr>(clamp.getMinValAttr());
  auto hi = dyn_cast<FloatAttr>(clamp.getMaxValAttr());
  return lo && hi && lo.getValueAsDouble() == 0.0 &&
         hi.getValueAsDouble() >= static_cast<double>(FLT_MAX);
}

LinearChains findLinearChains(Block &block) {
  LinearChains result;
  for (Operation &op : block) {
    auto matmul = dyn_cast<tosa::MatMulOp>(&op);
    if (!matmul || !isZeroConstant(matmul.getAZp()) ||
        !isZeroConstant(matmul.getBZp()) || !matmul->hasOneUse())
      continue;
    auto collapse = dyn_cast<tensor::CollapseShapeOp>(*matmul->user_begin());
    auto expand = matmul.getA().getDefiningOp<tensor::ExpandShapeOp>();
    if (!collapse || !expand || !isConstantLike(matmul.getB()))
      continue;
    auto xType = dyn_cast<RankedTensorType>(expand.getSrc().getType());
    auto aType = cast<RankedTensorType>(matmul.getA().getType());
    auto bType = cast<RankedTensorType>(matmul.getB().getType());
    auto outType = cast<RankedTensorType>(collapse.getResult().getType());
    if (!xType || xType.getRank() != 2 || aType.getRank() != 3 ||
        aType.getDimSize(0) != 1 || !bType.hasStaticShape() ||
        bType.getDimSize(0) != 1 || outType.getRank() != 2 ||
        !outType.getElementType().isF32())
      continue;
    LinearChain chain;
    chain.matmul = matmul;
    chain.x = expand.getSrc();
    SmallVector<Operation *> fused = {matmul, collapse};
    if (expand->hasOneUse())
      fused.push_back(expand);
    Operation *anchor = collapse;
    // + bias: [N] or [1, N], a constant.
    if (anchor->hasOneUse()) {
      if (auto add = dyn_cast<tosa::AddOp>(*anchor->user_begin())) {
        Value other = add.getInput1() == anchor->getResult(0) ? add.getInput2()
                                                              : add.getInput1();
        auto biasType = dyn_cast<RankedTensorType>(other.getType());
        if (other != anchor->getResult(0) && isConstantLike(other) &&
            biasType && biasType.hasStaticShape() &&
            biasType.getNumElements() == outType.getDimSize(1) &&
            biasType.getDimSize(biasType.getRank() - 1) ==
                outType.getDimSize(1) &&
            add.getType() == outType) {
          chain.bias = other;
          fused.push_back(add);
          anchor = add;
        }
      }
    }
    if (anchor->hasOneUse()) {
      Operation *user = *anchor->user_begin();
      if (user->getNumResults() == 1 &&
          user->getResult(0).getType() == outType) {
        if (isReluClamp(user))
          chain.activation = "relu";
        else if (isa<tosa::SigmoidOp>(user))
          chain.activation = "sigmoid";
        else if (isa<tosa::TanhOp>(user))
          chain.activation = "tanh";
        if (chain.activation != "none") {
          fused.push_back(user);
          anchor = user;
        }
      }
    }
    for (Operation *f : fused)
      if (f != anchor)
        result.fusedOps.insert(f);
    result.anchors[anchor] = chain;
  }
  return result;
}

} // namespace mlir::ember::plan_emitter
