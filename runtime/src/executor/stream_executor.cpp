//===- stream_executor.cpp - A plan's two streams on two threads ----------===//
#include "executor/stream_executor.h"

#include "executor/instruction_context.h"
#include "executor/run_trace.h"
#include "threading/communication_thread.h"

#include <atomic>
#include <condition_variable>
#include <new>
#include <thread>

namespace ember {

namespace {

/// What the two threads of one run share.
class StreamRun {
public:
  StreamRun(const Program &program, RunContext &ctx,
            const StreamExecution &streams)
      : program_(program), ctx_(ctx), streams_(streams),
        done_(ctx.instructionDone), uses_(ctx.slotUsesLeft) {
    // Kept in the run context: a steady-state run allocates nothing.
    done_.assign(program.instructions.size(), 0);
    uses_ = streams.schedule->slotUses;
  }

  /// Runs the instructions of `stream` in order on this thread, with
  /// `kctx`; returns the first error (or, on stream 0, the collective's
  /// error that stopped it).
  Status runStream(int stream, InstructionContext &kctx);

  /// Stream 1's end (its status) for the caller's join.
  void finishCommunication(Status status) {
    std::lock_guard<std::mutex> lock(m_);
    commStatus_ = std::move(status);
    commFinished_ = true;
    if (!commStatus_.isOk())
      commFailed_.store(true, std::memory_order_relaxed);
    cv_.notify_all();
  }
  /// Stream 0 failed: stream 1 stops before its next instruction.
  void abortCommunication() {
    std::lock_guard<std::mutex> lock(m_);
    abort_ = true;
    cv_.notify_all();
  }
  Status joinCommunication() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return commFinished_; });
    return commStatus_;
  }

  std::mutex &shared() { return shared_; }

private:
  /// Waits until instruction `j` (of the other stream) completed. False
  /// when the other stream stopped instead (failure or abort).
  bool awaitInstruction(int stream, int j, int track);
  void complete(int index);
  void releaseUses(const InstructionInfo &instr);

  const Program &program_;
  RunContext &ctx_;
  const StreamExecution &streams_;
  std::mutex shared_; // arena, slot release, symbol bindings

  std::mutex m_; // done_, the flags, commStatus_
  std::condition_variable cv_;
  std::vector<char> &done_;
  bool abort_ = false;
  bool commFinished_ = false;
  std::atomic<bool> commFailed_{false};
  Status commStatus_;
  std::vector<int> &uses_; // per slot: uses still to come (under shared_)
};

bool StreamRun::awaitInstruction(int stream, int j, int track) {
  std::unique_lock<std::mutex> lock(m_);
  auto ready = [&] {
    return done_[j] || (stream == 0 ? commFinished_ : abort_);
  };
  if (ready())
    return done_[j];
  const int64_t begin = streams_.trace ? RunTrace::nowNs() : 0;
  cv_.wait(lock, ready);
  if (streams_.trace)
    streams_.trace->tracks[track].push_back(
        {j, track, true, begin, RunTrace::nowNs(), 0});
  return done_[j];
}

void StreamRun::complete(int index) {
  if (!streams_.schedule->awaited[index])
    return; // nobody waits for it: its stream's order is enough
  std::lock_guard<std::mutex> lock(m_);
  done_[index] = 1;
  cv_.notify_all();
}

void StreamRun::releaseUses(const InstructionInfo &instr) {
  std::lock_guard<std::mutex> lock(shared_);
  for (const std::vector<int> *slots : {&instr.inputs, &instr.outputs})
    for (int s : *slots) {
      if (s < 0 || --uses_[s] > 0)
        continue;
      const SlotInfo &info = program_.slots[s];
      if (info.isOutput || info.kind == SlotInfo::Kind::kConstant)
        continue;
      SlotState &slot = ctx_.slots[s];
      if (slot.block >= 0)
        ctx_.arena.release(slot.block);
      slot.block = -1;
      slot.tensor = Tensor();
    }
}

