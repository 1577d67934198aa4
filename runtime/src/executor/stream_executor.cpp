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

  /// Runs, in order on thread `thread` (0: the caller's, 1: the
  /// communication thread, 2: the collective thread) with `kctx`, the
  /// instructions [begin, end) of stream `stream` (-1: of every stream),
  /// waiting for the instructions of the other stream at or after `waitFrom`
  /// that they await (those before it are known to be done); returns the first
  /// error (or, on the caller's thread, the communication thread's error that
  /// stopped it).
  Status runInstructions(int thread, InstructionContext &kctx, size_t begin,
                         size_t end, int stream, size_t waitFrom);

  /// A job of this run was queued on the communication thread.
  void jobQueued() {
    std::lock_guard<std::mutex> lock(m_);
    ++jobsPending_;
  }
  /// A job of the communication thread ended with `status`; `last`: the
  /// run's last one (stream 1 is done), else the input distribution.
  void finishJob(Status status, bool last) {
    std::lock_guard<std::mutex> lock(m_);
    --jobsPending_;
    if (!status.isOk() && commStatus_.isOk()) {
      commStatus_ = std::move(status);
      commFailed_.store(true, std::memory_order_relaxed);
    }
    if (last || commFailed_.load(std::memory_order_relaxed))
      commFinished_ = true;
    if (!last)
      inputsDistributed_ = true;
    cv_.notify_all();
  }
  /// Whether the communication thread should not start (or go on with)
  /// this run's work: it failed, or the run was aborted.
  bool stopped() {
    std::lock_guard<std::mutex> lock(m_);
    return abort_ || commFailed_.load(std::memory_order_relaxed);
  }
  /// Stream 0 failed (or the pipeline gave up): stream 1 stops before its
  /// next instruction.
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
  /// Waits on thread `thread` until the input distribution ran (or the
  /// communication failed, or, on a communication thread, the run was
  /// aborted); a trace names the wait after instruction `awaited` (its
  /// last collective).
  Status awaitInputDistribution(int thread, int awaited) {
    std::unique_lock<std::mutex> lock(m_);
    auto ready = [&] {
      return inputsDistributed_ || commFinished_ || (thread != 0 && abort_);
    };
    if (!ready()) {
      const int64_t begin = streams_.trace ? RunTrace::nowNs() : 0;
      cv_.wait(lock, ready);
      if (streams_.trace)
        streams_.trace->tracks[thread].push_back(
            {awaited, thread, true, begin, RunTrace::nowNs(), 0});
    }
    if (thread != 0 && abort_)
      return failedPrecondition("stream 1 stopped: stream 0 failed");
    return commStatus_;
  }
  /// Waits until no job of this run is queued or running.
  void drain() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return jobsPending_ == 0; });
  }

  std::mutex &shared() { return shared_; }

private:
  /// Waits until instruction `j` (of the other thread) completed. False
  /// when the other thread stopped instead (failure or abort).
  bool awaitInstruction(int thread, int j);
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
  bool inputsDistributed_ = false;
  int jobsPending_ = 0;
  std::atomic<bool> commFailed_{false};
  Status commStatus_;
  std::vector<int> &uses_; // per slot: uses still to come (under shared_)
};

