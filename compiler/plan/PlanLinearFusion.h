//===- PlanLinearFusion.h - Finding nn.Linear in imported IR ----*- C++ -*-===//
//
// The ONNX importer writes Gemm (nn.Linear) as
//   collapse_shape(tosa.matmul(expand_shape(x), W)) [+ bias] [-> act]
// with W a transpose/reshape of a constant. The plan emitter turns each such
// chain into one `linear` kernel (docs/kernels-dense.md). This file finds the
// chains; PlanEmitter.cpp emits them.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANLINEARFUSION_H
#define EMBER_COMPILER_PLAN_PLANLINEARFUSION_H

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Block.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <string>

namespace mlir::ember::plan_emitter {

/// One nn.Linear: act(x · W + bias), x [M, K], W the matmul's constant
/// [1, K, N] operand, bias (optional) a constant of N elements.
struct LinearChain {
  tosa::MatMulOp matmul;
  Value x, bias;
  std::string activation = "none"; // "relu", "sigmoid" or "tanh"
};

struct LinearChains {
  /// The last op of each chain (whose result the `linear` defines).
  llvm::DenseMap<Operation *, LinearChain> anchors;
  /// The other ops of the chains: nothing is emitted for them.
  llvm::DenseSet<Operation *> fusedOps;
};

/// Finds the chains among the ops of `block`. Intermediate values must have
/// one use each (so nothing else needs them).
LinearChains findLinearChains(Block &block);

/// True when `v` is a constant whose elements are all zero.
bool isZeroConstant(Value v);
/// True for constants and transposes/reshapes of constants (what the plan
/// emitter folds into constants).
bool isConstantLike(Value v);
/// True for a tosa.clamp that is a ReLU (min 0, max >= the largest float).
bool isReluClamp(Operation *op);

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANLINEARFUSION_H
