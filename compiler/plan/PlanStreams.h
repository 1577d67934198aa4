//===- PlanStreams.h - Communication on its own stream ----*- C++ -*-===//
//
// The collectives the IR put on stream 1 (ember-assign-streams; the emitter
// copies `ember.stream` to their instructions) run there, so that compute
// that does not need their results runs on stream 0 meanwhile
// (docs/plan-format.md, "Streams and events"):
//   - a collective waits for an event recorded by the stream-0 instruction
//     just before it: everything issued on stream 0 before it is done, so
//     no buffer it reads or overwrites is still in use there;
//   - it records an event; the first stream-0 instruction that reads a
//     result of a collective not yet waited for waits for the latest such
//     collective's event (stream 1 runs in order);
//   - every slot a collective reads or writes stays alive (for the memory
//     plan) until the stream-0 instruction that waits for that collective,
//     or the end;
//   - the input distribution (the first collectives that read no
//     collective's result, with what feeds them) goes first, marked for
//     cross-batch pipelining (PlanPipelineStages.h).
// The CPU backend runs instructions in program order and ignores streams.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANSTREAMS_H
#define EMBER_COMPILER_PLAN_PLANSTREAMS_H

#include "plan/ember_plan.pb.h"

#include <vector>

namespace mlir::ember::plan_emitter {

/// Orders the program and adds the events above (nothing when no
/// instruction is on stream 1). Returns, per slot, the instruction index its lifetime must
/// reach at least (-1: no constraint), for planMemory.
/// `inputCollectives`: how many collectives the input distribution holds
/// (the least leadingIndependentCollectives over the plan's programs; -1:
/// this program's own count, for a program on its own).
std::vector<int> assignCommunicationStream(::ember::plan::RankProgram &program,
                                           int inputCollectives = -1);

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANSTREAMS_H
