//===- executor.h - Running a program's instructions ------------*- C++ -*-===//
//
// Runs the instructions of a loaded Program in order over the slots of a
// RunContext. Kernel outputs and scratch come from the context's arena;
// slots are released after their last use so their blocks are reused by
// later instructions. Inputs must be bound (bindInputs) first.
//
// executeProgram runs every stream in program order on the calling thread
// (kernels parallelize internally over the session's thread pool); the
// plan's order is a valid schedule, which the loader checks (every slot is
// defined before it is read, every awaited event was recorded earlier). The
// CPU backend's concurrent streams are executeStreams (stream_executor.h).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_EXECUTOR_EXECUTOR_H
#define EMBER_EXECUTOR_EXECUTOR_H

#include "executor/run_context.h"
#include "kernels/kernel_context.h"
#include "plan/program.h"

namespace ember {

class ThreadPool;
class Communicator;
class KernelContext;
struct RunTrace;
namespace cuda {
struct KernelEnv;
}

/// A device backend's part in running a program (the CUDA backend's
/// CudaDevice). The run context's arenas then hold device memory; the
/// executor keeps its bookkeeping (slots, lifetimes, shape checks) and hands
/// each instruction to the device, which picks the device kernel or runs the
/// CPU kernel on host copies, and orders it on the plan's streams.
class ExecutionDevice {
public:
  virtual ~ExecutionDevice() = default;
  /// The device copy of a constant slot (uploaded at load).
  virtual const Tensor &constant(int slot) const = 0;
  /// Runs instruction `index` through `ctx`, whose tensors are device
  /// memory.
  virtual Status runInstruction(int index, const InstructionInfo &instr,
                                KernelContext &ctx) = 0;
  /// What KernelContext::gpu() returns while instruction kernels run.
  virtual cuda::KernelEnv *kernelEnv() = 0;
  /// False when a slot's memory may still be in use on another stream after
  /// its last use was issued: the arena then reuses nothing within a run.
  virtual bool reusesMemoryWithinRun() const = 0;
};

/// `comm` is the session's communicator (nullptr for a single-rank session);
/// `device` the device backend (nullptr: the CPU backend); `trace` (not
/// null) receives each instruction's timing, all on track 0.
Status executeProgram(const Program &program, RunContext &ctx, ThreadPool &pool,
                      const KernelSettings &settings,
                      Communicator *comm = nullptr,
                      ExecutionDevice *device = nullptr,
                      RunTrace *trace = nullptr);

} // namespace ember

#endif // EMBER_EXECUTOR_EXECUTOR_H
