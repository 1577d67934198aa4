//===- jagged_launch.cu - Host helpers of the CUDA jagged/KJT kernels -----===//
#include "cuda/jagged/jagged_launch.h"

#include "cuda/cuda_status.h"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstring>

namespace ember::cuda::jagged {

namespace {

/// Launch-parameter chunk of uploadInts (2 KiB of parameters).
constexpr int kUploadChunk = 256;
struct IntChunk {
  int64_t values[kUploadChunk];
};

__global__ void uploadChunkKernel(IntChunk chunk, int64_t count, int64_t *dst) {
  int i = threadIdx.x;
  if (i < count)
    dst[i] = chunk.values[i];
}

__global__ void lengthForScanKernel(int64_t n, const void *lengths, bool is64,
                                    int64_t *out, ErrorSink sink) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    lengthForScan(i, lengths, is64, out, sink);
}

__global__ void checkLengthsSumKernel(const int64_t *offsets, int64_t count,
                                      int64_t expectedSum, ErrorSink sink) {
  checkLengthsSum(offsets, count, expectedSum, sink);
}

__global__ void gatherKernel(const int64_t *src, const int64_t *positions,
                             int64_t n, int64_t *dst) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    dst[i] = src[positions[i]];
}

} // namespace

int blocksFor(int64_t n, const KernelEnv &env) {
  const int64_t needed = n / kThreads + (n % kThreads != 0 ? 1 : 0);
  const int64_t full = int64_t{std::max(env.multiprocessors, 1)} * 16;
  return static_cast<int>(std::max<int64_t>(1, std::min(needed, full)));
}

Result<KernelEnv *> envOf(const KernelContext &ctx, const char *kernel) {
  KernelEnv *env = ctx.gpu();
  if (!env)
    return internalError(ctx.location() + ": the CUDA kernel '" +
                         std::string(kernel) +
                         "' runs without a CUDA device context");
  return env;
}

Result<void *> scratchBytes(KernelContext &ctx, size_t bytes) {
  return ctx.scratch(bytes ? bytes : 1);
}

Result<int64_t *> scratchInts(KernelContext &ctx, int64_t count) {
  EMBER_ASSIGN_OR_RETURN(
      void *p, scratchBytes(ctx, static_cast<size_t>(count) * sizeof(int64_t)));
  return static_cast<int64_t *>(p);
}

Result<int64_t *> uploadInts(KernelContext &ctx, const KernelEnv &env,
                             const std::vector<int64_t> &values) {
  const int64_t n = static_cast<int64_t>(values.size());
  EMBER_ASSIGN_OR_RETURN(int64_t * dst, scratchInts(ctx, n));
  for (int64_t first = 0; first < n; first += kUploadChunk) {
    IntChunk chunk;
    const int64_t count = std::min<int64_t>(kUploadChunk, n - first);
    std::memcpy(chunk.values, values.data() + first, count * sizeof(int64_t));
    uploadChunkKernel<<<1, kUploadChunk, 0, env.stream>>>(chunk, count,
                                                          dst + first);
    EMBER_RETURN_IF_ERROR(launchStatus("jagged upload"));
  }
  return dst;
}

Status inclusiveScanInPlace(KernelContext &ctx, const KernelEnv &env,
                            int64_t *data, int64_t n) {
  if (n <= 0)
    return Status::ok();
  size_t tempBytes = 0;
  EMBER_CUDA_RETURN_IF_ERROR(
      cub::DeviceScan::InclusiveSum(nullptr, tempBytes, data, n, env.stream));
  EMBER_ASSIGN_OR_RETURN(void *temp, scratchBytes(ctx, tempBytes));
  EMBER_CUDA_RETURN_IF_ERROR(
      cub::DeviceScan::InclusiveSum(temp, tempBytes, data, n, env.stream));
  return Status::ok();
}

Status lengthsToOffsetsOnDevice(KernelContext &ctx, const KernelEnv &env,
                                const void *lengths, bool is64, int64_t count,
                                int64_t expectedSum, int64_t *offsets,
                                const std::string &what) {
  if (count == 0) {
    if (expectedSum > 0)
      return Status(StatusCode::kInvalidArgument,
                    ctx.location() + ": " + what + " sum to 0 but there are " +
                        std::to_string(expectedSum) + " values");
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(offsets, 0, sizeof(int64_t), env.stream));
    return Status::ok();
  }
  lengthForScanKernel<<<blocksFor(count, env), kThreads, 0, env.stream>>>(
      count, lengths, is64, offsets + 1, sinkOf(env));
  EMBER_RETURN_IF_ERROR(launchStatus("lengths to offsets"));
  EMBER_RETURN_IF_ERROR(inclusiveScanInPlace(ctx, env, offsets + 1, count));
  if (expectedSum >= 0) {
    checkLengthsSumKernel<<<1, 1, 0, env.stream>>>(offsets, count, expectedSum,
                                                   sinkOf(env));
    EMBER_RETURN_IF_ERROR(launchStatus("lengths sum check"));
  }
  return Status::ok();
}

Status gatherInts(const KernelEnv &env, const int64_t *src,
                  const int64_t *positions, int64_t n, int64_t *dst) {
  if (n <= 0)
    return Status::ok();
  gatherKernel<<<blocksFor(n, env), kThreads, 0, env.stream>>>(src, positions,
                                                               n, dst);
  return launchStatus("jagged gather");
}

Status deviceErrorStatus(const DeviceErrorRecord &record, const KernelEnv &env,
                         const std::string &where) {
  if (record.code == 0)
    return Status::ok();
  std::string message = where + ": " + describeDeviceError(record);
  if (record.instruction != env.instruction)
    message +=
        " (found by instruction " + std::to_string(record.instruction) + ")";
  return Status(statusCodeOf(static_cast<DeviceErrorCode>(record.code)),
                message);
}

Result<std::vector<int64_t>> readBackInts(const KernelContext &ctx,
                                          const KernelEnv &env,
                                          const int64_t *src, int64_t count) {
  const size_t recordBytes = sizeof(DeviceErrorRecord);
  const size_t valueOffset = (recordBytes + 7) / 8 * 8;
  const size_t need = valueOffset + static_cast<size_t>(count) * 8;
  if (!env.hostStaging || env.hostStagingBytes < need)
    return internalError(ctx.location() + ": reading back " +
                         std::to_string(count) + " sizes needs " +
                         std::to_string(need) +
                         " bytes of host staging memory, the session has " +
                         std::to_string(env.hostStagingBytes));
  uint8_t *staging = static_cast<uint8_t *>(env.hostStaging);
  DeviceErrorRecord record{};
  if (env.errors)
    EMBER_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        staging, env.errors, recordBytes, cudaMemcpyDeviceToHost, env.stream));
  if (count > 0)
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(staging + valueOffset, src, count * sizeof(int64_t),
                        cudaMemcpyDeviceToHost, env.stream));
  EMBER_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(env.stream));
  if (env.errors)
    std::memcpy(&record, staging, recordBytes);
  EMBER_RETURN_IF_ERROR(deviceErrorStatus(record, env, ctx.location()));
  std::vector<int64_t> values(count);
  if (count > 0)
    std::memcpy(values.data(), staging + valueOffset, count * sizeof(int64_t));
  return values;
}

Status copyDevice(const KernelEnv &env, void *dst, const void *src,
                  size_t bytes) {
  if (bytes == 0)
    return Status::ok();
  EMBER_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, env.stream));
  return Status::ok();
}

} // namespace ember::cuda::jagged
