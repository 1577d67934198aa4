//===- session.h - Loading and running Ember plans --------------*- C++ -*-===//
//
//   auto session = ember::Session::load("model.plan", {/*threads=*/4});
//   if (!session) { report(session.status()); return; }
//   ember::RunInputs in;
//   in.set("dense", ember::Tensor::view(buf, ember::DType::kFloat32, {b, 13}));
//   in.set("sparse", kjt);
//   ember::RunOutputs out;                 // reuse it across requests
//   ember::Status s = (*session)->run(in, &out);
//   const ember::Tensor *prob = out.find("prob");
//
// Session::run is thread-safe: concurrent calls each take their own run
// context (slot table + memory arena) from a pool owned by the session, so
// they share no scratch. A context is reused by later runs, and a RunOutputs
// passed again keeps its buffers, so a run with the shapes of an earlier run
// allocates no memory.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_SESSION_H
#define EMBER_SESSION_H

#include "ember/bounds_check.h"
#include "ember/dtype.h"
#include "ember/kjt.h"
#include "ember/status.h"
#include "ember/tensor.h"
#include "ember/trace.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ember {

class KernelRegistry;

struct SessionOptions {
  /// Threads that execute kernels (shared by concurrent runs); <= 0 means
  /// one per hardware thread.
  int threads = 1;
  /// What lookups do with ids outside their table.
  BoundsCheckMode boundsCheck = BoundsCheckMode::kFatal;
  /// Multi-rank execution: this process runs the program of `rank` out of
  /// `worldSize` ranks (Plan.programs[rank] and its weights file). A plan
  /// for another number of ranks is refused. applyLaunchEnvironment() fills
  /// these from RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT.
  int rank = 0;
  int worldSize = 1;
  int localRank = 0; // informational (LOCAL_RANK)
  /// How the ranks find each other when worldSize > 1: "file:DIR" (a
  /// directory every rank reaches; fresh for each job) or "tcp:HOST:PORT"
  /// (rank 0 serves the store on PORT).
  std::string rendezvous;
  /// Rendezvous and every collective fail after this many seconds without
  /// hearing from a peer (a dead or hung rank), naming the silent ranks.
  double collectiveTimeoutSeconds = 60;
  /// The address this rank's transport listens on; empty = 127.0.0.1 (all
  /// ranks on one machine).
  std::string commHost;
  /// Where rank 0 serves a tcp:HOST:PORT rendezvous store: empty = only the
  /// addresses HOST resolves to; "*" = every interface; or an address. The
  /// store has no authentication (docs/reliability.md).
  std::string storeBind;
  /// Verify the XXH64 checksum of every weights file at load (reads every
  /// byte once).
  bool verifyChecksums = true;
  /// Where the program runs: "cpu", or "cuda" / "cuda:N" (the CUDA backend
  /// on device N; the plan must be compiled with --target cuda). Instructions
  /// without a CUDA kernel run on the CPU with copies (see
  /// Session::hostInstructions). Runs on a CUDA session are serialized.
  std::string device = "cpu";
  /// CUDA: capture the steady state into a CUDA graph and replay it while
  /// the input shapes stay the same (every kernel on the device, none that
  /// synchronizes; docs/cuda.md). Off by default.
  bool cudaGraphs = false;
  /// The largest single buffer a run may allocate (a tensor, the plan's
  /// static arena, kernel scratch) and a plan may declare (slot shapes and
  /// RankProgram.arena_bytes, checked at load before anything is allocated);
  /// a larger one fails with ResourceExhausted / InvalidArgument naming it.
  /// 0 = the environment variable EMBER_MAX_TENSOR_BYTES when set, else
  /// kDefaultMaxTensorBytes. Constants are not counted: they are views of
  /// the mapped weights files.
  int64_t maxTensorBytes = 0;
  /// Where the weights live: "mmap" (views of the mapped weights files,
  /// zero-copy), "huge_pages" (constants of 2 MiB and more copied at load
  /// into anonymous memory advised for transparent huge pages, so random
  /// lookups miss the TLB far less; falls back to the mapping, saying so on
  /// stderr, when transparent huge pages are off) or "auto" (huge_pages when
  /// the kernel's transparent huge pages are enabled, else mmap). Other
  /// values are an InvalidArgument. docs/performance.md, "Weights in huge
  /// pages".
  std::string weightMemory = "mmap";
  /// How a plan's streams run on the CPU (docs/runtime.md, "Overlapping
  /// communication"): "auto" or "streams" run stream 1 (the collectives) on
  /// a communication thread of the session while the calling thread runs
  /// stream 0, synchronized by the plan's events alone, when the plan has a
  /// stream 1; "off" runs every instruction in program order on the calling
  /// thread. Plans with one stream run in program order either way; the
  /// results are the same bit for bit. Other values are an InvalidArgument.
  std::string overlap = "auto";
  /// The order in which pooled lookups add up quantized (int8/int4
  /// row-wise) rows: "fast" (each column one fused multiply-add per row,
  /// the rows' biases summed once per bag: one rounding per row and
  /// column), "fbgemm" (FBGEMM's order, bit-identical to FBGEMM's CPU
  /// kernels and torch's quantized embedding_bag ops: for validating a
  /// migration bit for bit) or "auto" (the environment variable
  /// EMBER_QUANTIZED_SUMS when it is set, else fast). Other values are an
  /// InvalidArgument. docs/runtime.md, "Quantized lookups".
  std::string quantizedSums = "auto";
  /// Record when each instruction of each run ran and how long the threads
  /// waited for each other (Session::takeTrace; docs/trace-format.md).
  /// Off: no clock is read.
  bool recordTrace = false;
};

