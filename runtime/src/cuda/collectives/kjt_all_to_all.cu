//===- kjt_all_to_all.cu - Device steps of kjt_all_to_all -----------------===//
//
// 1. count: each thread sums a contiguous chunk of lengths per destination
//    (one atomicAdd per destination run), and the first negative length;
// 2. permute: received source-major lengths -> key-major output lengths;
// 3. two exclusive scans (CUB) give each bag's offset in the received and
//    in the output values;
// 4. copy: one warp per output bag copies its values (and weights).
// Bodies: collective_device.cuh.
//
//===----------------------------------------------------------------------===//
#include "cuda/collectives/collective_device.cuh"
#include "cuda/collectives/collective_launch.h"
#include "cuda/cuda_status.h"
#include "cuda/device_error.h"

#include <cub/device/device_scan.cuh>

#include <algorithm>

namespace ember::cuda::collectives {

namespace {

constexpr int kThreads = 256;

unsigned gridFor(const KernelEnv &env, int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  int64_t cap = std::max<int64_t>(1, int64_t{8} * env.multiprocessors);
  return static_cast<unsigned>(std::min(blocks, cap));
}

struct AtomicSink {
  unsigned long long *sums;
  unsigned long long *firstNegative;
  __device__ void add(int p, int64_t sum) {
    atomicAdd(&sums[p], static_cast<unsigned long long>(sum));
  }
  __device__ void negative(int64_t i) {
    atomicMin(firstNegative, static_cast<unsigned long long>(i));
  }
};

__global__ void kjtCountKernel(const void *lengths, bool is64, int64_t n,
                               const int64_t *lenOff, int g,
                               unsigned long long *sums,
                               unsigned long long *firstNegative) {
  const int64_t threads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t chunk = (n + threads - 1) / threads;
  const int64_t begin = t * chunk;
  const int64_t end = begin + chunk < n ? begin + chunk : n;
  AtomicSink sink{sums, firstNegative};
  kjtCountRange(lengths, is64, lenOff, g, begin, end, sink);
}

__global__ void kjtPermuteLengthsKernel(const void *received, void *out,
                                        bool is64, int64_t *outLen64,
                                        int64_t *inLen64, int64_t kMe,
                                        int64_t bTotal, const int64_t *batchOff,
                                        int g) {
  const int64_t n = kMe * bTotal;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t src = kjtSourceBag(i, kMe, bTotal, batchOff, g);
    int64_t len = loadIndex(received, is64, src);
    storeIndex(out, is64, i, len);
    outLen64[i] = len;
    inLen64[src] = len;
  }
}

__global__ void
kjtCopyValuesKernel(const int64_t *outLen64, const int64_t *outOff,
                    const int64_t *inOff, int64_t kMe, int64_t bTotal,
                    const int64_t *batchOff, int g, const void *rv, void *ov,
                    int valueBytes, const float *rw, float *ow, int64_t n,
                    DeviceErrorRecord *errors, int32_t instruction) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  const int64_t bags = kMe * bTotal;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) +
                   threadIdx.x / 32;
       i < bags; i += warps) {
    const int64_t len = outLen64[i], dst = outOff[i];
    const int64_t src = inOff[kjtSourceBag(i, kMe, bTotal, batchOff, g)];
    if (!kjtBagInBounds(len, src, dst, n)) {
      if (lane == 0)
        raiseDeviceError(errors, instruction,
                         DeviceErrorCode::kLengthsSumMismatch, src + len, n);
      continue;
    }
    kjtCopyBag(rv, ov, valueBytes, rw, ow, src, dst, len, lane, 32);
  }
}

} // namespace

Status launchKjtCount(const KernelEnv &env, const void *lengths, bool is64,
                      int64_t n, const int64_t *lenOff, int g,
                      unsigned long long *sums,
                      unsigned long long *firstNegative) {
  if (n <= 0)
    return Status::ok();
  kjtCountKernel<<<gridFor(env, n), kThreads, 0, env.stream>>>(
      lengths, is64, n, lenOff, g, sums, firstNegative);
  return launchStatus("kjt_all_to_all count");
}

Status launchKjtPermuteLengths(const KernelEnv &env, const void *received,
                               void *out, bool is64, int64_t *outLen64,
                               int64_t *inLen64, int64_t kMe, int64_t bTotal,
                               const int64_t *batchOff, int g) {
  if (kMe <= 0 || bTotal <= 0)
    return Status::ok();
  kjtPermuteLengthsKernel<<<gridFor(env, kMe * bTotal), kThreads, 0,
                            env.stream>>>(received, out, is64, outLen64,
                                          inLen64, kMe, bTotal, batchOff, g);
  return launchStatus("kjt_all_to_all permute lengths");
}

Result<size_t> exclusiveScanScratchBytes(int64_t n) {
  size_t bytes = 0;
  EMBER_CUDA_RETURN_IF_ERROR(cub::DeviceScan::ExclusiveSum(
      nullptr, bytes, static_cast<const int64_t *>(nullptr),
      static_cast<int64_t *>(nullptr), n));
  return bytes;
}

Status launchExclusiveScan(const KernelEnv &env, void *temp, size_t tempBytes,
                           const int64_t *in, int64_t *out, int64_t n) {
  if (n <= 0)
    return Status::ok();
  EMBER_CUDA_RETURN_IF_ERROR(
      cub::DeviceScan::ExclusiveSum(temp, tempBytes, in, out, n, env.stream));
  return launchStatus("kjt_all_to_all scan");
}

Status launchKjtCopyValues(const KernelEnv &env, const int64_t *outLen64,
                           const int64_t *outOff, const int64_t *inOff,
                           int64_t kMe, int64_t bTotal, const int64_t *batchOff,
                           int g, const void *rv, void *ov, int valueBytes,
                           const float *rw, float *ow, int64_t n) {
  const int64_t bags = kMe * bTotal;
  if (bags <= 0 || n <= 0)
    return Status::ok();
  const int warpsPerBlock = kThreads / 32;
  int64_t blocks = (bags + warpsPerBlock - 1) / warpsPerBlock;
  blocks = std::min<int64_t>(
      blocks, std::max<int64_t>(1, int64_t{16} * env.multiprocessors));
  kjtCopyValuesKernel<<<static_cast<unsigned>(blocks), kThreads, 0,
                        env.stream>>>(outLen64, outOff, inOff, kMe, bTotal,
                                      batchOff, g, rv, ov, valueBytes, rw, ow,
                                      n, env.errors, env.instruction);
  return launchStatus("kjt_all_to_all copy values");
}

} // namespace ember::cuda::collectives
