//===- pipeline_stages.h - A program's stages for pipelining ----*- C++ -*-===//
//
// Cross-batch pipelining (docs/runtime.md, "Cross-batch pipelining") runs a
// rank program in three parts:
//   - stage A, the input distribution (the first collectives, which read no
//     collective's result, and the compute that feeds them), which the
//     compiler marks (Instruction.input_distribution); it runs whole on the
//     communication thread, ahead of the batches the caller computes;
//   - the compute-ahead part of stage B: the stream-0 instructions after
//     stage A up to (not including) the first one that waits for a stream-1
//     instruction of stage B (lookups, the bottom MLP: what needs only the
//     input distribution). The caller runs it for batch i+1 before the rest
//     of batch i, so that batch i+1's stage-B collectives can start while
//     batch i still computes;
//   - the rest of stage B: the stage-B collectives on the communication
//     thread, the remaining stream-0 instructions on the caller's thread.
// The split point is found here from the plan's events alone (no plan
// field), so plans compiled before it pipeline the same way.
//
// Checked at load: the marked instructions are a prefix of the program
// (so a batch runs its stage A whole before its stage B, which keeps the
// memory plan and the events valid), every slot they read is an input, a
// constant or written by a marked instruction, and at least one of them is
// a collective. A program with no marks does not pipeline.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_EXECUTOR_PIPELINE_STAGES_H
#define EMBER_EXECUTOR_PIPELINE_STAGES_H

#include "ember/status.h"
#include "executor/stream_schedule.h"
#include "plan/program.h"

namespace ember {

struct PipelineStages {
  /// Instructions [0, inputDistributionEnd) are stage A; 0: the program
  /// has no marks and does not pipeline.
  int inputDistributionEnd = 0;
  /// The stream-0 instructions in [inputDistributionEnd, computeAheadEnd)
  /// wait for no stream-1 instruction of stage B (the instruction at
  /// computeAheadEnd, when there is one, is on stream 0 and does).
  int computeAheadEnd = 0;
  /// The last stream-1 instruction of stage A (what a trace names the
  /// caller's wait for the input distribution after).
  int lastInputCollective = 0;
};

/// The stages of `program` (see above); an error names the first
/// instruction that breaks the rules above. `schedule` is the program's
/// (buildStreamSchedule).
Result<PipelineStages> findPipelineStages(const Program &program,
                                          const StreamSchedule &schedule);

} // namespace ember

#endif // EMBER_EXECUTOR_PIPELINE_STAGES_H