/// SessionOptions::maxTensorBytes when neither it nor EMBER_MAX_TENSOR_BYTES
/// is set: 64 GiB.
constexpr int64_t kDefaultMaxTensorBytes = int64_t{1} << 36;

/// Fills the multi-rank fields of `options` from the launcher's environment:
/// RANK, WORLD_SIZE, LOCAL_RANK; MASTER_ADDR + MASTER_PORT give the rendezvous
/// "tcp:MASTER_ADDR:MASTER_PORT"; EMBER_RENDEZVOUS (file:DIR | tcp:HOST:PORT)
/// overrides it; EMBER_COMM_TIMEOUT (seconds), EMBER_COMM_HOST and
/// EMBER_STORE_BIND set the timeout, the listen address and where rank 0's
/// store listens. Variables that are not set leave the field
/// unchanged; malformed ones are an error naming the variable.
Status applyLaunchEnvironment(SessionOptions &options);

/// Whether this runtime was built with its CUDA backend (SessionOptions.device
/// "cuda" then works where a GPU is visible).
bool haveCudaBackend();
/// The kernels that have a CUDA version in this build (empty without CUDA).
std::vector<std::string> cudaKernelNames();

/// A dense input or output as the plan declares it; dims are sizes ("13") or
/// symbols ("B", "4*B").
struct TensorInfo {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<std::string> dims;
  /// For the ids (or per-sample weights) of nn.EmbeddingBag-style bags: the
  /// input holding their offsets (B entries, B + 1 with includeLastOffset).
  std::string bagOffsets;
  bool includeLastOffset = false;
};

struct KjtInfo {
  std::string name;
  std::vector<std::string> keys;
  DType valuesDType = DType::kInt64;
  DType lengthsDType = DType::kInt64;
  bool hasWeights = false;
  std::string batchSymbol = "B"; // the symbol of its batch dimension
};

struct ModelSignature {
  std::vector<TensorInfo> inputs;
  std::vector<KjtInfo> kjtInputs;
  std::vector<TensorInfo> outputs;
  /// The symbol of the dense inputs' and outputs' batch dimension.
  std::string batchSymbol = "B";
};

/// Named inputs of one run. Reusing one RunInputs across requests (set()
/// replaces a value of the same name) allocates nothing after the first.
class RunInputs {
public:
  RunInputs &set(std::string_view name, Tensor tensor);
  RunInputs &set(std::string_view name, KeyedJaggedTensor kjt);
  void clear() { entries_.clear(); }

  size_t size() const { return entries_.size(); }
  const std::string &name(size_t i) const { return entries_[i].name; }
  bool isKjt(size_t i) const { return entries_[i].isKjt; }
  const Tensor &tensor(size_t i) const { return entries_[i].tensor; }
  const KeyedJaggedTensor &kjt(size_t i) const { return entries_[i].kjt; }

private:
  struct Entry {
    std::string name;
    bool isKjt = false;
    Tensor tensor;
    KeyedJaggedTensor kjt;
  };
  Entry &entryFor(std::string_view name);
  std::vector<Entry> entries_;
};

