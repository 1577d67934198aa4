//===- Pipeline.h - ember-compile's options and pass pipeline ---*- C++ -*-===//
//
// The compiler driver: what `ember-compile` does between reading a model and
// writing its plan, as a library so that tools stay small and tests can call
// it. CompileOptions holds every option of the pipeline; the tool only
// parses flags into it.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_DRIVER_PIPELINE_H
#define EMBER_COMPILER_DRIVER_PIPELINE_H

#include "plan/PlanEmitter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::ember::driver {

struct CompileOptions {
  /// The backend the plan is for (Plan.target).
  plan_emitter::PlanTarget target = plan_emitter::PlanTarget::Cpu;
  /// When > 0, the largest batch the plan accepts (Plan.symbol_bounds); the
  /// memory planner then also places batch-sized slots.
  int64_t maxBatch = 0;
  /// When not empty, the IR before the passes (00-input.mlir) and after each
  /// pass (NN-<pass>.mlir) is written to this directory.
  std::string dumpAfterEachDir;
  /// Assign static arena offsets (off: every slot from the dynamic arena).
  bool planMemory = true;
  /// Collectives on a communication stream (ember-assign-streams, last in
  /// the pipeline): -1 for CUDA and multi-rank plans, 0 never, 1 always.
  int commStream = -1;
  /// float32 (exact, default), float16 or bfloat16: the payload encoding of
  /// the pooled all-to-all, reduce-scatter and all-reduce (the
  /// ember-set-comm-codec pass sets their codec, the emitter lowers it).
  std::string commDType = "float32";

  /// Sharding (docs/sharding.md). With worldSize > 1 the pipeline plans
  /// the sharding of every embedding table (ember-plan-sharding) and
  /// partitions the model into one program per rank (ember-partition).
  int64_t worldSize = 1;        // 0: the topology file's
  int64_t ranksPerNode = 0;     // 0: the topology's (else 8)
  int64_t batchPerRank = 0;     // the planner's batch size (0: its default)
  std::string sharding = "auto"; // or a sharding type for every table
  std::vector<std::string> tableSharding; // NAME=KIND[:KERNEL][@R1/R2/...]
  std::string topologyFile;     // topology JSON
  std::string statsFile;        // pooling factors JSON
  std::string importPlanFile;   // a ParameterSharding JSON plan to use
  std::string exportPlanFile;   // where to write the chosen plan ('-': stdout)
  std::string reportFile;       // where to write the sharding report
  std::string objective;        // inference | training ("": inference)
  std::string memoryReservation = "ember"; // ember | torchrec
  double leanSlack = -1;        // training-lean's slack (negative: default)
  std::string reportFormat;     // text | html ("": by the file name)
  /// Stop after planning (the report and exported plan are the output).
  bool planShardingOnly = false;

  bool sharded() const {
    return worldSize != 1 || planShardingOnly || !topologyFile.empty() ||
           !importPlanFile.empty();
  }
};

/// Adds the passes from imported IR to plan-ready IR: raise embedding bags,
/// functionalize, simplify slices, fold shapes, canonicalize.
void buildCompilePipeline(PassManager &pm, const CompileOptions &options);

/// Runs that pipeline on `module` (writing the dumps when asked; timing each
/// pass under `timing` when given; progress on stderr: "running passes" and
/// "planning sharding", progress/progress.h). Errors are diagnostics.
LogicalResult runCompilePipeline(ModuleOp module, const CompileOptions &options,
                                 TimingScope *timing = nullptr);

/// The plan emitter's options for `options`.
plan_emitter::PlanEmitterOptions
planEmitterOptions(const CompileOptions &options);

} // namespace mlir::ember::driver

#endif // EMBER_COMPILER_DRIVER_PIPELINE_H
