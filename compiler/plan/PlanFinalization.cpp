//===- PlanFinalization.cpp - Target, bounds and memory plan --------------===//
#include "plan/PlanFinalization.h"

#include "plan/PlanMemoryPlanner.h"
#include "plan/PlanStreams.h"

#include "kernel_contract/kernel_contract.h"
#include "mlir/IR/Diagnostics.h"

namespace kn = ::ember::contract::kernel_names;

namespace mlir::ember::plan_emitter {

namespace pb = ::ember::plan;

LogicalResult finishPlan(ModuleOp module, pb::Plan &plan,
                         const PlanEmitterOptions &options) {
  plan.set_target(options.target == PlanTarget::Cuda ? pb::TARGET_CUDA
                                                     : pb::TARGET_CPU);
  std::map<std::string, int64_t> bounds;
  if (options.maxBatch > 0) {
    std::vector<std::string> symbols = batchSymbols(plan);
    if (symbols.empty())
      return module.emitError()
             << "--max-batch " << options.maxBatch
             << " given, but the model has no symbolic batch dimension (no "
                "symbolic dim 0 shared by an input and an output, no KJT "
                "input); export it with a dynamic batch or drop --max-batch";
    plan.clear_symbol_bounds();
    for (const std::string &symbol : symbols) {
      pb::SymbolBound *bound = plan.add_symbol_bounds();
      bound->set_symbol(symbol);
      bound->set_max(options.maxBatch);
      bounds[symbol] = options.maxBatch;
    }
  }
  MemoryPlanStats stats;
  for (pb::RankProgram &program : *plan.mutable_programs()) {
    // Collectives the IR put on stream 1 (ember-assign-streams): events,
    // and an order that overlaps them with compute (PlanStreams.h).
    std::vector<int> keepUntil = assignCommunicationStream(program);
    if (options.planMemory)
      stats = planMemory(program, bounds, keepUntil);
  }
  if (options.memoryStats)
    *options.memoryStats = stats;
  return success();
}

} // namespace mlir::ember::plan_emitter
