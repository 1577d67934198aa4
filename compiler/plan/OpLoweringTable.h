//===- OpLoweringTable.h - Which op each emitter part lowers ----*- C++ -*-===//
//
// Every part of the plan emitter (PlanEmitter.cpp, PlanDenseOps.cpp,
// PlanDenseKernels.cpp, PlanKjtOps.cpp with PlanCollectiveOps.cpp and
// PlanJaggedOps.cpp) lists the ops it lowers in one table of rows: the op's
// name, the function that lowers it, and (for a few) a condition on the op
// beyond its kind. The emitter dispatches through these tables and the
// emission contract (EmissionContract.h) reads the same tables, so the set of
// ops a plan can hold is written once.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_OPLOWERINGTABLE_H
#define EMBER_COMPILER_PLAN_OPLOWERINGTABLE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::ember::plan_emitter {

/// One row of a lowering table.
template <typename Lower> struct OpLowering {
  /// The op's name (`XOp::getOperationName()`).
  llvm::StringLiteral op;
  /// How the op is lowered.
  Lower lower;
  /// A condition on the op beyond its name (null: every op of that name);
  /// an op it refuses is outside the table.
  bool (*accepts)(Operation *) = nullptr;
};

/// The row of `table` that lowers `op`, or null when none does.
template <typename Lower>
const OpLowering<Lower> *findLowering(llvm::ArrayRef<OpLowering<Lower>> table,
                                      Operation *op) {
  llvm::StringRef name = op->getName().getStringRef();
  for (const OpLowering<Lower> &row : table)
    if (row.op == name && (!row.accepts || row.accepts(op)))
      return &row;
  return nullptr;
}

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_OPLOWERINGTABLE_H
