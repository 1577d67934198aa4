//===- PlanEmitterContext.h - What op emitters may ask the emitter -*- C++ -*-//
//
// The plan emitter (PlanEmitter.cpp) walks a function and owns the slots;
// the emitters of op families in other files (PlanDenseOps.cpp,
// PlanDenseKernels.cpp) reach slots, dims and instructions through this
// interface only.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANEMITTERCONTEXT_H
#define EMBER_COMPILER_PLAN_PLANEMITTERCONTEXT_H

#include "plan/OpLoweringTable.h"
#include "plan/PlanProgramBuilder.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <map>
#include <string>

namespace mlir::ember::plan_emitter {

/// A shape scalar: constant * product(symbol^exponent).
struct ShapeExpr {
  int64_t constant = 1;
  std::map<std::string, int> exponents;
};

class EmitterContext {
public:
  virtual ~EmitterContext() = default;

  virtual PlanProgramBuilder &builder() = 0;
  /// The ONNX node name of `loc` (else the printed location).
  virtual std::string locationOf(Location loc) = 0;
  /// The slot of operand `v` of `op` (constants get theirs on first use),
  /// or an error at `op`.
  virtual FailureOr<int> operandSlot(Operation *op, Value v) = 0;
  /// What the plan knows of dim `dim` of `v`; empty when unknown.
  virtual DimInfo dimOf(Value v, int64_t dim) = 0;
  /// Defines the slot of `result` (dynamic dims from `symbolPerDim`, fresh
  /// symbols where empty), or an error at `op`.
  virtual FailureOr<int> defineResult(Operation *op, Value result,
                                      ArrayRef<DimInfo> symbolPerDim) = 0;
  /// One instruction `kernel`(inputs) defining op's first result.
  virtual LogicalResult emitSimple(Operation *op, const std::string &kernel,
                                   ValueRange inputs,
                                   ArrayRef<DimInfo> symbolPerDim,
                                   pb::Instruction **out = nullptr) = 0;
  /// c * product(symbols) of an index scalar built from constants and
  /// tensor.dim; failure when it is anything else.
  virtual FailureOr<ShapeExpr> shapeScalar(Value v) = 0;
  /// An int64 [exprs.size()] slot holding `exprs` at run time (from the
  /// shapes of the slots that hold their symbols), or an error at `op`.
  virtual FailureOr<int> shapeTensor(Operation *op,
                                     ArrayRef<ShapeExpr> exprs) = 0;
};

/// True for the ops PlanEmitter.cpp lowers itself (constants, shape-only
/// ops, tables, embedding_bag, matmul, add/sub, activations, concat,
/// transpose, reshapes, return).
bool isCoreEmitterOp(Operation *op);

/// True for the tosa/tensor/arith ops PlanDenseOps.cpp lowers (elementwise
/// math, reductions, slices, gathers, casts, splats and expand idioms).
bool isDenseOp(Operation *op);
/// Emits `op`, one of those; failure after an error at `op`.
LogicalResult emitDenseOp(EmitterContext &ctx, Operation *op);

/// True for the Ember dense ops (ember.linear, softmax, layer_norm,
/// dcn_cross, dot_interaction) that PlanDenseKernels.cpp lowers to one
/// instruction of their kernel each.
bool isDenseKernelOp(Operation *op);
/// Emits `op`, one of those; failure after an error at `op`.
LogicalResult emitDenseKernelOp(EmitterContext &ctx, Operation *op);

/// The plan dtype name the `cast` kernel takes ("float32", "int64", "bool",
/// ...) of an element type, or "" when plans cannot hold it.
std::string castDTypeName(Type elementType);

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANEMITTERCONTEXT_H
