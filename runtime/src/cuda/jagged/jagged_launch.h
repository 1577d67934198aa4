//===- jagged_launch.h - Host helpers of the CUDA jagged/KJT kernels -*- C++
//-*-===//
//
// What the CUDA jagged and KJT kernels share on the host side: the grid of a
// grid-stride launch, small host arrays made device arrays without a host
// synchronization, the validated lengths -> offsets prefix sum (CUB), and the
// one synchronizing read-back of the few values that decide an output's size.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_JAGGED_JAGGED_LAUNCH_H
#define EMBER_CUDA_JAGGED_JAGGED_LAUNCH_H

#include "cuda/jagged/jagged_device.cuh"
#include "cuda/kernel_env.h"
#include "ember/status.h"
#include "kernels/kernel_context.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::cuda::jagged {

/// Threads per block of every jagged kernel.
constexpr int kThreads = 256;

/// Blocks of a grid-stride launch over n > 0 items: enough to fill the
/// device, never more than the items need (fits an int for any n).
int blocksFor(int64_t n, const KernelEnv &env);

/// The CUDA environment of a kernel's context, or an error naming the kernel
/// (a CUDA kernel run by a context without a device).
Result<KernelEnv *> envOf(const KernelContext &ctx, const char *kernel);

inline ErrorSink sinkOf(const KernelEnv &env) {
  return ErrorSink{env.errors, env.instruction};
}

/// Scratch memory of at least one byte.
Result<void *> scratchBytes(KernelContext &ctx, size_t bytes);
Result<int64_t *> scratchInts(KernelContext &ctx, int64_t count);

/// A device copy (scratch) of host ints, written by kernels that take them
/// as launch parameters: no pageable copy, no synchronization.
Result<int64_t *> uploadInts(KernelContext &ctx, const KernelEnv &env,
                             const std::vector<int64_t> &values);

/// data[0..n) = its inclusive prefix sum (CUB, scratch from ctx).
Status inclusiveScanInPlace(KernelContext &ctx, const KernelEnv &env,
                            int64_t *data, int64_t n);

/// offsets[0..count] (device int64) = the exclusive prefix sum of `lengths`
/// (device int32/int64, count entries). A negative length is recorded as a
/// device error (and counts as 0); with expectedSum >= 0 so is a sum other
/// than expectedSum. `what` names the lengths for the host-side error of an
/// empty lengths tensor that should cover values.
Status lengthsToOffsetsOnDevice(KernelContext &ctx, const KernelEnv &env,
                                const void *lengths, bool is64, int64_t count,
                                int64_t expectedSum, int64_t *offsets,
                                const std::string &what);

/// dst[i] = src[positions[i]] for i < n (all device int64).
Status gatherInts(const KernelEnv &env, const int64_t *src,
                  const int64_t *positions, int64_t n, int64_t *dst);

/// Reads count device int64 (and the run's error record) through the pinned
/// staging memory, synchronizing the stream once. A device error recorded so
/// far comes back as the Status (the read values would be meaningless).
Result<std::vector<int64_t>> readBackInts(const KernelContext &ctx,
                                          const KernelEnv &env,
                                          const int64_t *src, int64_t count);

/// The Status of a device error record (ok when none).
Status deviceErrorStatus(const DeviceErrorRecord &record, const KernelEnv &env,
                         const std::string &where);

/// Device-to-device copy on the stream (nothing for 0 bytes).
Status copyDevice(const KernelEnv &env, void *dst, const void *src,
                  size_t bytes);

} // namespace ember::cuda::jagged

#endif // EMBER_CUDA_JAGGED_JAGGED_LAUNCH_H
