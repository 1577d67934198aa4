//===- run_context.cpp - The state of one run -----------------------------===//
#include "executor/run_context.h"

namespace ember {

RunContext::RunContext(const Program &program, MemoryResource &memory)
    : slots(program.slots.size()), symbolValues(program.symbols.size(), -1),
      symbolSources(program.symbols.size(), nullptr), arena(memory),
      staticArena(memory) {
  for (std::vector<int> &scratch : scratchBlocks)
    scratch.reserve(16);
  arena.setLimit(static_cast<size_t>(program.maxTensorBytes));
}

void RunContext::reset() {
  for (SlotState &s : slots) {
    s.tensor = Tensor();
    s.block = -1;
  }
  for (size_t i = 0; i < symbolValues.size(); ++i) {
    symbolValues[i] = -1;
    symbolSources[i] = nullptr;
  }
  for (std::vector<int> &scratch : scratchBlocks)
    scratch.clear();
  arena.releaseAll();
  invalidIds = 0;
}

Status RunContext::bindSymbol(const Program &program, int id, int64_t value,
                              const std::string &source) {
  if (program.symbolMax[id] >= 0 && value > program.symbolMax[id])
    return invalidArgument(
        "'" + program.symbols[id] + "' is " + std::to_string(value) + " for " +
        source + ", above the plan's bound of " +
        std::to_string(program.symbolMax[id]) + " (compiled with --max-batch " +
        std::to_string(program.symbolMax[id]) +
        "; recompile with a larger bound)");
  if (symbolValues[id] < 0) {
    symbolValues[id] = value;
    symbolSources[id] = &source;
    return Status::ok();
  }
  if (symbolValues[id] == value)
    return Status::ok();
  return invalidArgument("'" + program.symbols[id] + "' is " +
                         std::to_string(value) + " for " + source + " but " +
                         std::to_string(symbolValues[id]) + " for " +
                         *symbolSources[id]);
}

} // namespace ember
