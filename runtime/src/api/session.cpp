//===- session.cpp - Loading and running Ember plans ----------------------===//
#include "ember/session.h"

#include "comm/comm_options.h"
#include "comm/communicator.h"

#include "executor/executor.h"
#include "executor/input_binding.h"
#include "executor/pipeline_stages.h"
#include "executor/run_context.h"
#include "executor/run_trace.h"
#include "executor/stream_executor.h"
#include "executor/stream_schedule.h"
#include "kernels/kernel_registry.h"
#include "kernels/quantized_sums.h"
#include "plan/loader.h"
#include "plan/xxhash64.h"
#include "threading/communication_thread.h"
#include "threading/thread_pool.h"

#ifdef EMBER_HAVE_CUDA
#include "cuda/cuda_kernels.h"
#include "cuda/cuda_session.h"
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>

namespace ember {

bool haveCudaBackend() {
#ifdef EMBER_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

std::vector<std::string> cudaKernelNames() {
#ifdef EMBER_HAVE_CUDA
  return cuda::cudaKernels().names();
#else
  return {};
#endif
}

// --- RunInputs / RunOutputs -------------------------------------------------

RunInputs::Entry &RunInputs::entryFor(std::string_view name) {
  for (Entry &e : entries_)
    if (e.name == name)
      return e;
  entries_.emplace_back();
  entries_.back().name = std::string(name);
  return entries_.back();
}

RunInputs &RunInputs::set(std::string_view name, Tensor tensor) {
  Entry &e = entryFor(name);
  e.isKjt = false;
  e.tensor = std::move(tensor);
  e.kjt = KeyedJaggedTensor();
  return *this;
}

RunInputs &RunInputs::set(std::string_view name, KeyedJaggedTensor kjt) {
  Entry &e = entryFor(name);
  e.isKjt = true;
  e.tensor = Tensor();
  e.kjt = std::move(kjt);
  return *this;
}

const Tensor *RunOutputs::find(std::string_view name) const {
  for (const auto &e : entries_)
    if (e.first == name)
      return &e.second;
  return nullptr;
}

// --- Session ----------------------------------------------------------------

struct Session::Impl {
  std::shared_ptr<const Program> program;
  SessionOptions options;
  /// What every kernel of a run is told (options.boundsCheck and the
  /// quantized sums' order options.quantizedSums chose).
  KernelSettings kernelSettings;
  std::unique_ptr<ThreadPool> pool;
  /// Multi-rank sessions: the communicator, and one run at a time (every
  /// rank must issue its collectives in the same order).
  std::unique_ptr<Communicator> comm;
  mutable std::mutex runMutex;
  /// The plan's streams (checked at load) and, when stream 1 runs
  /// concurrently, the thread it runs on and its pool of one.
  StreamSchedule schedule;
  bool overlap = false;
  /// Cross-batch pipelining: where the input distribution and the
  /// compute-ahead part end (pipeline_stages.h); no input distribution
  /// when the plan has no marks.
  PipelineStages pipelineStages;
  std::string planPath;
  int64_t commDelayMicros = 0; // EMBER_TEST_COMM_DELAY_US (tests only)
  std::unique_ptr<ThreadPool> commPool;
  std::unique_ptr<CommunicationThread> commThread;
  /// Pipelined runs of several ranks: stage B's collectives on a thread of
  /// their own over a second channel of `comm` (stream_executor.h), beside
  /// the input distribution on `commThread`. Declared after `comm`, so
  /// joined and closed before it. None with EMBER_TEST_ONE_COMM_THREAD=1
  /// (tests only: the single-thread schedule), or when the communicator
  /// has no channels.
  std::unique_ptr<Communicator> collectiveChannel;
  std::unique_ptr<ThreadPool> collectivePool;
  std::unique_ptr<CommunicationThread> collectiveThread;
  /// SessionOptions::recordTrace: the runs recorded since takeTrace.
  mutable std::mutex traceMutex;
  mutable std::vector<std::vector<TraceSlice>> tracedRuns;
#ifdef EMBER_HAVE_CUDA
  /// Set when the program runs on a CUDA device.
  std::unique_ptr<cuda::CudaSession> cuda;
#endif

  mutable std::mutex mutex;
  mutable std::vector<std::unique_ptr<RunContext>> idle;
  mutable int64_t created = 0; // contexts ever made (peak concurrency)
  mutable std::atomic<int64_t> runs{0};

  std::unique_ptr<RunContext> acquire() const {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!idle.empty()) {
        std::unique_ptr<RunContext> ctx = std::move(idle.back());
        idle.pop_back();
        return ctx;
      }
    }
    auto ctx = std::make_unique<RunContext>(*program);
    std::lock_guard<std::mutex> lock(mutex);
    ++created;
    if (idle.capacity() < static_cast<size_t>(created))
      idle.reserve(static_cast<size_t>(created) * 2);
    return ctx;
  }
  /// Keeps a recorded run for takeTrace.
  void keepTrace(RunTrace &trace) const {
    std::vector<TraceSlice> slices = std::move(trace.tracks[0]);
    for (int t : {1, 2})
      slices.insert(slices.end(), trace.tracks[t].begin(),
                    trace.tracks[t].end());
    std::lock_guard<std::mutex> lock(traceMutex);
    tracedRuns.push_back(std::move(slices));
  }
  /// Copies the outputs of the run in `ctx` into `outputs`.
  Status collectOutputs(const RunContext &ctx, RunOutputs *outputs) const;
  static void clearOutputs(RunOutputs *outputs) {
    outputs->entries_.clear();
    outputs->invalidIds_ = 0;
  }
  void giveBack(std::unique_ptr<RunContext> ctx) const {
    ctx->reset();
    std::lock_guard<std::mutex> lock(mutex);
    idle.push_back(std::move(ctx));
  }
};

