//===- InstructionCost.h - what each instruction of a plan costs -*- C++ -*-===//
//
// The predicted timeline's cost of one instruction on one rank (seconds,
// bytes, FLOPs), from the plan alone: slot shapes give the bytes, with the
// run-time dims estimated from the batch per rank and the ids per bag
// (docs/timeline.md, "Sizes"); embedding lookups and collectives are costed
// by the sharding planner's cost model (sharding/CostModel.h: the one source
// of those formulas), dense kernels by FLOPs and bytes against the device's
// peaks in the topology. No MLIR: the plan message is all it reads.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_TIMELINE_INSTRUCTIONCOST_H
#define EMBER_COMPILER_TIMELINE_INSTRUCTIONCOST_H

#include "plan/ember_plan.pb.h"
#include "sharding/ShardingTypes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::timeline {

/// What the sizes of run-time dims are taken to be.
struct SizeAssumptions {
  /// The batch symbol of the plan's signature, per rank.
  int64_t batchPerRank = 512;
  /// Ids per bag of every id input (bags of ids, KJT values).
  double idsPerBag = 1.0;
};

/// One instruction's predicted cost on one rank.
struct InstructionCost {
  double seconds = 0;
  /// Compute: bytes read and written; collective: bytes sent and received
  /// (the rank's input and output buffers).
  double bytes = 0;
  double flops = 0;
  /// Zero-copy (the kernel contract's views): costs nothing.
  bool view = false;
};

/// The costs of every instruction of `rank`'s program of `plan`, in program
/// order. Collectives are costed as the rank's own transfer; the simulator
/// makes every rank of a collective wait for the slowest.
std::vector<InstructionCost>
costInstructions(const ::ember::plan::Plan &plan, int rank,
                 const ::ember::sharding::Topology &topology,
                 const SizeAssumptions &sizes);

} // namespace ember::timeline

#endif // EMBER_COMPILER_TIMELINE_INSTRUCTIONCOST_H
