//===- PlanTextPrinter.h - A plan as text to read and FileCheck -*- C++ -*-===//
//
// `ember-compile --emit plan-text`: the plan the emitter built, one line
// per instruction, before any file is written:
//
//   rank 0: 9 slots, arena 1024 bytes
//     input %0 "dense": f32[B, 13]
//     const %3 "bot.weight": f32[13, 4] (208 bytes)
//     %4: f32[B, 4] @0 = linear(%0, %3, -) {transpose_weight = 0, activation = "relu"}  // bot
//     output "out" = %8
//
// Slots are %index; an absent optional input is `-`; `@N` is a slot's
// static arena offset; `stream S`, `wait [e]`, `record [e]` and
// `collective K` follow an instruction when set. The binary and protobuf-text
// plans stay the formats the runtime reads; this one is for people and
// lit tests.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANTEXTPRINTER_H
#define EMBER_COMPILER_PLAN_PLANTEXTPRINTER_H

#include "plan/PlanProgramBuilder.h"

#include <string>
#include <vector>

namespace mlir::ember::plan_emitter {

/// `plan` as text; `constants[r]` are rank r's constants (slot and bytes).
std::string printPlanText(const pb::Plan &plan,
                          const std::vector<std::vector<PendingConstant>> &constants);

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANTEXTPRINTER_H
