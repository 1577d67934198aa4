//===- PlanFinalization.cpp - Target, bounds and memory plan --------------===//
#include "plan/PlanFinalization.h"

#include "plan/PlanMemoryPlanner.h"
#include "plan/PlanPipelineStages.h"
#include "plan/PlanStreams.h"

#include "kernel_contract/kernel_contract.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace kn = ::ember::contract::kernel_names;

namespace mlir::ember::plan_emitter {

namespace pb = ::ember::plan;

namespace {

namespace contract = ::ember::contract;

bool attrHasKind(const pb::Attribute &a, contract::AttrKind kind) {
  switch (kind) {
  case contract::AttrKind::kInt:
    return a.value_case() == pb::Attribute::kI;
  case contract::AttrKind::kFloat: // an int converts, as at load
    return a.value_case() == pb::Attribute::kF ||
           a.value_case() == pb::Attribute::kI;
  case contract::AttrKind::kString:
    return a.value_case() == pb::Attribute::kS;
  case contract::AttrKind::kInts:
    return a.value_case() == pb::Attribute::kInts;
  case contract::AttrKind::kFloats:
    return a.value_case() == pb::Attribute::kFloats ||
           a.value_case() == pb::Attribute::kInts;
  case contract::AttrKind::kStrings:
    return a.value_case() == pb::Attribute::kStrings;
  }
  return false;
}

/// Every instruction names a kernel of the contract with the attributes it
/// declares, of their kinds, the required ones given: what the runtime's
/// loader checks, checked here where a mismatch is the emitter's bug.
LogicalResult checkAgainstContract(ModuleOp module, const pb::Plan &plan) {
  for (const pb::RankProgram &program : plan.programs())
    for (int i = 0; i < program.instructions_size(); ++i) {
      const pb::Instruction &in = program.instructions(i);
      auto where = [&] {
        return module.emitError("internal error in the plan emitter: rank ")
               << program.rank() << " instruction " << i << " '"
               << in.kernel() << "' (" << in.name() << "): ";
      };
      const contract::KernelContract *kernel =
          contract::findKernelContract(in.kernel());
      if (!kernel)
        return where() << "no kernel of that name in kernels.def";
      contract::KernelAttrs declared = contract::attributesOf(kernel->id);
      for (const pb::Attribute &a : in.attrs()) {
        const contract::KernelAttr *attr = declared.find(a.name());
        if (!attr)
          return where() << "attribute '" << a.name()
                         << "' is not one kernels.def declares";
        if (!attrHasKind(a, attr->kind))
          return where() << "attribute '" << a.name() << "' must be "
                         << contract::attrKindName(attr->kind);
      }
      for (const contract::KernelAttr &attr : declared)
        if (attr.presence.required() &&
            llvm::none_of(in.attrs(), [&](const pb::Attribute &a) {
              return a.name() == attr.name;
            }))
          return where() << "the required attribute '" << attr.name
                         << "' is missing";
    }
  return success();
}

} // namespace

LogicalResult finishPlan(ModuleOp module, pb::Plan &plan,
                         const PlanEmitterOptions &options) {
  if (failed(checkAgainstContract(module, plan)))
    return failure();
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
  // The same collectives in every rank's input distribution (the ranks
  // pair collectives by order): the least count over the programs.
  int inputCollectives = -1;
  for (const pb::RankProgram &program : plan.programs()) {
    int count = leadingIndependentCollectives(program);
    inputCollectives =
        inputCollectives < 0 ? count : std::min(inputCollectives, count);
  }
  for (pb::RankProgram &program : *plan.mutable_programs()) {
    // Collectives the IR put on stream 1 (ember-assign-streams): events,
    // and an order that overlaps them with compute (PlanStreams.h).
    std::vector<int> keepUntil =
        assignCommunicationStream(program, std::max(inputCollectives, 0));
    if (options.planMemory)
      stats = planMemory(program, bounds, keepUntil);
  }
  if (options.memoryStats)
    *options.memoryStats = stats;
  return success();
}

} // namespace mlir::ember::plan_emitter
