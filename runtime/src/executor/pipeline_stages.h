//===- pipeline_stages.h - A program's stages for pipelining ----*- C++ -*-===//
//
// Cross-batch pipelining (docs/runtime.md, "Cross-batch pipelining") runs a
// rank program in two stages: stage A, the input distribution (the first
// collectives, which read no collective's result, and the compute that
// feeds them), which the compiler marks (Instruction.input_distribution),
// and stage B, the rest. Stage A of the next batch runs on the
// communication thread while the caller's thread computes this batch.
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
#include "plan/program.h"

namespace ember {

/// The number of instructions in stage A (a prefix of the program), or 0
/// when the program has no marks; an error names the first instruction
/// that breaks the rules above.
Result<int> checkPipelineStages(const Program &program);

} // namespace ember

#endif // EMBER_EXECUTOR_PIPELINE_STAGES_H
