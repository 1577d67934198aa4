//===- executor.cpp - Running a program's instructions --------------------===//
#include "executor/executor.h"

#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"

namespace ember {

namespace {

const Tensor &undefinedTensor() {
  static const Tensor t;
  return t;
}

/// What one instruction's kernel sees.
class InstructionContext : public KernelContext {
public:
  InstructionContext(const Program &program, RunContext &run, ThreadPool &pool,
                     BoundsCheckMode mode, Communicator *comm,
                     ExecutionDevice *device)
      : program_(program), run_(run), pool_(pool), mode_(mode), comm_(comm),
        device_(device) {}

  void setInstruction(const InstructionInfo *instr) { instr_ = instr; }

  int numInputs() const override {
    return static_cast<int>(instr_->inputs.size());
  }
  const Tensor &input(int i) const override {
    if (i < 0 || i >= numInputs())
      return undefinedTensor();
    int slot = instr_->inputs[i];
    return slot < 0 ? undefinedTensor() : run_.slots[slot].tensor;
  }
  int numOutputs() const override {
    return static_cast<int>(instr_->outputs.size());
  }

  Result<Tensor *> allocateOutput(int i, DType dtype,
                                  const Shape &shape) override {
    if (i < 0 || i >= numOutputs())
      return internalError(location() + ": output index " + std::to_string(i) +
                           " out of range");
    if (instr_->outputs[i] < 0)
      return internalError(location() + ": output " + std::to_string(i) +
                           " is left out by the plan (slot -1) but the "
                           "kernel produces it");
    unsigned __int128 bytes = dtypeSize(dtype);
    for (int64_t d : shape) {
      if (d < 0)
        return internalError(location() + ": negative output dimension");
      bytes *= static_cast<uint64_t>(d);
      if (bytes > static_cast<unsigned __int128>(program_.maxTensorBytes))
        return resourceExhausted(
            location() + ": output " + std::to_string(i) + " (" +
            program_.describeSlot(instr_->outputs[i]) + ") " +
            std::string(dtypeName(dtype)) + shape.toString() +
            " is more than the limit of " +
            std::to_string(program_.maxTensorBytes) +
            " bytes per tensor (SessionOptions.maxTensorBytes, "
            "EMBER_MAX_TENSOR_BYTES)");
    }
    SlotState &slot = run_.slots[instr_->outputs[i]];
    dropSlot(slot);
    const SlotInfo &info = program_.slots[instr_->outputs[i]];
    if (info.arenaOffset >= 0) {
      // A compiler-planned slot: its place in the static arena is fixed.
      if (bytes > static_cast<unsigned __int128>(info.arenaCapacity))
        return resourceExhausted(location() + ": output " + std::to_string(i) +
                                 " " + std::string(dtypeName(dtype)) +
                                 shape.toString() + " needs " +
                                 std::to_string(static_cast<uint64_t>(bytes)) +
                                 " bytes but the memory plan reserved " +
                                 std::to_string(info.arenaCapacity) +
                                 " (its size at the plan's symbol bounds)");
      slot.tensor = Tensor::view(run_.staticArena.data() + info.arenaOffset,
                                 dtype, shape);
      return &slot.tensor;
    }
    EMBER_ASSIGN_OR_RETURN(int block,
                           run_.arena.allocate(static_cast<size_t>(bytes)));
    slot.block = block;
    slot.tensor = Tensor::view(run_.arena.data(block), dtype, shape);
    return &slot.tensor;
  }

  Status setOutput(int i, const Tensor &tensor) override {
    if (i < 0 || i >= numOutputs())
      return internalError(location() + ": output index " + std::to_string(i) +
                           " out of range");
    if (instr_->outputs[i] < 0) {
      if (tensor.defined())
        return internalError(location() + ": output " + std::to_string(i) +
                             " is left out by the plan (slot -1) but the "
                             "kernel produces it");
      return Status::ok();
    }
    SlotState &slot = run_.slots[instr_->outputs[i]];
    // The memory plan extends lifetimes only over views made by kernels
    // that declare them; any other view of planned memory could be
    // overwritten while alive.
    if (tensor.data() && run_.staticArena.contains(tensor.data()) &&
        !instr_->kernel->outputsAliasInputs)
      return internalError(location() + ": kernel '" + instr_->kernelName +
                           "' returned a view of planned memory but does "
                           "not declare outputsAliasInputs");
    // An alias of an arena buffer keeps that buffer alive.
    int block = tensor.data() ? run_.arena.findBlock(tensor.data()) : -1;
    if (block >= 0)
      run_.arena.retain(block);
    dropSlot(slot);
    slot.tensor = tensor;
    slot.block = block;
    return Status::ok();
  }

