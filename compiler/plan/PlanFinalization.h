//===- PlanFinalization.h - Target, bounds, memory plan ---*- C++ -*-===//
//
// What writePlan adds to a translated plan before writing it: the target
// backend (Plan.target), the batch bound of --max-batch (Plan.symbol_bounds),
// for the CUDA target the communication stream (PlanStreams.h), and the
// static memory plan (PlanMemoryPlanner.h).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANFINALIZATION_H
#define EMBER_COMPILER_PLAN_PLANFINALIZATION_H

#include "plan/PlanEmitter.h"
#include "plan/ember_plan.pb.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::ember::plan_emitter {

/// Sets target and symbol bounds and plans memory. Fails (with a diagnostic
/// on `module`) when --max-batch is given for a model whose batch dims are
/// all static.
LogicalResult finishPlan(ModuleOp module, ::ember::plan::Plan &plan,
                         const PlanEmitterOptions &options);

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANFINALIZATION_H