namespace {
/// SessionOptions::maxTensorBytes, else EMBER_MAX_TENSOR_BYTES, else the
/// default.
Result<int64_t> effectiveMaxTensorBytes(const SessionOptions &options) {
  if (options.maxTensorBytes < 0)
    return invalidArgument("SessionOptions.maxTensorBytes " +
                           std::to_string(options.maxTensorBytes) +
                           " is negative (0 = the default)");
  if (options.maxTensorBytes > 0)
    return options.maxTensorBytes;
  const char *env = std::getenv("EMBER_MAX_TENSOR_BYTES");
  if (!env || !*env)
    return kDefaultMaxTensorBytes;
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(env, &end, 10);
  if (errno != 0 || *end != '\0' || value <= 0 || end == env)
    return invalidArgument(std::string("EMBER_MAX_TENSOR_BYTES '") + env +
                           "' is not a positive number of bytes");
  return static_cast<int64_t>(value);
}
/// SessionOptions::quantizedSums: "fast", "fbgemm", or "auto" (the process
/// default: EMBER_QUANTIZED_SUMS, else fast).
Result<embedding::QuantizedSums>
parseSessionQuantizedSums(const std::string &name) {
  if (name == "auto")
    return embedding::quantizedSums();
  if (std::optional<embedding::QuantizedSums> sums =
          embedding::parseQuantizedSums(name))
    return *sums;
  return invalidArgument("SessionOptions.quantizedSums '" + name +
                         "': expected auto, fast or fbgemm");
}
/// EMBER_TEST_COMM_DELAY_US: microseconds the communication thread sleeps
/// before each instruction, so that tests see waits honoured (tests only).
Result<int64_t> testCommDelayMicros() {
  const char *env = std::getenv("EMBER_TEST_COMM_DELAY_US");
  if (!env || !*env)
    return int64_t{0};
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(env, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0 || value > 60000000)
    return invalidArgument(std::string("EMBER_TEST_COMM_DELAY_US '") + env +
                           "' is not a number of microseconds (0..60000000)");
  return static_cast<int64_t>(value);
}
/// XXH64 of the plan file: the rendezvous refuses a rank that loaded
/// another one (0 when it cannot be read: the load reports that).
uint64_t planFingerprint(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  XxHash64 hash;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof(buf));
    hash.update(buf, static_cast<size_t>(in.gcount()));
  }
  return in.bad() ? 0 : hash.digest();
}
} // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::load(const std::string &planPath,
                                               const SessionOptions &options) {
  return load(planPath, options, cpuKernels());
}

