//===- PlanEmitter.h - Value-semantics IR -> Ember plan ---------*- C++ -*-===//
//
// Translates a module in the emission contract (EmissionContract.h: the
// function `main`, or `main_rank<r>` for each rank of a partitioned module,
// holding only ops some part of the emitter lowers) into an Ember plan
// (docs/plan-format.md): one program per rank, one or a few instructions per
// op, tensor constants in one weights file per rank next to the plan. On any
// error (a diagnostic at the op) no file is written. docs/architecture.md,
// "The plan emitter", maps each part to its file.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANEMITTER_H
#define EMBER_COMPILER_PLAN_PLANEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace ember::plan {
class Plan;
} // namespace ember::plan

namespace mlir::ember::plan_emitter {

/// What the memory planner did (PlanMemoryPlanner.h), for reports and tests.
struct MemoryPlanStats {
  int plannedSlots = 0;   // slots given an arena offset
  int dynamicSlots = 0;   // instruction results left to the dynamic arena
  int64_t arenaBytes = 0; // the static arena
  int64_t sumBytes = 0;   // planned slots' sizes added up (no reuse)
};

/// The backend a plan is compiled for (Plan.target).
enum class PlanTarget { Cpu, Cuda };

struct PlanEmitterOptions {
  /// Name of the function to emit.
  std::string functionName = "main";
  /// Plan.producer.
  std::string producer = "ember-compile";
  /// Plan.target: a runtime without that backend refuses the plan.
  PlanTarget target = PlanTarget::Cpu;
  /// When > 0, bounds the batch symbols (Plan.symbol_bounds): the runtime
  /// refuses larger batches and the memory planner places batch-sized slots.
  int64_t maxBatch = 0;
  /// Assign static arena offsets (PlanMemoryPlanner.h).
  bool planMemory = true;
  /// When set, receives what the memory planner did.
  MemoryPlanStats *memoryStats = nullptr;
};

/// Writes the plan of `module` to `planPath` (binary, or protobuf text when
/// the path ends in .txt/.pbtxt) and its constants to
/// `<stem>.rank0.weights` in the same directory (stem: the file name without
/// .plan/.plan.txt). Both files are written to temporary names and renamed
/// at the end; on failure (diagnostics at the offending op) no file is left.
LogicalResult writePlan(ModuleOp module, llvm::StringRef planPath,
                        const PlanEmitterOptions &options = {});

/// The plan writePlan would write, as text to read and FileCheck
/// (PlanTextPrinter.h); no file is written.
FailureOr<std::string> planText(ModuleOp module,
                                const PlanEmitterOptions &options = {});

/// The plan writePlan would write, in memory: the plan message only, no
/// weights read or written (the predicted timeline simulates it).
LogicalResult emitPlanMessage(ModuleOp module,
                              const PlanEmitterOptions &options,
                              ::ember::plan::Plan &plan);

/// The weights file name (no directory) that writePlan uses for `planPath`.
std::string weightsFileNameFor(llvm::StringRef planPath);
/// The weights file of rank `rank` of the plan at `planPath`.
std::string weightsFileNameFor(llvm::StringRef planPath, int rank);

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANEMITTER_H
