//===- instruction_context.h - What one instruction's kernel sees -*- C++
//-*-===//
//
// The KernelContext of the executor: an instruction's inputs are its slots'
// tensors, its outputs and scratch come from the run's arenas. With the
// plan's streams running on two threads (stream_executor.h), the two
// threads' contexts share the run's arena, slot table and symbol bindings:
// `shared` then serializes what touches them (allocation, release, symbol
// binding), never a kernel's work.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_EXECUTOR_INSTRUCTION_CONTEXT_H
#define EMBER_EXECUTOR_INSTRUCTION_CONTEXT_H

#include "executor/executor.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"

#include <mutex>
#include <vector>

namespace ember {

/// Locks `m` unless it is null (a run on one thread).
class SharedLock {
public:
  explicit SharedLock(std::mutex *m) : m_(m) {
    if (m_)
      m_->lock();
  }
  ~SharedLock() {
    if (m_)
      m_->unlock();
  }
  SharedLock(const SharedLock &) = delete;
  SharedLock &operator=(const SharedLock &) = delete;

private:
  std::mutex *m_;
};

/// What one instruction's kernel sees.
class InstructionContext : public KernelContext {
public:
  InstructionContext(const Program &program, RunContext &run, ThreadPool &pool,
                     const KernelSettings &settings, Communicator *comm,
                     ExecutionDevice *device, std::mutex *shared = nullptr,
                     int thread = 0)
      : program_(program), run_(run), pool_(pool), settings_(settings),
        comm_(comm), device_(device), shared_(shared),
        scratch_(run.scratchBlocks[thread]) {}

  /// Returns the scratch blocks of the instruction that ran to the arena
  /// (`reuse`) or forgets them (the arena frees them at the run's end).
  void releaseScratch(bool reuse) {
    SharedLock lock(shared_);
    if (reuse)
      for (int block : scratch_)
        run_.arena.release(block);
    scratch_.clear();
  }

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
    SharedLock lock(shared_);
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
    SharedLock lock(shared_);
    int block = tensor.data() ? run_.arena.findBlock(tensor.data()) : -1;
    if (block >= 0)
      run_.arena.retain(block);
    dropSlot(slot);
    slot.tensor = tensor;
    slot.block = block;
    return Status::ok();
  }

  Result<void *> scratch(size_t bytes) override {
    SharedLock lock(shared_);
    EMBER_ASSIGN_OR_RETURN(int block, run_.arena.allocate(bytes));
    scratch_.push_back(block);
    return run_.arena.data(block);
  }

  const Attributes &attrs() const override { return instr_->attrs; }
  ThreadPool &threadPool() override { return pool_; }
  BoundsCheckMode boundsCheck() const override { return settings_.boundsCheck; }
  embedding::QuantizedSums quantizedSums() const override {
    return settings_.quantizedSums;
  }
  void reportInvalidIds(int64_t count) override {
    SharedLock lock(shared_);
    run_.invalidIds += count;
  }
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
  static const Tensor &undefinedTensor() {
    static const Tensor t;
    return t;
  }
  void dropSlot(SlotState &slot) {
    if (slot.block >= 0)
      run_.arena.release(slot.block);
    slot.block = -1;
    slot.tensor = Tensor();
  }

  const Program &program_;
  RunContext &run_;
  ThreadPool &pool_;
  KernelSettings settings_;
  Communicator *comm_;
  ExecutionDevice *device_;
  std::mutex *shared_;
  std::vector<int> &scratch_; // the running instruction's scratch blocks
  const InstructionInfo *instr_ = nullptr;
};

/// Checks output `index` of `instr` against the slot's declared dtype and
/// shape, binding the symbols it sees first (under `shared` when not null).
Status checkOutput(const Program &program, const InstructionInfo &instr,
                   int index, RunContext &ctx, std::mutex *shared = nullptr);

/// Frees the dynamic memory of the slots whose last use was `instr`
/// (program order; `reuse` false: only forgets them).
void releaseDeadSlots(const InstructionInfo &instr, RunContext &ctx,
                      bool reuse);

/// Bytes `instr` read and wrote: its inputs' and outputs' sizes (for a
/// collective, what it sent and received). Its slots must still be bound.
int64_t instructionBytes(const InstructionInfo &instr, const RunContext &ctx);

} // namespace ember

#endif // EMBER_EXECUTOR_INSTRUCTION_CONTEXT_H