/// Named outputs of one run; they own their memory (independent of the
/// session). Passing the same RunOutputs to the next run reuses its buffers
/// when the shapes are unchanged, so the next run overwrites tensors taken
/// from it: clone() what must outlive that.
class RunOutputs {
public:
  size_t size() const { return entries_.size(); }
  const std::string &name(size_t i) const { return entries_[i].first; }
  const Tensor &tensor(size_t i) const { return entries_[i].second; }
  /// nullptr when there is no output of that name.
  const Tensor *find(std::string_view name) const;
  /// Ids that BoundsCheckMode::kWarning replaced by zero rows in this run.
  int64_t invalidIds() const { return invalidIds_; }

private:
  friend class Session;
  std::vector<std::pair<std::string, Tensor>> entries_;
  int64_t invalidIds_ = 0;
};

/// Counters for tests and tools.
struct SessionStats {
  int64_t runContexts = 0;  // contexts created (= peak concurrent runs)
  int64_t arenaGrowths = 0; // arena block allocations over all contexts
  int64_t arenaBytes = 0;   // bytes reserved by all arenas
  int64_t runs = 0;         // completed run calls (ok or not)
  int64_t cudaGraphReplays = 0; // CUDA runs that replayed a captured graph
};

class Session {
public:
  /// Loads and validates a plan (binary PLAN.plan, or text when the path
  /// ends in .txt/.pbtxt) and maps its weights files.
  static Result<std::unique_ptr<Session>>
  load(const std::string &planPath, const SessionOptions &options = {});
  /// The same with another kernel registry (tests; other backends).
  static Result<std::unique_ptr<Session>> load(const std::string &planPath,
                                               const SessionOptions &options,
                                               const KernelRegistry &kernels);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  /// Runs the plan. Thread-safe. On error `outputs` is left with no entries.
  Status run(const RunInputs &inputs, RunOutputs *outputs) const;
  Result<RunOutputs> run(const RunInputs &inputs) const;
  /// Cross-batch pipelining (docs/runtime.md, "Cross-batch pipelining"):
  /// runs `batches` in order with up to `depth` of them in flight: the
  /// input distribution of the next batches (their first collectives and
  /// the compute that feeds them, marked by the compiler) runs ahead on the
  /// communication thread, and this thread computes the next batch's
  /// lookups and bottom MLP before the current batch's interaction and top
  /// MLP, so that the current batch's pooled all-to-all runs meanwhile;
  /// from depth 5 it computes (depth - 1) / 2 batches ahead, so that the
  /// ranks may drift apart by as many steps before one waits for the other.
  /// `outputs` gets one entry per batch, in order, identical to running
  /// them one by one. Depth 1 is `run` per batch; depth > 1 needs a plan
  /// with marks and overlap on. In a multi-rank session every rank must
  /// call it with the same depth and number of batches: the ranks check
  /// that first (one all-gather of both) and all fail with an error
  /// naming both ranks' values when they differ. An error (naming
  /// the batch) leaves `outputs` empty; nothing is left running.
  Status runPipelined(const std::vector<RunInputs> &batches, int depth,
                      std::vector<RunOutputs> *outputs) const;

  const ModelSignature &signature() const;
  const SessionOptions &options() const;

  /// Multi-rank: concatenates every rank's outputs in rank order along
  /// dimension 0 where the plan's output has a symbolic first dimension (the
  /// batch), and takes rank 0's value for the others. Every rank must call
  /// it; every rank gets the result. In a single-rank session a copy.
  Status gatherOutputs(const RunOutputs &local, RunOutputs *global) const;
  /// Multi-rank: returns when every rank has called it (or fails within the
  /// timeout). A no-op in a single-rank session.
  Status barrier() const;
  SessionStats stats() const;
  /// Whether runs execute stream 1 on the communication thread
  /// (SessionOptions::overlap and the plan's streams).
  bool overlapsStreams() const;
  /// The runs recorded since the last call (SessionOptions::recordTrace;
  /// none when it is off), with this rank's program as the trace names it.
  SessionTrace takeTrace() const;

  /// "cpu", or the GPU: "NVIDIA H100 80GB HBM3 (cuda:0, sm_90)".
  std::string deviceDescription() const;
  /// On a CUDA session, the instructions that run on the CPU because their
  /// kernel has no CUDA version (their locations); empty on the CPU.
  std::vector<std::string> hostInstructions() const;

  struct Impl;

private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace ember

#endif // EMBER_SESSION_H