Status StreamRun::runStream(int stream, InstructionContext &kctx) {
  const int track = stream;
  const StreamSchedule &schedule = *streams_.schedule;
  for (size_t index = 0; index < program_.instructions.size(); ++index) {
    const InstructionInfo &instr = program_.instructions[index];
    if (instr.stream != stream)
      continue;
    if (stream == 0 && commFailed_.load(std::memory_order_relaxed))
      return joinCommunication();
    for (int j : schedule.awaits[index])
      if (!awaitInstruction(stream, j, track))
        return stream == 0
                   ? joinCommunication()
                   : failedPrecondition("stream 1 stopped: stream 0 failed");
    if (stream == 1 && streams_.commDelayMicros > 0)
      std::this_thread::sleep_for(
          std::chrono::microseconds(streams_.commDelayMicros));
    kctx.setInstruction(&instr);
    const int64_t begin = streams_.trace ? RunTrace::nowNs() : 0;
    Status status = instr.kernel->run(kctx);
    if (streams_.trace) {
      int64_t bytes = 0;
      if (status.isOk()) {
        std::lock_guard<std::mutex> lock(shared_);
        bytes = instructionBytes(instr, ctx_);
      }
      streams_.trace->tracks[track].push_back({static_cast<int>(index), track,
                                               false, begin, RunTrace::nowNs(),
                                               bytes});
    }
    kctx.releaseScratch(true);
    if (!status.isOk()) {
      if (status.message().find(instr.location) == std::string::npos)
        return status.withContext(instr.location);
      return status;
    }
    for (int i = 0; i < static_cast<int>(instr.outputs.size()); ++i)
      EMBER_RETURN_IF_ERROR(checkOutput(program_, instr, i, ctx_, &shared_));
    releaseUses(instr);
    complete(static_cast<int>(index));
  }
  return Status::ok();
}

} // namespace

Status executeStreams(const Program &program, RunContext &ctx, ThreadPool &pool,
                      BoundsCheckMode boundsCheck, Communicator *comm,
                      const StreamExecution &streams) {
  if (!streams.schedule || !streams.schedule->concurrent ||
      !streams.commThread || !streams.commPool)
    return internalError("executeStreams: the program has no stream 1 to "
                         "run concurrently");
  for (size_t s = 0; s < program.slots.size(); ++s)
    if (program.slots[s].kind == SlotInfo::Kind::kConstant)
      ctx.slots[s].tensor = program.constants[s];
  EMBER_RETURN_IF_ERROR(
      ctx.staticArena.reserve(static_cast<size_t>(program.staticArenaBytes)));

  StreamRun run(program, ctx, streams);
  InstructionContext computeCtx(program, ctx, pool, boundsCheck, comm, nullptr,
                                &run.shared());
  InstructionContext commCtx(program, ctx, *streams.commPool, boundsCheck, comm,
                             nullptr, &run.shared(), /*thread=*/1);
  streams.commThread->submit([&run, &commCtx] {
    // Nothing may escape the thread (std::terminate); the run must end.
    Status status;
    try {
      status = run.runStream(1, commCtx);
    } catch (const std::bad_alloc &) {
      status = resourceExhausted("out of memory on the communication thread");
    } catch (...) {
      status = internalError("an exception on the communication thread");
    }
    run.finishCommunication(std::move(status));
  });
  // The communication thread holds references into this frame: whatever
  // happens here, it is joined before returning.
  Status status;
  try {
    status = run.runStream(0, computeCtx);
  } catch (const std::bad_alloc &) {
    status = resourceExhausted("out of memory while running stream 0");
  } catch (...) {
    status = internalError("an exception while running stream 0");
  }
  if (!status.isOk())
    run.abortCommunication();
  // The communication thread uses this run's memory until it is done.
  Status commStatus = run.joinCommunication();
  if (!status.isOk())
    return status;
  return commStatus;
}

} // namespace ember
