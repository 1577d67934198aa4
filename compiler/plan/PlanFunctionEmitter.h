//===- PlanFunctionEmitter.h - One function -> one rank program -*- C++ -*-===//
//
// The plan emitter's walk over one function (PlanEmitter.cpp: the op walk
// and the ops it lowers itself; PlanShapeAlgebra.cpp: shape expressions,
// run-time shape tensors and reshapes; PlanOutput.cpp: all ranks into one
// plan and its files). Internal to compiler/plan.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANFUNCTIONEMITTER_H
#define EMBER_COMPILER_PLAN_PLANFUNCTIONEMITTER_H

#include "plan/OpLoweringTable.h"
#include "plan/PlanEmitterContext.h"
#include "plan/PlanKjtOps.h"
#include "plan/PlanProgramBuilder.h"

#include "dialects/ember/EmberOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlir::ember::plan_emitter {

/// "node name" for NameLoc (ONNX node), else the printed location.
std::string locationName(Location loc);

class FunctionEmitter : public EmitterContext {
public:
  FunctionEmitter(func::FuncOp func, pb::Plan *plan)
      : func_(func), plan_(plan), builder_(plan->add_programs()),
        kjt_(builder_, kjtHooks()) {}

  using Lower = LogicalResult (*)(FunctionEmitter &, Operation *);
  /// The ops this file lowers itself (the other parts have tables of their
  /// own: isDenseKernelOp, isDenseOp, PlanKjtLowering::handles).
  static ArrayRef<OpLowering<Lower>> lowerings();

  LogicalResult run();
  std::vector<PendingConstant> &constants() { return builder_.constants(); }

private:
  LogicalResult emitSignatureInputs();
  /// Lowers `op`, then gives its collectives the stream of `ember.stream`.
  LogicalResult emitOp(Operation *op);
  LogicalResult lowerOp(Operation *op);
  LogicalResult emitReturn(func::ReturnOp op);

  /// The slot of operand `v` of `op`, or an error at `op`.
  FailureOr<int> operandSlot(Operation *op, Value v) override;
  /// Dims of a result whose dynamic dims come from `symbolPerDim[d]` (a
  /// symbol, a known static size, or empty for a fresh symbol).
  DimList resultDims(Value result, ArrayRef<DimInfo> symbolPerDim);
  /// What the plan knows of dim `dim` of `v` (its slot's dim: a symbol or a
  /// static size, also where the IR type is dynamic); empty when unknown.
  DimInfo dimOf(Value v, int64_t dim) override;
  /// Only the symbol of dimOf (empty for static or unknown dims).
  std::string symbolOf(Value v, int64_t dim) { return dimOf(v, dim).symbol; }
  /// Defines the result slot and returns its index, or an error at op.
  FailureOr<int> defineResult(Operation *op, Value result,
                              ArrayRef<DimInfo> symbolPerDim) override;

