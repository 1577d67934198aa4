//===- TimelineSimulator.h - a plan's predicted schedule --------*- C++ -*-===//
//
// Runs every rank's program of a plan on paper: each instruction takes its
// predicted cost (InstructionCost.h) on its stream, after what its stream
// ran before and after the events it waits for; a collective starts when
// every rank has issued it and ends, on every rank, when the slowest
// rank's transfer would (docs/timeline.md, "Simulation"). Time a stream
// spends blocked on an event of the other stream is a wait slice of its own,
// as in a measured trace (docs/trace-format.md).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_TIMELINE_TIMELINESIMULATOR_H
#define EMBER_COMPILER_TIMELINE_TIMELINESIMULATOR_H

#include "timeline/InstructionCost.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ember::timeline {

enum class SliceKind { Compute, Collective, Wait };

/// One interval of one stream of one rank, in seconds from the step's start.
struct Slice {
  int rank = 0;
  int stream = 0;
  double start = 0;
  double end = 0;
  SliceKind kind = SliceKind::Compute;
  /// The kernel (a wait: the awaited instruction's kernel).
  std::string kernel;
  /// The instruction's index in the rank's program (a wait: the awaited
  /// instruction's).
  int instruction = 0;
  double bytes = 0;
  double flops = 0;
  /// The instruction's source location (Instruction.name).
  std::string location;
  /// A collective's index in Plan.collectives, else -1.
  int collective = -1;
};

/// When a collective moved data: every rank's slice of it contains
/// [transferStart, transferEnd].
struct CollectiveSpan {
  int collective = 0;
  std::string kernel;
  double transferStart = 0;
  double transferEnd = 0;
  /// Per rank: the stream it ran on.
  std::vector<int> streams;
};

struct Timeline {
  int ranks = 0;
  /// Streams of each rank's program (1 or 2).
  std::vector<int> streamsPerRank;
  std::vector<Slice> slices;
  std::vector<CollectiveSpan> collectives;
};

/// The predicted timeline of `plan`. Errors: a rank whose k-th collective is
/// not descriptor k, or whose collectives do not match the plan's list.
llvm::Expected<Timeline>
simulatePlan(const ::ember::plan::Plan &plan,
             const ::ember::sharding::Topology &topology,
             const SizeAssumptions &sizes);

} // namespace ember::timeline

#endif // EMBER_COMPILER_TIMELINE_TIMELINESIMULATOR_H
