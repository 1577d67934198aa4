//===- TosaMatchers.h - Small predicates on imported tosa IR ----*- C++ -*-===//
//
// Questions both the raising passes and the plan emitter ask of the tosa ops
// the ONNX importer writes: is this operand an all-zero constant (a plain
// tosa.mul shift, matmul zero points), a constant the plan emitter folds, a
// ReLU clamp.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PASSES_TOSAMATCHERS_H
#define EMBER_PASSES_TOSAMATCHERS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace mlir::ember {

/// True when `v` is a constant whose elements are all zero.
bool isZeroConstant(Value v);
/// True for constants and transposes/reshapes of constants (what the plan
/// emitter folds into constants at compile time).
bool isConstantLike(Value v);
/// True for a tosa.clamp that is a ReLU (min 0, max >= the largest float).
bool isReluClamp(Operation *op);

} // namespace mlir::ember

#endif // EMBER_PASSES_TOSAMATCHERS_H
