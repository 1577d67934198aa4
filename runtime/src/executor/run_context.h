//===- run_context.h - The state of one run ---------------------*- C++ -*-===//
//
// Everything a run writes: the slot table, the bound symbol values, the
// arena and counters. Sessions keep a pool of these; each run takes one for
// its whole duration, so concurrent runs share nothing mutable, and the next
// run on the same context reuses its memory.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_EXECUTOR_RUN_CONTEXT_H
#define EMBER_EXECUTOR_RUN_CONTEXT_H

#include "ember/tensor.h"
#include "executor/arena.h"
#include "plan/program.h"

#include <cstdint>
#include <vector>

namespace ember {

struct SlotState {
  Tensor tensor;
  int block = -1; // arena block backing the tensor, or -1
};

class RunContext {
public:
  /// `memory` backs the arenas: the host heap, or a device's memory.
  explicit RunContext(const Program &program,
                      MemoryResource &memory = hostMemory());

  /// Forgets the previous run's values and frees its arena blocks for reuse.
  void reset();

  /// Binds symbol `id` to `value`, or checks it against an earlier binding.
  /// `source` names who binds it (an input name) for messages.
  Status bindSymbol(const Program &program, int id, int64_t value,
                    const std::string &source);

  std::vector<SlotState> slots;
  std::vector<int64_t> symbolValues; // -1 = unbound
  std::vector<const std::string *> symbolSources;
  /// Per thread of the run (0: the caller's, 1: the communication
  /// thread, 2: a pipelined run's collective thread): the scratch blocks
  /// of the instruction it runs.
  std::vector<int> scratchBlocks[3];
  /// The stream executor's per-run state (stream_executor.h): which
  /// instructions completed, and per slot the uses still to come.
  std::vector<char> instructionDone;
  std::vector<int> slotUsesLeft;
  Arena arena;
  StaticArena staticArena; // slots with a compiler-planned offset
  int64_t invalidIds = 0;
};

} // namespace ember

#endif // EMBER_EXECUTOR_RUN_CONTEXT_H