Result<std::unique_ptr<Session>> Session::load(const std::string &planPath,
                                               const SessionOptions &options,
                                               const KernelRegistry &kernels) {
  if (options.threads > 1024)
    return invalidArgument("SessionOptions.threads " +
                           std::to_string(options.threads) +
                           " is out of range");
  if (options.worldSize < 1 || options.worldSize > 65536 || options.rank < 0 ||
      options.rank >= options.worldSize)
    return invalidArgument(
        "SessionOptions: rank " + std::to_string(options.rank) +
        " is not in a world of " + std::to_string(options.worldSize));
  const bool onCuda = options.device != "cpu";
#ifdef EMBER_HAVE_CUDA
  int cudaDevice = 0;
  if (onCuda) {
    EMBER_ASSIGN_OR_RETURN(cudaDevice, cuda::parseCudaDevice(options.device));
  }
#else
  if (onCuda) {
    if (options.device != "cuda" && options.device.rfind("cuda:", 0) != 0)
      return invalidArgument("SessionOptions.device '" + options.device +
                             "': expected cpu, cuda or cuda:N");
    return unimplemented("SessionOptions.device '" + options.device +
                         "': this Ember runtime was built without the CUDA "
                         "backend (no nvcc at build time, or "
                         "EMBER_ENABLE_CUDA=OFF)");
  }
#endif
  if (options.overlap != "auto" && options.overlap != "streams" &&
      options.overlap != "off")
    return invalidArgument("SessionOptions.overlap '" + options.overlap +
                           "': expected auto, streams or off");
  KernelSettings kernelSettings;
  kernelSettings.boundsCheck = options.boundsCheck;
  EMBER_ASSIGN_OR_RETURN(kernelSettings.quantizedSums,
                         parseSessionQuantizedSums(options.quantizedSums));
  EMBER_ASSIGN_OR_RETURN(int64_t commDelayMicros, testCommDelayMicros());
  EMBER_ASSIGN_OR_RETURN(int64_t maxTensorBytes,
                         effectiveMaxTensorBytes(options));
  LoadOptions loadOptions;
  loadOptions.maxTensorBytes = maxTensorBytes;
  loadOptions.backend = onCuda ? "cuda" : "cpu";
  loadOptions.rank = options.rank;
  loadOptions.worldSize = options.worldSize;
  loadOptions.verifyChecksums = options.verifyChecksums;
  EMBER_ASSIGN_OR_RETURN(loadOptions.weightMemory,
                         parseWeightMemory(options.weightMemory));
  CommOptions comm;
  comm.rank = options.rank;
  comm.worldSize = options.worldSize;
  comm.rendezvous = options.rendezvous;
  comm.timeoutSeconds = options.collectiveTimeoutSeconds;
  comm.host = options.commHost;
  comm.storeBind = options.storeBind;
  // A rank that cannot load tells the others why at once instead of
  // leaving them waiting for it.
  auto refuse = [&](Status status) {
    if (options.worldSize > 1)
      announceRendezvousFailure(comm, status);
    return status;
  };
  auto program = loadProgram(planPath, loadOptions, kernels);
  if (!program)
    return refuse(program.status());
  auto inRankProgram = [&](const Status &status) {
    return status
        .withContext("rank " + std::to_string(options.rank) + " program")
        .withContext("plan '" + planPath + "'");
  };
  // The plan's streams and events must order everything that crosses
  // streams, whether or not this session runs them concurrently.
  auto schedule = buildStreamSchedule(**program);
  if (!schedule)
    return refuse(inRankProgram(schedule.status()));
  auto stages = findPipelineStages(**program, *schedule);
  if (!stages)
    return refuse(inRankProgram(stages.status()));
  auto impl = std::make_unique<Impl>();
  impl->program = std::move(*program);
  impl->schedule = std::move(*schedule);
  impl->pipelineStages = *stages;
  impl->planPath = planPath;
  impl->overlap =
      !onCuda && impl->schedule.concurrent && options.overlap != "off";
  impl->commDelayMicros = commDelayMicros;
  if (impl->overlap) {
    impl->commPool = std::make_unique<ThreadPool>(1);
    impl->commThread = std::make_unique<CommunicationThread>();
  }
  impl->options = options;
  impl->kernelSettings = kernelSettings;
  impl->options.maxTensorBytes = maxTensorBytes;
  if (options.worldSize > 1) {
    if (options.rendezvous.empty())
      return invalidArgument(
          "SessionOptions.rendezvous is empty: a session of " +
          std::to_string(options.worldSize) +
          " ranks needs file:DIR or tcp:HOST:PORT (or MASTER_ADDR/"
          "MASTER_PORT through applyLaunchEnvironment)");
    comm.planFingerprint = planFingerprint(planPath);
    size_t slash = planPath.rfind('/');
    comm.planName =
        slash == std::string::npos ? planPath : planPath.substr(slash + 1);
    EMBER_ASSIGN_OR_RETURN(impl->comm, createCommunicator(comm));
    const char *oneThread = std::getenv("EMBER_TEST_ONE_COMM_THREAD");
    if (impl->overlap && impl->pipelineStages.inputDistributionEnd > 0 &&
        !(oneThread && std::string(oneThread) == "1")) {
      impl->collectiveChannel = impl->comm->openChannel();
      if (impl->collectiveChannel) {
        impl->collectivePool = std::make_unique<ThreadPool>(1);
        impl->collectiveThread = std::make_unique<CommunicationThread>();
      }
    }
  }
  impl->pool = std::make_unique<ThreadPool>(options.threads);
#ifdef EMBER_HAVE_CUDA
  if (onCuda) {
    EMBER_ASSIGN_OR_RETURN(
        impl->cuda, cuda::CudaSession::create(
                        impl->program, cudaDevice, impl->comm.get(),
                        options.collectiveTimeoutSeconds, options.cudaGraphs));
  }
#endif
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

namespace {
/// Copies a run's output into `dst`, reusing its buffer when it fits.
Status copyOutput(const Tensor &src, Tensor &dst) {
  bool reuse =
      dst.defined() && dst.dtype() == src.dtype() && dst.shape() == src.shape();
  if (!reuse) {
    EMBER_ASSIGN_OR_RETURN(dst, Tensor::allocate(src.dtype(), src.shape()));
  }
  if (src.nbytes())
    std::memcpy(dst.data(), src.data(), src.nbytes());
  return Status::ok();
}
} // namespace

Status Session::Impl::collectOutputs(const RunContext &ctx,
                                     RunOutputs *outputs) const {
  auto &entries = outputs->entries_;
  bool sameNames = entries.size() == program->outputs.size();
  for (size_t i = 0; sameNames && i < entries.size(); ++i)
    sameNames = entries[i].first == program->outputs[i].name;
  if (!sameNames) {
    entries.clear();
    for (const OutputBinding &out : program->outputs)
      entries.emplace_back(out.name, Tensor());
  }
  for (size_t i = 0; i < program->outputs.size(); ++i)
    EMBER_RETURN_IF_ERROR(copyOutput(
        ctx.slots[program->outputs[i].slot].tensor, entries[i].second));
  outputs->invalidIds_ = ctx.invalidIds;
  return Status::ok();
}

Status Session::run(const RunInputs &inputs, RunOutputs *outputs) const {
  if (!outputs)
    return invalidArgument("Session::run: outputs is null");
  const Program &program = *impl_->program;
  std::unique_lock<std::mutex> serial(impl_->runMutex, std::defer_lock);
  if (impl_->comm)
    serial.lock();
#ifdef EMBER_HAVE_CUDA
  if (impl_->cuda) {
    Status status =
        impl_->cuda->run(inputs, outputs->entries_, &outputs->invalidIds_,
                         *impl_->pool, impl_->kernelSettings);
    if (!status.isOk())
      outputs->invalidIds_ = 0;
    impl_->runs.fetch_add(1, std::memory_order_relaxed);
    return status;
  }
#endif
  std::unique_ptr<RunContext> ctx = impl_->acquire();
  Status status = bindInputs(program, inputs, *ctx);
  std::unique_ptr<RunTrace> trace;
  if (impl_->options.recordTrace)
    trace = std::make_unique<RunTrace>();
  if (status.isOk() && impl_->overlap) {
    StreamExecution streams;
    streams.schedule = &impl_->schedule;
    streams.commThread = impl_->commThread.get();
    streams.commPool = impl_->commPool.get();
    streams.trace = trace.get();
    streams.commDelayMicros = impl_->commDelayMicros;
    status = executeStreams(program, *ctx, *impl_->pool, impl_->kernelSettings,
                            impl_->comm.get(), streams);
  } else if (status.isOk()) {
    status = executeProgram(program, *ctx, *impl_->pool, impl_->kernelSettings,
                            impl_->comm.get(), nullptr, trace.get());
  }
  if (trace && status.isOk())
    impl_->keepTrace(*trace);
  if (status.isOk())
    status = impl_->collectOutputs(*ctx, outputs);
  if (!status.isOk())
    impl_->clearOutputs(outputs);
  impl_->giveBack(std::move(ctx));
  impl_->runs.fetch_add(1, std::memory_order_relaxed);
  return status;
}

namespace {
/// Multi-rank runPipelined: every rank sends (batch count, depth) to every
/// other (one all-gather of two int64s on the session's communicator,
/// before anything else is issued), so that ranks called with different
/// ones fail the call together instead of pairing unrelated collectives
/// (which Gloo cannot survive: docs/runtime.md, "Cross-batch pipelining").
Status agreeOnPipelineShape(Communicator &comm, int64_t batches,
                            int64_t depth) {
  const int world = comm.worldSize();
  const int me = comm.rank();
  std::vector<int> group(world);
  for (int r = 0; r < world; ++r)
    group[r] = r;
  std::vector<int64_t> mine;
  mine.reserve(2 * static_cast<size_t>(world));
  for (int r = 0; r < world; ++r)
    mine.insert(mine.end(), {batches, depth});
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> all,
      exchangeCounts(&comm, group, me, mine, 2,
                     "runPipelined: agreeing on the batch count and depth"));
  for (int r = 0; r < world; ++r) {
    if (all[2 * r] == batches && all[2 * r + 1] == depth)
      continue;
    return invalidArgument(
        "runPipelined: rank " + std::to_string(me) + " passed " +
        std::to_string(batches) + " batch(es) at depth " +
        std::to_string(depth) + ", rank " + std::to_string(r) + " passed " +
        std::to_string(all[2 * r]) + " at depth " +
        std::to_string(all[2 * r + 1]) + "; every rank must pass the same");
  }
  return Status::ok();
}
} // namespace