bool StreamRun::awaitInstruction(int thread, int j) {
  std::unique_lock<std::mutex> lock(m_);
  auto ready = [&] {
    return done_[j] || (thread == 0 ? commFinished_ : abort_);
  };
  if (ready())
    return done_[j];
  const int64_t begin = streams_.trace ? RunTrace::nowNs() : 0;
  cv_.wait(lock, ready);
  if (streams_.trace)
    streams_.trace->tracks[thread].push_back(
        {j, thread, true, begin, RunTrace::nowNs(), 0});
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

Status StreamRun::runInstructions(int thread, InstructionContext &kctx,
                                  size_t begin, size_t end, int stream,
                                  size_t waitFrom) {
  const StreamSchedule &schedule = *streams_.schedule;
  for (size_t index = begin; index < end; ++index) {
    const InstructionInfo &instr = program_.instructions[index];
    if (stream >= 0 && instr.stream != stream)
      continue;
    if (thread == 0 && commFailed_.load(std::memory_order_relaxed))
      return joinCommunication();
    if (thread != 0 && stopped())
      return failedPrecondition("stream 1 stopped: stream 0 failed");
    for (int j : schedule.awaits[index])
      if (static_cast<size_t>(j) >= waitFrom && !awaitInstruction(thread, j))
        return thread == 0
                   ? joinCommunication()
                   : failedPrecondition("stream 1 stopped: stream 0 failed");
    // The test delay stands for a slower link: a trace counts it in the
    // instruction's time.
    const int64_t start = streams_.trace ? RunTrace::nowNs() : 0;
    if (thread != 0 && streams_.commDelayMicros > 0)
      std::this_thread::sleep_for(
          std::chrono::microseconds(streams_.commDelayMicros));
    kctx.setInstruction(&instr);
    Status status = instr.kernel->run(kctx);
    if (streams_.trace) {
      int64_t bytes = 0;
      if (status.isOk()) {
        std::lock_guard<std::mutex> lock(shared_);
        bytes = instructionBytes(instr, ctx_);
      }
      streams_.trace->tracks[thread].push_back({static_cast<int>(index),
                                                thread, false, start,
                                                RunTrace::nowNs(), bytes});
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

/// Runs `body` on `thread` (a communication thread) as a job of `run`;
/// nothing may escape the thread (std::terminate). Skipped when the run
/// stopped.
template <typename Body>
void submitJob(CommunicationThread &thread, StreamRun &run, bool last,
               Body body) {
  run.jobQueued();
  try {
    thread.submit([&run, last, body] {
      Status status;
      try {
        status = run.stopped()
                     ? failedPrecondition("stream 1 stopped: stream 0 failed")
                     : body();
      } catch (const std::bad_alloc &) {
        status =
            resourceExhausted("out of memory on the communication thread");
      } catch (...) {
        status = internalError("an exception on the communication thread");
      }
      run.finishJob(std::move(status), last);
    });
  } catch (...) {
    run.finishJob(internalError("the communication thread did not start"),
                  last);
    throw;
  }
}

Status checkStreams(const StreamExecution &streams) {
  if (!streams.schedule || !streams.schedule->concurrent ||
      !streams.commThread || !streams.commPool)
    return internalError("executeStreams: the program has no stream 1 to "
                         "run concurrently");
  if (streams.collectiveThread &&
      (!streams.collectivePool || !streams.collectiveComm))
    return internalError("executeStreams: a collective thread without its "
                         "pool or communicator channel");
  return Status::ok();
}

Status prepare(const Program &program, RunContext &ctx) {
  for (size_t s = 0; s < program.slots.size(); ++s)
    if (program.slots[s].kind == SlotInfo::Kind::kConstant)
      ctx.slots[s].tensor = program.constants[s];
  return ctx.staticArena.reserve(
      static_cast<size_t>(program.staticArenaBytes));
}

} // namespace

Status executeStreams(const Program &program, RunContext &ctx, ThreadPool &pool,
                      const KernelSettings &settings, Communicator *comm,
                      const StreamExecution &streams) {
  EMBER_RETURN_IF_ERROR(checkStreams(streams));
  EMBER_RETURN_IF_ERROR(prepare(program, ctx));
  const size_t n = program.instructions.size();
  StreamRun run(program, ctx, streams);
  InstructionContext computeCtx(program, ctx, pool, settings, comm, nullptr,
                                &run.shared());
  InstructionContext commCtx(program, ctx, *streams.commPool, settings, comm,
                             nullptr, &run.shared(), /*thread=*/1);
  submitJob(*streams.commThread, run, /*last=*/true, [&run, &commCtx, n] {
    return run.runInstructions(1, commCtx, 0, n, 1, 0);
  });
  // The communication thread holds references into this frame: whatever
  // happens here, it is joined before returning.
  Status status;
  try {
    status = run.runInstructions(0, computeCtx, 0, n, 0, 0);
  } catch (const std::bad_alloc &) {
    status = resourceExhausted("out of memory while running stream 0");
  } catch (...) {
    status = internalError("an exception while running stream 0");
  }
  if (!status.isOk())
    run.abortCommunication();
  // The communication thread uses this run's memory until it is done.
  Status commStatus = run.joinCommunication();
  run.drain();
  if (!status.isOk())
    return status;
  return commStatus;
}

// --- PipelinedBatch ---------------------------------------------------------

struct PipelinedBatch::State {
  State(const Program &program, RunContext &ctx, ThreadPool &pool,
        const KernelSettings &settings, Communicator *comm,
        const StreamExecution &streams, const PipelineStages &stages)
      : streams(streams), run(program, ctx, this->streams),
        computeCtx(program, ctx, pool, settings, comm, nullptr, &run.shared()),
        commCtx(program, ctx, *streams.commPool, settings, comm, nullptr,
                &run.shared(), /*thread=*/1),
        collectiveThread(streams.collectiveThread ? 2 : 1),
        collectiveCtx(
            program, ctx,
            collectiveThread == 2 ? *streams.collectivePool : *streams.commPool,
            settings, collectiveThread == 2 ? streams.collectiveComm : comm,
            nullptr, &run.shared(), collectiveThread),
        stageEnd(static_cast<size_t>(stages.inputDistributionEnd)),
        aheadEnd(static_cast<size_t>(stages.computeAheadEnd)),
        end(program.instructions.size()),
        lastInputCollective(stages.lastInputCollective) {}
  StreamExecution streams;
  StreamRun run;
  InstructionContext computeCtx, commCtx;
  int collectiveThread; // the thread of stage B's collectives: 1 or 2
  InstructionContext collectiveCtx;
  size_t stageEnd, aheadEnd, end;
  int lastInputCollective;
  bool collectivesQueued = false;
  bool computedAhead = false;
  Status status; // the first failure on the caller's thread
};

PipelinedBatch::PipelinedBatch() = default;
PipelinedBatch::~PipelinedBatch() { abandon(); }

Status PipelinedBatch::start(const Program &program, RunContext &ctx,
                             ThreadPool &pool, const KernelSettings &settings,
                             Communicator *comm, const StreamExecution &streams,
                             const PipelineStages &stages) {
  EMBER_RETURN_IF_ERROR(checkStreams(streams));
  const size_t n = program.instructions.size();
  if (stages.inputDistributionEnd <= 0 ||
      static_cast<size_t>(stages.inputDistributionEnd) > n ||
      stages.computeAheadEnd < stages.inputDistributionEnd ||
      static_cast<size_t>(stages.computeAheadEnd) > n)
    return internalError("PipelinedBatch: the program has no input "
                         "distribution to pipeline");
  EMBER_RETURN_IF_ERROR(prepare(program, ctx));
  state_ = std::make_unique<State>(program, ctx, pool, settings, comm, streams,
                                   stages);
  State *s = state_.get();
  try {
    submitJob(*s->streams.commThread, s->run, /*last=*/false, [s] {
      return s->run.runInstructions(1, s->commCtx, 0, s->stageEnd, -1, 0);
    });
  } catch (...) {
    state_.reset();
    return internalError("the communication thread did not start");
  }
  return Status::ok();
}

Status PipelinedBatch::queueCollectives() {
  State *s = state_.get();
  if (!s)
    return internalError("PipelinedBatch::queueCollectives without start");
  if (s->collectivesQueued)
    return Status::ok();
  // After what is already queued on the same thread (on the
  // communication thread: the input distribution of the batches ahead):
  // the same order on every rank. On the collective thread, the batch's
  // input distribution (stream 1 before these, on the other thread) must
  // have run first.
  s->collectivesQueued = true;
  const int thread = s->collectiveThread;
  try {
    submitJob(
        thread == 2 ? *s->streams.collectiveThread : *s->streams.commThread,
        s->run, /*last=*/true, [s, thread] {
          if (thread == 2) {
            Status ready =
                s->run.awaitInputDistribution(thread, s->lastInputCollective);
            if (!ready.isOk())
              return ready;
          }
          return s->run.runInstructions(
              thread, thread == 2 ? s->collectiveCtx : s->commCtx, s->stageEnd,
              s->end, 1, s->stageEnd);
        });
  } catch (...) {
    s->status = internalError("the communication thread did not start");
    s->run.abortCommunication();
    return s->status;
  }
  return Status::ok();
}

Status PipelinedBatch::computeAhead() {
  State *s = state_.get();
  if (!s)
    return internalError("PipelinedBatch::computeAhead without start");
  if (s->computedAhead || !s->status.isOk())
    return s->status;
  s->computedAhead = true;
  Status status = s->run.awaitInputDistribution(0, s->lastInputCollective);
  if (status.isOk()) {
    try {
      status = s->run.runInstructions(0, s->computeCtx, s->stageEnd,
                                      s->aheadEnd, 0, s->stageEnd);
    } catch (const std::bad_alloc &) {
      status = resourceExhausted("out of memory while running stream 0");
    } catch (...) {
      status = internalError("an exception while running stream 0");
    }
  }
  if (!status.isOk()) {
    s->status = status;
    s->run.abortCommunication();
  }
  return status;
}

Status PipelinedBatch::finish() {
  State *s = state_.get();
  if (!s)
    return internalError("PipelinedBatch::finish without start");
  Status status = queueCollectives();
  if (status.isOk())
    status = computeAhead();
  if (status.isOk()) {
    try {
      status = s->run.runInstructions(0, s->computeCtx, s->aheadEnd, s->end,
                                      0, s->stageEnd);
    } catch (const std::bad_alloc &) {
      status = resourceExhausted("out of memory while running stream 0");
    } catch (...) {
      status = internalError("an exception while running stream 0");
    }
  }
  if (!status.isOk())
    s->run.abortCommunication();
  // The communication thread uses this batch's memory until it is done;
  // when the rest of stream 1 was never queued, only the input
  // distribution's job is waited for.
  Status commStatus =
      s->collectivesQueued ? s->run.joinCommunication() : Status::ok();
  s->run.drain();
  state_.reset();
  if (!status.isOk())
    return status;
  return commStatus;
}
void PipelinedBatch::cancel() {
  if (state_)
    state_->run.abortCommunication();
}

void PipelinedBatch::abandon() {
  if (!state_)
    return;
  state_->run.abortCommunication();
  state_->run.drain();
  state_.reset();
}

} // namespace ember
