//===- executor.cpp - Running a program's instructions --------------------===//
#include "executor/executor.h"

#include "executor/instruction_context.h"
#include "executor/run_trace.h"

namespace ember {

Status executeProgram(const Program &program, RunContext &ctx, ThreadPool &pool,
                      const KernelSettings &settings, Communicator *comm,
                      ExecutionDevice *device, RunTrace *trace) {
  // Constants are views of the mapped weights files (or their device copies).
  for (size_t s = 0; s < program.slots.size(); ++s)
    if (program.slots[s].kind == SlotInfo::Kind::kConstant)
      ctx.slots[s].tensor =
          device ? device->constant(static_cast<int>(s)) : program.constants[s];

  EMBER_RETURN_IF_ERROR(
      ctx.staticArena.reserve(static_cast<size_t>(program.staticArenaBytes)));
  const bool reuse = !device || device->reusesMemoryWithinRun();
  InstructionContext kctx(program, ctx, pool, settings, comm, device);
  for (size_t index = 0; index < program.instructions.size(); ++index) {
    const InstructionInfo &instr = program.instructions[index];
    kctx.setInstruction(&instr);
    const int64_t begin = trace ? RunTrace::nowNs() : 0;
    Status status =
        device ? device->runInstruction(static_cast<int>(index), instr, kctx)
               : instr.kernel->run(kctx);
    if (trace)
      trace->tracks[0].push_back(
          {static_cast<int>(index), 0, false, begin, RunTrace::nowNs(),
           status.isOk() ? instructionBytes(instr, ctx) : 0});
    // Scratch and dead slots go back to the arena; with several device
    // streams they are kept until the run ends (another stream may still
    // read them).
    kctx.releaseScratch(reuse);
    if (!status.isOk()) {
      // Kernels usually name themselves; add the location when they do not.
      if (status.message().find(instr.location) == std::string::npos)
        return status.withContext(instr.location);
      return status;
    }
    for (int i = 0; i < static_cast<int>(instr.outputs.size()); ++i)
      EMBER_RETURN_IF_ERROR(checkOutput(program, instr, i, ctx));
    releaseDeadSlots(instr, ctx, reuse);
  }
  return Status::ok();
}

} // namespace ember
