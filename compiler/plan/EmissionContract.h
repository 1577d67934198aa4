//===- EmissionContract.h - What the plan emitter accepts -------*- C++ -*-===//
//
// The emission contract (torch-mlir's "backend contract" for Ember): the IR
// that writePlan lowers is the functions of a module, one per rank (`main`,
// or `main_rank<r>` for every rank of a module partitioned for
// ember.world_size ranks), each one block of ops that some part of the plan
// emitter lowers. The set of those ops is the union of the emitter's
// lowering tables (OpLoweringTable.h), so it is written once.
// `ember-verify-emission-contract` checks a module against it before
// emission and names the first op outside it, with the pass that would have
// removed it where one exists; ember-compile runs it last in its pipeline.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_EMISSIONCONTRACT_H
#define EMBER_COMPILER_PLAN_EMISSIONCONTRACT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <string>

namespace mlir::ember::plan_emitter {

/// True when some part of the plan emitter lowers `op`.
bool isEmittable(Operation *op);

/// The functions writePlan emits, one per rank: `name` alone, or
/// `name_rank<r>` for every rank of a module with ember.world_size > 1; an
/// error at the module otherwise.
FailureOr<SmallVector<func::FuncOp>> functionsToEmit(ModuleOp module,
                                                     StringRef name);

/// Checks `module` against the contract; an error at the first op outside
/// it (naming the pass that removes such ops, where one does).
LogicalResult verifyEmissionContract(ModuleOp module,
                                     StringRef functionName = "main");

/// The pass `ember-verify-emission-contract` (option `function`, default
/// "main"): verifyEmissionContract as a pass; it changes nothing.
std::unique_ptr<Pass>
createVerifyEmissionContractPass(std::string functionName = "main");

/// Registers that pass (for ember-opt).
void registerEmissionContractPass();

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_EMISSIONCONTRACT_H
