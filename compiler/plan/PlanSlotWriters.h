//===- PlanSlotWriters.h - Which instruction writes each slot --*- C++ -*-===//
//
// What the plan passes that reorder a rank program (PlanStreams.cpp,
// PlanPipelineStages.cpp) look up first: for each slot, the instruction
// that writes it.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANSLOTWRITERS_H
#define EMBER_COMPILER_PLAN_PLANSLOTWRITERS_H

#include "plan/ember_plan.pb.h"

#include <vector>

namespace mlir::ember::plan_emitter {

/// Per slot of `program`: the index of the instruction that writes it (the
/// last one, where several do), or -1 where none does (a program input, a
/// weight). Outputs that name no slot of the program are passed over.
inline std::vector<int> slotWriters(const ::ember::plan::RankProgram &program) {
  const int numSlots = program.slots_size();
  std::vector<int> writer(numSlots, -1);
  for (int i = 0; i < program.instructions_size(); ++i)
    for (int s : program.instructions(i).outputs())
      if (s >= 0 && s < numSlots)
        writer[s] = i;
  return writer;
}

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANSLOTWRITERS_H