  Result<void *> scratch(size_t bytes) override {
    EMBER_ASSIGN_OR_RETURN(int block, run_.arena.allocate(bytes));
    run_.scratchBlocks.push_back(block);
    return run_.arena.data(block);
  }

  const Attributes &attrs() const override { return instr_->attrs; }
  ThreadPool &threadPool() override { return pool_; }
  BoundsCheckMode boundsCheck() const override { return mode_; }
  void reportInvalidIds(int64_t count) override { run_.invalidIds += count; }
  std::string location() const override { return instr_->location; }
  const CollectiveInfo *collective() const override {
    return instr_->collective >= 0 ? &program_.collectives[instr_->collective]
                                   : nullptr;
  }
  Communicator *communicator() const override { return comm_; }
  cuda::KernelEnv *gpu() const override {
    return device_ ? device_->kernelEnv() : nullptr;
  }

private:
  void dropSlot(SlotState &slot) {
    if (slot.block >= 0)
      run_.arena.release(slot.block);
    slot.block = -1;
    slot.tensor = Tensor();
  }

  const Program &program_;
  RunContext &run_;
  ThreadPool &pool_;
  BoundsCheckMode mode_;
  Communicator *comm_;
  ExecutionDevice *device_;
  const InstructionInfo *instr_ = nullptr;
};

/// Checks a kernel's result against the slot's declared dtype and shape.
Status checkOutput(const Program &program, const InstructionInfo &instr,
                   int index, RunContext &ctx) {
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

} // namespace

Status executeProgram(const Program &program, RunContext &ctx, ThreadPool &pool,
                      BoundsCheckMode boundsCheck, Communicator *comm,
                      ExecutionDevice *device) {
  // Constants are views of the mapped weights files (or their device copies).
  for (size_t s = 0; s < program.slots.size(); ++s)
    if (program.slots[s].kind == SlotInfo::Kind::kConstant)
      ctx.slots[s].tensor =
          device ? device->constant(static_cast<int>(s)) : program.constants[s];

  EMBER_RETURN_IF_ERROR(
      ctx.staticArena.reserve(static_cast<size_t>(program.staticArenaBytes)));
  const bool reuse = !device || device->reusesMemoryWithinRun();
  InstructionContext kctx(program, ctx, pool, boundsCheck, comm, device);
  for (size_t index = 0; index < program.instructions.size(); ++index) {
    const InstructionInfo &instr = program.instructions[index];
    kctx.setInstruction(&instr);
    Status status =
        device ? device->runInstruction(static_cast<int>(index), instr, kctx)
               : instr.kernel->run(kctx);
    // Scratch and dead slots go back to the arena; with several device
    // streams they are kept until the run ends (another stream may still
    // read them).
    if (reuse)
      for (int block : ctx.scratchBlocks)
        ctx.arena.release(block);
    ctx.scratchBlocks.clear();
    if (!status.isOk()) {
      // Kernels usually name themselves; add the location when they do not.
      if (status.message().find(instr.location) == std::string::npos)
        return status.withContext(instr.location);
      return status;
    }
    for (int i = 0; i < static_cast<int>(instr.outputs.size()); ++i)
      EMBER_RETURN_IF_ERROR(checkOutput(program, instr, i, ctx));
    for (int slotId : instr.releaseAfter) {
      SlotState &slot = ctx.slots[slotId];
      if (slot.block >= 0 && reuse)
        ctx.arena.release(slot.block);
      slot.block = -1;
      slot.tensor = Tensor();
    }
  }
  return Status::ok();
}

} // namespace ember
