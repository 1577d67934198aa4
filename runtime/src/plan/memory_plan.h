//===- memory_plan.h - Validating the compiler's memory plan ----*- C++ -*-===//
//
// A plan may place slots at fixed offsets of one static arena per run
// (Slot.arena_offset, RankProgram.arena_bytes; docs/plan-format.md). The
// loader trusts none of it: validateMemoryPlan recomputes each planned slot's
// size at the symbols' bounds and its lifetime (views made by kernels with
// outputsAliasInputs extend the lifetime of what they view), and refuses a
// plan where two slots that are alive at the same time overlap (except an
// in-place result, KernelDef::elementwiseInPlace, on exactly the bytes of an
// input of the same type that dies at its instruction), or a slot does not
// fit in the arena.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PLAN_MEMORY_PLAN_H
#define EMBER_PLAN_MEMORY_PLAN_H

#include "ember/status.h"
#include "plan/program.h"

#include <cstdint>
#include <vector>

namespace ember {

namespace plan {
class RankProgram;
} // namespace plan

/// One storage lifetime: instruction indices [first, last], inclusive.
struct SlotLifetime {
  int first = -1;
  int last = -1;
};

/// The lifetime of every slot's storage, as the runtime sees it: from the
/// defining instruction to the last use of the slot or of any view of it
/// (outputs: to the end of the run). Inputs and constants get {-1, -1}.
std::vector<SlotLifetime> computeStorageLifetimes(const Program &program);

/// Reads the arena offsets of `rp` into `program` (which has its slots,
/// instructions, outputs and symbol bounds) and validates them.
Status validateMemoryPlan(const plan::RankProgram &rp, Program &program);

} // namespace ember

#endif // EMBER_PLAN_MEMORY_PLAN_H