Status Session::runPipelined(const std::vector<RunInputs> &batches, int depth,
                             std::vector<RunOutputs> *outputs) const {
  if (!outputs)
    return invalidArgument("Session::runPipelined: outputs is null");
  // First of all, at every depth (depth 1 pairs run's collectives too):
  // the ranks agree on what they were asked.
  if (impl_->comm) {
    Status agreed;
    {
      std::lock_guard<std::mutex> serial(impl_->runMutex);
      agreed = agreeOnPipelineShape(
          *impl_->comm, static_cast<int64_t>(batches.size()), depth);
    }
    if (!agreed.isOk()) {
      outputs->clear();
      return agreed;
    }
  }
  if (depth < 1) {
    outputs->clear();
    return invalidArgument("Session::runPipelined: pipeline depth " +
                           std::to_string(depth) + ": expected 1 or more");
  }
  // Depth 1 (or a single batch): `run` per batch.
  auto oneByOne = [&]() -> Status {
    outputs->resize(batches.size());
    for (size_t b = 0; b < batches.size(); ++b) {
      Status status = run(batches[b], &(*outputs)[b]);
      if (!status.isOk()) {
        outputs->clear();
        return status.withContext("batch " + std::to_string(b));
      }
    }
    return Status::ok();
  };
  if (depth == 1)
    return oneByOne();
  const std::string what = "pipeline depth " + std::to_string(depth) + ": ";
  if (impl_->pipelineStages.inputDistributionEnd == 0) {
    outputs->clear();
    return invalidArgument(
        what + "plan '" + impl_->planPath +
        "' marks no input distribution to pipeline (no instruction has "
        "input_distribution: a single-rank plan, or one compiled before "
        "pipelining; recompile it with ember-compile), or use depth 1");
  }
  if (!impl_->overlap) {
    outputs->clear();
    return invalidArgument(
        what + "pipelining runs the communication on its own thread: it "
               "needs overlap 'auto' or 'streams' (this session runs " +
        std::string(impl_->options.overlap == "off"
                         ? "with overlap 'off'"
                         : "the plan on a device") +
        ")");
  }
  if (batches.size() <= 1)
    return oneByOne();
  outputs->resize(batches.size());
  const Program &program = *impl_->program;
  std::unique_lock<std::mutex> serial(impl_->runMutex, std::defer_lock);
  if (impl_->comm)
    serial.lock();

  // Every batch's inputs are checked before any collective is issued: a
  // bad batch fails the call here, not halfway with collectives in flight.
  {
    std::unique_ptr<RunContext> check = impl_->acquire();
    Status status;
    for (size_t b = 0; b < batches.size() && status.isOk(); ++b) {
      status = bindInputs(program, batches[b], *check);
      if (!status.isOk())
        status = status.withContext("batch " + std::to_string(b));
      check->reset();
    }
    impl_->giveBack(std::move(check));
    if (!status.isOk()) {
      outputs->clear();
      return status;
    }
  }
  // Batches in flight, oldest first; each owns its run context.
  struct InFlight {
    size_t index = 0;
    std::unique_ptr<RunContext> ctx;
    std::unique_ptr<RunTrace> trace;
    StreamExecution streams;
    PipelinedBatch batch;
  };
  std::deque<std::unique_ptr<InFlight>> inFlight;
  auto giveUp = [&](Status status) {
    // All are stopped first, so that none waits behind another's work.
    for (auto &f : inFlight)
      f->batch.cancel();
    while (!inFlight.empty()) {
      inFlight.back()->batch.abandon();
      impl_->giveBack(std::move(inFlight.back()->ctx));
      inFlight.pop_back();
    }
    outputs->clear();
    return status;
  };
  size_t next = 0;
  auto startNext = [&]() -> Status {
    auto f = std::make_unique<InFlight>();
    f->index = next;
    f->ctx = impl_->acquire();
    const std::string batchName = "batch " + std::to_string(next);
    Status status = bindInputs(program, batches[next], *f->ctx);
    if (!status.isOk()) {
      impl_->giveBack(std::move(f->ctx));
      return status.withContext(batchName);
    }
    if (impl_->options.recordTrace)
      f->trace = std::make_unique<RunTrace>();
    f->streams.schedule = &impl_->schedule;
    f->streams.commThread = impl_->commThread.get();
    f->streams.commPool = impl_->commPool.get();
    f->streams.collectiveThread = impl_->collectiveThread.get();
    f->streams.collectivePool = impl_->collectivePool.get();
    f->streams.collectiveComm = impl_->collectiveChannel.get();
    f->streams.trace = f->trace.get();
    f->streams.commDelayMicros = impl_->commDelayMicros;
    status =
        f->batch.start(program, *f->ctx, *impl_->pool, impl_->kernelSettings,
                       impl_->comm.get(), f->streams, impl_->pipelineStages);
    if (!status.isOk()) {
      impl_->giveBack(std::move(f->ctx));
      return status.withContext(batchName);
    }
    inFlight.push_back(std::move(f));
    ++next;
    return Status::ok();
  };
  // The schedule (docs/runtime.md, "Cross-batch pipelining"): the caller
  // computes the compute-ahead part of batch i+1 before the rest of batch
  // i; the communication thread runs, in queue order, the input
  // distribution of batch j+1, then batch j's stage-B collectives, then
  // the input distribution of batch j+2, ... The input distribution runs
  // depth-1 batches ahead of the batch being finished; batch j's
  // collectives are queued right after batch j+1's input distribution
  // (the caller needs that one before it finishes batch j), or, for the
  // last batch, before it is finished.
  const size_t ahead = static_cast<size_t>(depth) - 1;
  // How many batches ahead the caller computes the compute-ahead part:
  // batch j's stage-B collectives have `lead` steps of the caller's compute
  // to run under, its input distribution depth - 1 - lead. One at depth
  // 2-4; (depth - 1) / 2 beyond, which needs stage B's collectives on a
  // thread of their own: on the communication thread, the input
  // distribution of batch i+2 is queued behind batch i's collectives, which
  // may wait for batch i's rest, and the caller would wait for it first.
  const size_t lead =
      impl_->collectiveThread ? std::max<size_t>(1, ahead / 2) : 1;
  size_t collectivesQueued = 0; // batches whose stage-B collectives are queued
  auto queueCollectivesBefore = [&](size_t end) -> Status {
    for (auto &f : inFlight) {
      if (f->index < collectivesQueued || f->index >= end)
        continue;
      Status status = f->batch.queueCollectives();
      if (!status.isOk())
        return status.withContext("batch " + std::to_string(f->index));
      collectivesQueued = f->index + 1;
    }
    return Status::ok();
  };
  auto startAndQueue = [&]() -> Status {
    EMBER_RETURN_IF_ERROR(startNext());
    // The input distribution of batch next-1 is queued: batch next-2's
    // collectives may follow it.
    return queueCollectivesBefore(next - 1);
  };
  auto computeAhead = [&](size_t b) -> Status {
    for (auto &f : inFlight)
      if (f->index == b) {
        Status status = f->batch.computeAhead();
        return status.isOk() ? status
                             : status.withContext("batch " + std::to_string(b));
      }
    return internalError("runPipelined: batch " + std::to_string(b) +
                         " is not in flight");
  };
  while (next < batches.size() && next < ahead) {
    Status status = startAndQueue();
    if (!status.isOk())
      return giveUp(status);
  }
  for (size_t b = 0; b < lead && b < batches.size(); ++b)
    if (Status status = computeAhead(b); !status.isOk())
      return giveUp(status);
  for (size_t i = 0; i < batches.size(); ++i) {
    Status status;
    if (next < batches.size())
      status = startAndQueue();
    if (status.isOk())
      status = queueCollectivesBefore(i + 1);
    if (status.isOk() && i + lead < batches.size())
      status = computeAhead(i + lead);
    if (!status.isOk())
      return giveUp(status);
    std::unique_ptr<InFlight> f = std::move(inFlight.front());
    inFlight.pop_front();
    status = f->batch.finish();
    if (status.isOk() && f->trace)
      impl_->keepTrace(*f->trace);
    if (status.isOk())
      status = impl_->collectOutputs(*f->ctx, &(*outputs)[i]);
    impl_->giveBack(std::move(f->ctx));
    impl_->runs.fetch_add(1, std::memory_order_relaxed);
    if (!status.isOk())
      return giveUp(status.withContext("batch " + std::to_string(i)));
  }
  return Status::ok();
}

