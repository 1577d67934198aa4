//===- norm.cu - softmax and layer_norm CUDA kernels ----------------------===//
//
// A warp per row (8 rows per 256-thread block) with butterfly reductions;
// softmax along a non-last axis uses a thread per column. The arithmetic is
// in norm_device.cuh.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/norm_device.cuh"

namespace ember::cuda::dense {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / kWarp;

__device__ __forceinline__ float warpMax(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2)
    v = maxOf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warpSum(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ double warpSum(double v) {
  for (int o = kWarp / 2; o > 0; o /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ int64_t firstWarp() {
  return static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock +
         threadIdx.x / kWarp;
}
__device__ __forceinline__ int64_t warpStride() {
  return static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
}

__global__ void softmaxRowsKernel(const float *x, float *y, int64_t rows,
                                  int64_t len) {
  int lane = threadIdx.x % kWarp;
  // Every lane of a warp takes the same rows: the shuffles see full warps.
  for (int64_t r = firstWarp(); r < rows; r += warpStride()) {
    const float *xr = x + r * len;
    float *yr = y + r * len;
    float shift = softmaxShift(warpMax(softmaxLaneMax(xr, len, lane)));
    float sum = warpSum(softmaxLaneExp(xr, yr, len, lane, shift));
    __syncwarp();
    softmaxLaneScale(yr, len, lane, 1.f / sum);
  }
}

__global__ void softmaxColumnsKernel(const float *x, float *y, int64_t outer,
                                     int64_t len, int64_t inner) {
  int64_t total = outer * inner;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       c < total; c += stride) {
    int64_t o = c / inner, l = c % inner;
    int64_t base = o * len * inner + l;
    softmaxColumn(x + base, y + base, len, inner);
  }
}

__global__ void layerNormKernel(const float *x, float *y, int64_t rows,
                                int64_t d, float eps, const float *gamma,
                                const float *beta) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstWarp(); r < rows; r += warpStride()) {
    const float *xr = x + r * d;
    float mean = layerNormMean(warpSum(layerNormLaneSum(xr, d, lane)), d);
    float rstd =
        layerNormRstd(warpSum(layerNormLaneSquares(xr, d, lane, mean)), d, eps);
    layerNormLaneWrite(xr, y + r * d, d, lane, mean, rstd, gamma, beta);
  }
}

int warpGrid(const KernelEnv &env, int64_t rows) {
  int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  int64_t cap =
      static_cast<int64_t>(env.multiprocessors > 0 ? env.multiprocessors : 1) *
      32;
  return static_cast<int>(blocks < cap ? (blocks > 0 ? blocks : 1) : cap);
}

} // namespace

Status launchSoftmaxRows(const KernelEnv &env, const float *x, float *y,
                         int64_t rows, int64_t len) {
  if (rows <= 0 || len <= 0)
    return Status::ok();
  softmaxRowsKernel<<<warpGrid(env, rows), kThreads, 0, env.stream>>>(
      x, y, rows, len);
  return launchStatus("softmax");
}

Status launchSoftmaxColumns(const KernelEnv &env, const float *x, float *y,
                            int64_t outer, int64_t len, int64_t inner) {
  if (outer <= 0 || len <= 0 || inner <= 0)
    return Status::ok();
  softmaxColumnsKernel<<<gridFor(env, outer * inner, kThreads), kThreads, 0,
                         env.stream>>>(x, y, outer, len, inner);
  return launchStatus("softmax");
}

Status launchLayerNorm(const KernelEnv &env, const float *x, float *y,
                       int64_t rows, int64_t d, float eps, const float *gamma,
                       const float *beta) {
  if (rows <= 0 || d <= 0)
    return Status::ok();
  layerNormKernel<<<warpGrid(env, rows), kThreads, 0, env.stream>>>(
      x, y, rows, d, eps, gamma, beta);
  return launchStatus("layer_norm");
}

} // namespace ember::cuda::dense
