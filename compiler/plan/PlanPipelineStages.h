//===- PlanPipelineStages.h - The input distribution of a rank --*- C++ -*-===//
//
// Cross-batch pipelining (docs/runtime.md, "Cross-batch pipelining";
// docs/plan-format.md, "Pipeline stages") needs each rank program split in
// two stages: stage A, the input distribution, and stage B, the rest. Stage
// A is the longest run of the first collectives (in their order, which
// every rank shares) that read no collective's result, directly or through
// compute, with every instruction they depend on. This moves stage A to
// the front of the program (a topological order still; the collectives
// keep their order) and marks it `input_distribution`. Run after the
// overlap schedule and before the events and the memory plan, which then
// see the final order.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANPIPELINESTAGES_H
#define EMBER_COMPILER_PLAN_PLANPIPELINESTAGES_H

#include "plan/ember_plan.pb.h"

namespace mlir::ember::plan_emitter {

/// How many of the first collectives of `program` (the instructions on
/// stream 1) read no collective's result, directly or through compute.
/// Ranks differ (a rank that owns no table has a pooled all-to-all that
/// reads no collective), so a plan takes the least over its programs: every
/// rank must put the same collectives in its input distribution, since the
/// ranks pair collectives by order.
int leadingIndependentCollectives(const ::ember::plan::RankProgram &program);

/// Marks (and hoists) the input distribution of `program`: its first
/// `collectives` collectives (at most leadingIndependentCollectives) and
/// what they depend on. Nothing when that is 0. Returns the number of
/// instructions marked.
int markInputDistribution(::ember::plan::RankProgram &program,
                          int collectives);

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANPIPELINESTAGES_H