Result<RunOutputs> Session::run(const RunInputs &inputs) const {
  RunOutputs outputs;
  EMBER_RETURN_IF_ERROR(run(inputs, &outputs));
  return outputs;
}

Status Session::barrier() const {
  if (!impl_->comm)
    return Status::ok();
  std::lock_guard<std::mutex> serial(impl_->runMutex);
  return ember::barrier(*impl_->comm, "Session::barrier");
}

Status Session::gatherOutputs(const RunOutputs &local,
                              RunOutputs *global) const {
  if (!global)
    return invalidArgument("Session::gatherOutputs: global is null");
  if (global == &local)
    return invalidArgument(
        "Session::gatherOutputs: local and global must differ");
  const Program &program = *impl_->program;
  if (local.size() != program.outputs.size())
    return invalidArgument("Session::gatherOutputs: the local outputs are "
                           "not those of a run of this session");
  Communicator *comm = impl_->comm.get();
  // Collectives in the same order on every rank: not between a run's.
  std::unique_lock<std::mutex> serial(impl_->runMutex, std::defer_lock);
  if (comm)
    serial.lock();
  const int world = comm ? comm->worldSize() : 1;
  const int me = comm ? comm->rank() : 0;
  std::vector<int> group(world);
  for (int r = 0; r < world; ++r)
    group[r] = r;
  global->entries_.clear();
  global->invalidIds_ = local.invalidIds();
  for (size_t i = 0; i < program.outputs.size(); ++i) {
    const Tensor &t = local.tensor(i);
    const SlotInfo &slot = program.slots[program.outputs[i].slot];
    bool batched = t.rank() > 0 && slot.rank > 0 && slot.dims[0].isSymbolic();
    std::string what = "gathering output '" + local.name(i) + "'";
    int64_t rowBytes = 0;
    if (t.rank() > 0 && t.dim(0) > 0)
      rowBytes = static_cast<int64_t>(t.nbytes()) / t.dim(0);
    else if (t.rank() > 0) {
      rowBytes = static_cast<int64_t>(dtypeSize(t.dtype()));
      for (int d = 1; d < t.rank(); ++d)
        rowBytes *= t.dim(d);
    }
    // Batched: (rows, bytes per row); otherwise (0, bytes of the whole).
    int64_t rows = batched ? t.dim(0) : 0;
    int64_t bytes = batched ? rowBytes : static_cast<int64_t>(t.nbytes());
    std::vector<int64_t> mine;
    for (int r = 0; r < world; ++r)
      mine.insert(mine.end(), {rows, bytes});
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> all,
                           exchangeCounts(comm, group, me, mine, 2, what));
    Tensor out;
    std::vector<SendBuffer> sends(world);
    std::vector<RecvBuffer> recvs(world);
    if (batched) {
      int64_t total = 0;
      for (int r = 0; r < world; ++r) {
        if (all[2 * r + 1] != rowBytes && all[2 * r] > 0)
          return invalidArgument(what + ": rank " + std::to_string(r) +
                                 " has rows of another size");
        total += all[2 * r];
      }
      Shape shape = t.shape();
      shape[0] = total;
      EMBER_ASSIGN_OR_RETURN(out, Tensor::allocate(t.dtype(), shape));
      int64_t off = 0;
      for (int r = 0; r < world; ++r) {
        sends[r] = {t.data(), t.nbytes()};
        recvs[r] = {static_cast<char *>(out.data()) + off * rowBytes,
                    static_cast<size_t>(all[2 * r] * rowBytes)};
        off += all[2 * r];
      }
    } else {
      // Rank 0's value, sent to every rank.
      if (all[1] != bytes)
        return invalidArgument(what + ": rank 0 has " + std::to_string(all[1]) +
                               " bytes but rank " + std::to_string(me) +
                               " has " + t.describe());
      EMBER_ASSIGN_OR_RETURN(out, Tensor::allocate(t.dtype(), t.shape()));
      for (int r = 0; r < world; ++r) {
        sends[r] = {t.data(), me == 0 ? t.nbytes() : 0};
        recvs[r] = {out.data(), r == 0 ? out.nbytes() : 0};
      }
    }
    EMBER_RETURN_IF_ERROR(runExchange(comm, group, me, sends, recvs, what));
    global->entries_.emplace_back(local.name(i), std::move(out));
  }
  return Status::ok();
}

