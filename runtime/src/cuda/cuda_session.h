//===- cuda_session.h - Running a program on a CUDA device -----*- C++ -*-===//
//
// The CUDA side of an ember::Session (SessionOptions.device = "cuda[:i]").
// A plain C++ header: session.cpp includes it without CUDA headers.
//
// At load: the device is checked (compute capability 8.0+), every constant
// is uploaded once, each instruction gets its CUDA kernel or, where there is
// none, the CPU kernel on host copies ("host fallback"), and the plan's
// streams and events become CUDA streams and events.
// Per run: inputs are checked on the host (bindInputs), staged through
// pinned memory and copied on a copy stream; instructions are enqueued on
// their streams; one synchronization at the end reads the device error
// record and copies the outputs back. Runs on one session are serialized.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_CUDA_SESSION_H
#define EMBER_CUDA_CUDA_SESSION_H

#include "ember/session.h"
#include "ember/status.h"
#include "kernels/kernel_context.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ember {

struct Program;
class ThreadPool;
class Communicator;

namespace cuda {

/// Parses "cuda" / "cuda:N" into N (0 for "cuda"); an error otherwise.
Result<int> parseCudaDevice(const std::string &device);

class CudaSession {
public:
  /// `hostComm` is the session's Gloo communicator (multi-rank), or null;
  /// `cudaGraphs` as SessionOptions.cudaGraphs.
  static Result<std::unique_ptr<CudaSession>>
  create(std::shared_ptr<const Program> program, int device,
         Communicator *hostComm, double collectiveTimeoutSeconds,
         bool cudaGraphs);
  ~CudaSession();

  /// The outputs in the plan's order. `entries` keeps its buffers where
  /// names, dtypes and shapes match (as RunOutputs does); on error it is
  /// left empty.
  using OutputEntries = std::vector<std::pair<std::string, Tensor>>;
  Status run(const RunInputs &inputs, OutputEntries &entries,
             int64_t *invalidIds, ThreadPool &pool,
             const KernelSettings &settings);

  /// "NVIDIA H100 80GB HBM3 (cuda:0, sm_90)".
  const std::string &description() const;
  /// The locations of the instructions that run on the host (no CUDA
  /// kernel), in program order.
  std::vector<std::string> hostInstructions() const;
  /// Device bytes held: constants plus the run arenas.
  int64_t deviceBytes() const;
  /// Whether the program can be captured into a CUDA graph (every
  /// instruction on the device, none that synchronizes), and how many runs
  /// replayed one.
  bool capturable() const;
  int64_t graphReplays() const;

  struct Impl;

private:
  explicit CudaSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace cuda
} // namespace ember

#endif // EMBER_CUDA_CUDA_SESSION_H
