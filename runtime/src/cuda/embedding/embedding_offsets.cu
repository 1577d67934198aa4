//===- embedding_offsets.cu - Lengths to bag offsets on the device --------===//
//
// The grouped lookup takes key-major lengths; its bags need offsets. A
// grid-stride kernel widens the lengths to int64 (raising kNegativeLength),
// then CUB's inclusive scan writes offsets[1..n]; offsets[0] is zeroed.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/embedding/embedding_lookup.cuh"
#include "cuda/embedding/embedding_lookup.h"

#include <cub/device/device_scan.cuh>

#include <algorithm>

namespace ember::cuda::embedding {

namespace {

constexpr size_t kAlign = 256;

size_t alignUp(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

struct ErrorSink {
  DeviceErrorRecord *errors;
  int32_t instruction;
  __device__ void raise(DeviceErrorCode code, int64_t a, int64_t b, int64_t c,
                        int64_t d) {
    raiseDeviceError(errors, instruction, code, a, b, c, d);
  }
};

__global__ void widenLengthsKernel(const void *lengths, bool lengths64,
                                   int64_t n, int64_t *counts,
                                   DeviceErrorRecord *errors,
                                   int32_t instruction) {
  ErrorSink sink{errors, instruction};
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    counts[i] = checkedLength(lengths, lengths64, i, sink);
}

Result<size_t> scanTempBytes(int64_t n) {
  size_t bytes = 0;
  EMBER_CUDA_RETURN_IF_ERROR(cub::DeviceScan::InclusiveSum(
      nullptr, bytes, static_cast<const int64_t *>(nullptr),
      static_cast<int64_t *>(nullptr), n));
  return bytes;
}

} // namespace

Result<size_t> lengthsToOffsetsScratchBytes(int64_t n) {
  if (n < 0)
    return invalidArgument("negative number of lengths");
  EMBER_ASSIGN_OR_RETURN(size_t temp, scanTempBytes(n));
  return alignUp((n + 1) * sizeof(int64_t)) + alignUp(n * sizeof(int64_t)) +
         temp;
}

Status launchLengthsToOffsets(const void *lengths, bool lengths64, int64_t n,
                              void *scratch, size_t scratchBytes,
                              DeviceErrorRecord *errors, int32_t instruction,
                              int multiprocessors, cudaStream_t stream) {
  EMBER_ASSIGN_OR_RETURN(size_t need, lengthsToOffsetsScratchBytes(n));
  if (scratchBytes < need)
    return internalError("lengths to offsets: scratch of " +
                         std::to_string(scratchBytes) + " bytes, need " +
                         std::to_string(need));
  auto *base = static_cast<uint8_t *>(scratch);
  auto *offsets = reinterpret_cast<int64_t *>(base);
  auto *counts =
      reinterpret_cast<int64_t *>(base + alignUp((n + 1) * sizeof(int64_t)));
  void *temp =
      base + alignUp((n + 1) * sizeof(int64_t)) + alignUp(n * sizeof(int64_t));
  EMBER_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(offsets, 0, sizeof(int64_t), stream));
  if (n == 0)
    return Status::ok();
  const int64_t threads = 256;
  const int64_t blocks = std::min<int64_t>(
      (n + threads - 1) / threads, int64_t{std::max(multiprocessors, 1)} * 8);
  widenLengthsKernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      lengths, lengths64, n, counts, errors, instruction);
  EMBER_RETURN_IF_ERROR(launchStatus("embedding lengths to offsets"));
  EMBER_ASSIGN_OR_RETURN(size_t tempBytes, scanTempBytes(n));
  EMBER_CUDA_RETURN_IF_ERROR(cub::DeviceScan::InclusiveSum(
      temp, tempBytes, counts, offsets + 1, n, stream));
  return Status::ok();
}

} // namespace ember::cuda::embedding