const ModelSignature &Session::signature() const {
  return impl_->program->signature;
}
const SessionOptions &Session::options() const { return impl_->options; }

std::string Session::deviceDescription() const {
#ifdef EMBER_HAVE_CUDA
  if (impl_->cuda)
    return impl_->cuda->description();
#endif
  return "cpu";
}

std::vector<std::string> Session::hostInstructions() const {
#ifdef EMBER_HAVE_CUDA
  if (impl_->cuda)
    return impl_->cuda->hostInstructions();
#endif
  return {};
}

bool Session::overlapsStreams() const { return impl_->overlap; }

SessionTrace Session::takeTrace() const {
  SessionTrace trace;
  const Program &program = *impl_->program;
  trace.rank = impl_->options.rank;
  trace.worldSize = impl_->options.worldSize;
  trace.overlap = impl_->overlap ? "streams" : "off";
  trace.instructions.reserve(program.instructions.size());
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    const InstructionInfo &in = program.instructions[i];
    trace.instructions.push_back(
        {in.kernelName, in.name, impl_->schedule.collectiveSequence[i]});
  }
  std::lock_guard<std::mutex> lock(impl_->traceMutex);
  trace.runs = std::move(impl_->tracedRuns);
  impl_->tracedRuns.clear();
  return trace;
}

SessionStats Session::stats() const {
  SessionStats s;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  // Only idle contexts are inspected: a context in use belongs to its run.
  s.runContexts = impl_->created;
  for (const auto &ctx : impl_->idle) {
    s.arenaGrowths += ctx->arena.growths();
    s.arenaBytes += ctx->arena.reservedBytes() +
                    static_cast<int64_t>(ctx->staticArena.bytes());
  }
  s.runs = impl_->runs.load(std::memory_order_relaxed);
#ifdef EMBER_HAVE_CUDA
  if (impl_->cuda)
    s.cudaGraphReplays = impl_->cuda->graphReplays();
#endif
  return s;
}

} // namespace ember
