//===- EmissionContract.cpp - What the plan emitter accepts ---------------===//
#include "plan/EmissionContract.h"

#include "plan/PlanEmitterContext.h"
#include "plan/PlanKjtOps.h"

#include "dialects/ember/EmberOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Pass/PassRegistry.h"

namespace mlir::ember::plan_emitter {

bool isEmittable(Operation *op) {
  return isCoreEmitterOp(op) || PlanKjtLowering::handles(op) ||
         isDenseKernelOp(op) || isDenseOp(op);
}

FailureOr<SmallVector<func::FuncOp>> functionsToEmit(ModuleOp module,
                                                     StringRef name) {
  SmallVector<func::FuncOp> funcs;
  int64_t worldSize = 1;
  if (auto attr = module->getAttrOfType<IntegerAttr>("ember.world_size"))
    worldSize = attr.getInt();
  if (worldSize <= 1 || module.lookupSymbol<func::FuncOp>(name)) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    if (!func)
      return module.emitError()
             << "the module has no function '" << name << "' to emit";
    if (worldSize > 1)
      return module.emitError()
             << "the module is for " << worldSize << " ranks but '" << name
             << "' was not partitioned (run ember-partition)";
    funcs.push_back(func);
    return funcs;
  }
  for (int64_t r = 0; r < worldSize; ++r) {
    std::string rankName = (name + "_rank" + std::to_string(r)).str();
    auto func = module.lookupSymbol<func::FuncOp>(rankName);
    if (!func)
      return module.emitError()
             << "the module is for " << worldSize
             << " ranks but has no function '" << rankName << "'";
    funcs.push_back(func);
  }
  return funcs;
}

namespace {

/// Why `op` is outside the contract, as precisely as known.
std::string whyNotEmittable(Operation *op) {
  if (isa<MutFromTensorOp, MutToTensorOp, MutSliceOp, MutCopyOp>(op))
    return "in-place updates are lowered to values by ember-functionalize; "
           "run it first";
  if (isa<EmbeddingCollectionOp>(op))
    return "embedding collections are split into one ember.sequence_lookup "
           "per feature by ember-split-embedding-collections; run it first";
  if (isa<ReadyOp>(op))
    return "an ember.wait of ember.ready is folded by --canonicalize (the "
           "plan has no awaitables of its own); run it first";
  if (isa<arith::CmpFOp, arith::CmpIOp>(op))
    return "a comparison is emitted only as x != 0 (a cast to bool)";
  if (isa<tosa::LogicalOrOp>(op))
    return "tosa.logical_or is emitted only as an expand (x | splat false)";
  if (op->getNumResults() == 1 && !isa<ShapedType>(op->getResult(0).getType()))
    return "scalar results are emitted only for index arithmetic of shapes "
           "(arith.muli/divui/divsi/subi/minsi/maxsi/index_cast)";
  return "no part of the plan emitter lowers it (docs/architecture.md, "
         "\"How to add an op\", lists the files an op needs)";
}

} // namespace

LogicalResult verifyEmissionContract(ModuleOp module, StringRef functionName) {
  FailureOr<SmallVector<func::FuncOp>> funcs =
      functionsToEmit(module, functionName);
  if (failed(funcs))
    return failure();
  for (func::FuncOp func : *funcs) {
    if (!func.getBody().hasOneBlock())
      return func.emitError("'")
             << func.getSymName()
             << "' has more than one block; the plan emitter lowers a "
                "function of one block";
    for (Operation &op : func.getBody().front())
      if (!isEmittable(&op))
        return op.emitError("'")
               << op.getName() << "' is outside the emission contract: "
               << whyNotEmittable(&op);
  }
  return success();
}

namespace {

struct VerifyEmissionContractPass
    : PassWrapper<VerifyEmissionContractPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyEmissionContractPass)

  VerifyEmissionContractPass() = default;
  VerifyEmissionContractPass(const VerifyEmissionContractPass &other)
      : PassWrapper(other) {}
  explicit VerifyEmissionContractPass(std::string name) {
    functionName = std::move(name);
  }

  StringRef getArgument() const final {
    return "ember-verify-emission-contract";
  }
  StringRef getDescription() const final {
    return "Checks that only ops the plan emitter lowers remain, and names "
           "the first that does not";
  }
  void runOnOperation() final {
    if (failed(verifyEmissionContract(getOperation(), functionName)))
      signalPassFailure();
    markAllAnalysesPreserved();
  }

  Option<std::string> functionName{
      *this, "function",
      llvm::cl::desc("The function to emit (main_rank<r> for partitioned "
                     "modules)"),
      llvm::cl::init("main")};
};

} // namespace

std::unique_ptr<Pass> createVerifyEmissionContractPass(std::string name) {
  return std::make_unique<VerifyEmissionContractPass>(std::move(name));
}

void registerEmissionContractPass() {
  PassRegistration<VerifyEmissionContractPass>();
}

} // namespace mlir::ember::plan_emitter
