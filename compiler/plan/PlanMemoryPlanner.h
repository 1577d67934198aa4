//===- PlanMemoryPlanner.h - Static arena offsets ---------*- C++ -*-===//
//
// The compiler's memory plan (docs/plan-format.md, "Memory plan"). The
// runtime's dynamic arena already recycles a slot's block after its last
// use, at run time, with best-fit search and size classes. What the compiler
// adds: every slot whose size has a compile-time bound (static dims, or dims
// of bounded symbols such as the batch under --max-batch) gets a fixed byte
// offset in one static arena, chosen offline by lifetime-aware packing
// (largest first, lowest offset that no slot alive at the same time uses),
// and the result of an elementwise kernel (isInPlaceKernel) may take the very
// bytes of an input of the same type that dies at that instruction.
// At run time such a slot costs no allocator work, and the arena is as small
// as the packing allows instead of the sum of best-fit blocks rounded to
// size classes.
//
// Lifetimes follow the runtime's rules: from the defining instruction to the
// last use of the slot or of any view of it (reshape-like kernels alias their
// input, see kViewKernels); outputs live to the end of the run. The loader
// re-checks the plan (runtime/src/plan/memory_plan.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANMEMORYPLANNER_H
#define EMBER_COMPILER_PLAN_PLANMEMORYPLANNER_H

#include "plan/PlanEmitter.h"
#include "plan/ember_plan.pb.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlir::ember::plan_emitter {

/// Whether the kernel contract (kernels.def, which the runtime's registries
/// read too) lets `kernel`'s outputs be views of its inputs: their results
/// get no offset and extend the lifetime of what they view.
bool isViewKernel(llvm::StringRef kernel);

/// Whether the contract lets `kernel` compute output 0 in place over an
/// input of the same type.
bool isInPlaceKernel(llvm::StringRef kernel);

/// The symbols that name the batch: every symbolic dim 0 shared by a dense
/// input and an output, and every KJT input's batch symbol.
std::vector<std::string> batchSymbols(const ::ember::plan::Plan &plan);

/// Assigns arena offsets to the slots of `program` whose size is bounded
/// (`bounds`: symbol -> maximum) and sets arena_bytes. Existing offsets are
/// replaced. `keepUntil` (per slot, or empty) extends lifetimes to at least
/// that instruction (work on another stream may still use the slot; see
/// PlanStreams.h).
MemoryPlanStats planMemory(::ember::plan::RankProgram &program,
                           const std::map<std::string, int64_t> &bounds,
                           const std::vector<int> &keepUntil = {});

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANMEMORYPLANNER_H
