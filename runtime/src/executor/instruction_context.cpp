//===- instruction_context.cpp - What one instruction's kernel sees -------===//
#include "executor/instruction_context.h"

namespace ember {

Status checkOutput(const Program &program, const InstructionInfo &instr,
                   int index, RunContext &ctx, std::mutex *shared) {
  int slotId = instr.outputs[index];
  if (slotId < 0)
    return Status::ok(); // left out by the plan; setOutput checked it
  const SlotInfo &slot = program.slots[slotId];
  const Tensor &t = ctx.slots[slotId].tensor;
  auto mismatch = [&](const std::string &why) {
    return internalError(
        instr.location + ": output " + std::to_string(index) + " is " +
        (t.defined() ? t.describe() : "undefined") + " but the plan declares " +
        std::string(dtypeName(slot.dtype)) + program.describeDims(slot) +
        " for " + program.describeSlot(slotId) + why);
  };
  if (!t.defined())
    return mismatch(" (the kernel did not produce it)");
  if (t.dtype() != slot.dtype || t.rank() != slot.rank)
    return mismatch("");
  for (int d = 0; d < slot.rank; ++d) {
    const DimSpec &spec = slot.dims[d];
    if (!spec.isSymbolic()) {
      if (t.dim(d) != spec.size)
        return mismatch("");
      continue;
    }
    if (t.dim(d) % spec.factor != 0)
      return mismatch("");
    int64_t value = t.dim(d) / spec.factor;
    SharedLock lock(shared);
    int64_t &bound = ctx.symbolValues[spec.symbol];
    if (bound < 0 && program.symbolMax[spec.symbol] >= 0 &&
        value > program.symbolMax[spec.symbol])
      return mismatch(" ('" + program.symbols[spec.symbol] +
                      "' is above its bound of " +
                      std::to_string(program.symbolMax[spec.symbol]) + ")");
    if (bound < 0)
      bound = value; // a data-dependent size, first seen here
    else if (bound != value)
      return mismatch(" ('" + program.symbols[spec.symbol] + "' is " +
                      std::to_string(bound) + ")");
  }
  return Status::ok();
}

void releaseDeadSlots(const InstructionInfo &instr, RunContext &ctx,
                      bool reuse) {
  for (int slotId : instr.releaseAfter) {
    SlotState &slot = ctx.slots[slotId];
    if (slot.block >= 0 && reuse)
      ctx.arena.release(slot.block);
    slot.block = -1;
    slot.tensor = Tensor();
  }
}

int64_t instructionBytes(const InstructionInfo &instr, const RunContext &ctx) {
  int64_t bytes = 0;
  for (const std::vector<int> *slots : {&instr.inputs, &instr.outputs})
    for (int s : *slots)
      if (s >= 0)
        bytes += static_cast<int64_t>(ctx.slots[s].tensor.nbytes());
  return bytes;
}

} // namespace ember
