//===- stream_executor.h - A plan's two streams on two threads --*- C++ -*-===//
//
// The CPU backend's overlap of communication and compute
// (docs/runtime.md, "Overlapping communication"): the instructions of
// stream 0 run in order on the calling thread, those of stream 1 (the
// collectives) in order on the session's communication thread, and the
// plan's events are the only synchronization between them: an instruction
// first waits until the instructions of the other stream that its
// wait_events name (stream_schedule.h) have completed. The results are
// those of program order, bit for bit: every value an instruction reads was
// written before the wait it needs, which the load-time check guarantees.
//
// Memory: a slot's dynamic memory is freed when its last user on either
// stream is done (counted, not by program order); the static arena's plan
// was checked at load against the streams. Kernels of stream 0 use the
// session's thread pool; those of stream 1 run on the communication thread
// alone (`commPool`, a pool of size 1).
//
// Errors: a collective that fails (or times out) stops stream 1; stream 0
// stops at its next instruction or wait and the run returns the
// collective's error. A kernel failing on stream 0 stops stream 1 before
// its next instruction (one in flight completes or times out first). The
// run returns only when the communication thread is done with it.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_EXECUTOR_STREAM_EXECUTOR_H
#define EMBER_EXECUTOR_STREAM_EXECUTOR_H

#include "executor/executor.h"
#include "executor/pipeline_stages.h"
#include "executor/stream_schedule.h"

#include <memory>

namespace ember {

class CommunicationThread;
struct RunTrace;

struct StreamExecution {
  const StreamSchedule *schedule = nullptr; // schedule->concurrent is true
  CommunicationThread *commThread = nullptr;
  ThreadPool *commPool = nullptr; // size 1
  RunTrace *trace = nullptr;      // not null: record the timings
  /// Pipelined runs, when the communicator has a second channel: stage B's
  /// collectives run on this thread (with its pool of one, over that
  /// channel) beside the input distribution on `commThread`, so that one
  /// batch's output distribution and a later batch's input distribution
  /// share the link instead of taking turns. Null: both on `commThread`.
  CommunicationThread *collectiveThread = nullptr;
  ThreadPool *collectivePool = nullptr;
  Communicator *collectiveComm = nullptr;
  /// Test-only (EMBER_TEST_COMM_DELAY_US): the communication thread sleeps
  /// this long before each instruction, so that missing waits show.
  int64_t commDelayMicros = 0;
};

Status executeStreams(const Program &program, RunContext &ctx, ThreadPool &pool,
                      const KernelSettings &settings, Communicator *comm,
                      const StreamExecution &streams);

/// One batch of a pipelined run (docs/runtime.md, "Cross-batch
/// pipelining"; the stages: pipeline_stages.h):
///   - `start` queues the batch's input distribution (stage A: the
///     program's first instructions, of both streams) on the communication
///     thread;
///   - `queueCollectives` queues the rest of its stream 1 (stage B's
///     collectives) on the collective thread, where it starts once the
///     batch's input distribution has run (without one: on the
///     communication thread, after whatever was queued since);
///   - `computeAhead` waits for the input distribution and runs, on the
///     calling thread, the stream-0 instructions of stage B that wait for
///     no stage-B collective (the caller runs them for the next batch
///     before finishing this one);
///   - `finish` does whichever of the two has not been done, runs the rest
///     of stream 0 and returns when the communication thread is done with
///     the batch.
/// Every rank calls these in the same order, so the collectives of each
/// thread pair up (each thread exchanges over its own channel).
/// Destroying (or `abandon`ing) a started batch stops its queued work
/// before its next instruction and waits for the communication thread to
/// let go of it. `streams` and the run context must outlive the batch.
class PipelinedBatch {
public:
  PipelinedBatch();
  ~PipelinedBatch();
  PipelinedBatch(const PipelinedBatch &) = delete;
  PipelinedBatch &operator=(const PipelinedBatch &) = delete;

  Status start(const Program &program, RunContext &ctx, ThreadPool &pool,
               const KernelSettings &settings, Communicator *comm,
               const StreamExecution &streams, const PipelineStages &stages);
  Status queueCollectives();
  Status computeAhead();
  Status finish();
  /// Stops the batch's queued work before its next instruction (returns at
  /// once; `abandon` then waits for it).
  void cancel();
  void abandon();

private:
  struct State;
  std::unique_ptr<State> state_;
};

} // namespace ember

#endif // EMBER_EXECUTOR_STREAM_EXECUTOR_H
