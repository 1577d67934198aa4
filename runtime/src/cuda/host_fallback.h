//===- host_fallback.h - CPU kernels inside a CUDA run ----------*- C++ -*-===//
//
// An instruction whose kernel has no CUDA version runs its CPU kernel: its
// inputs are copied to the host (constants are read from the mapped weights
// directly), the CPU kernel runs on the session's thread pool, and its
// outputs are copied into device memory allocated through the executor's
// context. The instruction's stream is synchronized first, so this costs a
// round trip; `ember-run --device cuda --verbose` lists such instructions.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_HOST_FALLBACK_H
#define EMBER_CUDA_HOST_FALLBACK_H

#include "ember/status.h"

#include <cuda_runtime_api.h>

#include <functional>
#include <string>

namespace ember {
struct Program;
struct InstructionInfo;
class KernelContext;
} // namespace ember

namespace ember::cuda {

/// Waits for a stream (the session's: through NCCL when it has one, so that
/// a dead peer cannot hang the wait).
using StreamSync =
    std::function<Status(cudaStream_t stream, const std::string &what)>;

/// Runs `instr`'s CPU kernel (instr.kernel) for `deviceCtx`, whose inputs
/// and outputs are device memory, with `stream` the instruction's stream.
Status runOnHost(const Program &program, const InstructionInfo &instr,
                 KernelContext &deviceCtx, cudaStream_t stream,
                 const StreamSync &sync);

} // namespace ember::cuda

#endif // EMBER_CUDA_HOST_FALLBACK_H