  LogicalResult emitSimple(Operation *op, const std::string &kernel,
                           ValueRange inputs, ArrayRef<DimInfo> symbolPerDim,
                           pb::Instruction **out = nullptr) override;
  PlanProgramBuilder &builder() override { return builder_; }
  std::string locationOf(Location loc) override { return locationName(loc); }
  FailureOr<int> shapeTensor(Operation *op,
                             ArrayRef<ShapeExpr> exprs) override {
    return emitShapeTensor(op, exprs);
  }
  FailureOr<ShapeExpr> shapeScalar(Value v) override {
    return evaluateShapeScalar(v);
  }
  LogicalResult emitElementwise(Operation *op, const std::string &kernel);
  LogicalResult emitReshape(Operation *op, Value input, Value result);
  LogicalResult emitReshapeTo(Operation *op, Value input, Value result,
                              SmallVector<std::optional<ShapeExpr>> outExprs);
  /// An int64 [rank] slot computed at run time holding `exprs`.
  FailureOr<int> emitShapeTensor(Operation *op, ArrayRef<ShapeExpr> exprs);
  /// Dim `d` of `v` as an expression over base symbols (a product symbol
  /// expanded); failure when unknown.
  FailureOr<ShapeExpr> dimExpr(Value v, int64_t d);
  /// The plan dim of an expression: static, a base symbol, or a symbol of
  /// its own recorded in symbolExprs_.
  DimInfo dimFromExpr(const ShapeExpr &e);
  LogicalResult emitMatMul(tosa::MatMulOp op);
  LogicalResult emitClamp(tosa::ClampOp op);
  LogicalResult emitConcat(tosa::ConcatOp op);
  LogicalResult emitTranspose(tosa::TransposeOp op);
  LogicalResult emitTensorReshape(tensor::ReshapeOp op);
  /// tosa.add/sub/mul of two integer constants (index arithmetic of
  /// exported advanced indexing) becomes a constant; false when the op is
  /// not that.
  bool foldIntegerBinary(Operation *op);
  /// tensor.from_elements whose elements all evaluate to constants becomes
  /// a constant; false otherwise (then only tensor.reshape may read it).
  bool foldFromElements(tensor::FromElementsOp op);
  /// The value of an index/integer scalar computed from constants and
  /// tensor.dim (arith.muli/divui/divsi/index_cast), as c * product of
  /// symbols; failure when it is anything else.
  FailureOr<ShapeExpr> evaluateShapeScalar(Value v, int depth = 0);
  LogicalResult emitEmbeddingBag(EmbeddingBagOp op);
  LogicalResult emitTableFromTensor(TableFromTensorOp op);
  LogicalResult emitTableRef(TableRefOp op);
  LogicalResult recordConstant(Operation *op, Attribute value);
  /// Folds a transpose/reshape of a constant into a new constant; true when
  /// it did (nothing is emitted for the op then).
  bool foldConstantOp(Operation *op);
  /// Records a tensor.extract_slice (unit strides, static, 2-D) of a constant
  /// over a mapped file (a column shard the partitioning left as a slice)
  /// as a window of that constant, written row by row from the mapping; true
  /// when it did.
  bool foldMappedWindow(Operation *op);

  std::string slotName(Operation *op, unsigned resultIndex) {
    std::string name = locationName(op->getLoc());
    if (op->getNumResults() > 1)
      name += "#" + std::to_string(resultIndex);
    return name;
  }

  func::FuncOp func_;
  pb::Plan *plan_;
  PlanProgramBuilder builder_;
  /// ember.table.from_tensor results -> their weight tensors.
  llvm::DenseMap<Value, Value> tableWeights_;
  /// KJTs, keyed tensors and their lookups (PlanKjtOps.h).
  PlanKjtLowering kjt_;
  /// Multi-rank plans: the descriptor index of this program's next
  /// collective (see writePlan).
  std::function<FailureOr<int>(Operation *, int, ArrayRef<int64_t>)>
      collectiveHook_;

public:
  void setCollectiveHook(decltype(collectiveHook_) hook) {
    collectiveHook_ = std::move(hook);
  }

private:
  KjtLoweringHooks kjtHooks() {
    KjtLoweringHooks hooks;
    hooks.operandSlot = [this](Operation *op, Value v) {
      return operandSlot(op, v);
    };
    hooks.defineResult = [this](Operation *op, Value result,
                                ArrayRef<DimInfo> dims) {
      return defineResult(op, result, dims);
    };
    hooks.tableWeights = [this](Value table) {
      return tableWeights_.lookup(table);
    };
    hooks.location = [](Operation *op) { return locationName(op->getLoc()); };
    hooks.collective = [this](Operation *op, int kind,
                              ArrayRef<int64_t> group) -> FailureOr<int> {
      if (!collectiveHook_)
        return op->emitError("'")
               << op->getName()
               << "' is a collective, but the plan is for one rank (run "
                  "ember-partition with a world size above 1)";
      return collectiveHook_(op, kind, group);
    };
    return hooks;
  }
  /// Symbols that stand for a product of other symbols (B * 3 after a
  /// reshape) -> that product.
  std::map<std::string, ShapeExpr> symbolExprs_;
};

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANFUNCTIONEMITTER_H
