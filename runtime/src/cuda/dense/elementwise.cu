//===- elementwise.cu - Elementwise CUDA kernels of the dense family ------===//
//
// Grid-stride loops over the output; the per-element bodies are in
// elementwise_device.cuh. Ops are a run-time switch (one instantiation per
// dtype, not per op).
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/dense/dense_launch.h"

#include <algorithm>

namespace ember::cuda::dense {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ int64_t firstIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t gridStride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

__global__ void unaryKernel(int op, const float *x, float *out, int64_t n) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    out[i] = unaryValue(op, x[i]);
}

__global__ void biasActivationKernel(float *out, const float *bias, int64_t n,
                                     int act, int64_t total) {
  for (int64_t i = firstIndex(); i < total; i += gridStride())
    biasActivationElement(out, bias, n, act, i);
}

__global__ void crossCombineKernel(const float *x0, const float *xl, float *out,
                                   int64_t total) {
  for (int64_t i = firstIndex(); i < total; i += gridStride())
    crossCombineElement(x0, xl, out, i);
}

__global__ void fillKernel(float *out, float value, int64_t n) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    out[i] = value;
}

struct Int64s {
  int64_t v[8];
};

__global__ void writeInt64sKernel(Int64s values, int n, int64_t *out) {
  if (threadIdx.x < n)
    out[threadIdx.x] = values.v[threadIdx.x];
}

template <typename T>
__global__ void binaryKernel(BroadcastIndex ix, int op, const T *a, const T *b,
                             T *out, int64_t n) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    binaryElement<T>(ix, op, a, b, out, i);
}

template <typename T>
__global__ void compareKernel(BroadcastIndex ix, int op, const T *a, const T *b,
                              uint8_t *out, int64_t n) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    compareElement<T>(ix, op, a, b, out, i);
}

template <typename T>
__global__ void whereKernel(BroadcastIndex ix, const uint8_t *cond, const T *a,
                            const T *b, T *out, int64_t n) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    whereElement<T>(ix, cond, a, b, out, i);
}

template <typename T>
__global__ void expandKernel(BroadcastIndex ix, const T *x, T *out, int64_t n) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    expandElement<T>(ix, x, out, i);
}

template <typename T>
Status whereTyped(const KernelEnv &env, const BroadcastIndex &ix,
                  const uint8_t *cond, const void *a, const void *b, void *out,
                  int64_t n) {
  whereKernel<T><<<gridFor(env, n, kThreads), kThreads, 0, env.stream>>>(
      ix, cond, static_cast<const T *>(a), static_cast<const T *>(b),
      static_cast<T *>(out), n);
  return launchStatus("where");
}

template <typename T>
Status expandTyped(const KernelEnv &env, const BroadcastIndex &ix,
                   const void *x, void *out, int64_t n) {
  expandKernel<T><<<gridFor(env, n, kThreads), kThreads, 0, env.stream>>>(
      ix, static_cast<const T *>(x), static_cast<T *>(out), n);
  return launchStatus("expand");
}

} // namespace

int gridFor(const KernelEnv &env, int64_t n, int threads) {
  int64_t blocks = (n + threads - 1) / threads;
  int64_t cap = static_cast<int64_t>(std::max(env.multiprocessors, 1)) * 32;
  return static_cast<int>(std::max<int64_t>(1, std::min(blocks, cap)));
}

Status launchUnary(const KernelEnv &env, int op, const float *x, float *out,
                   int64_t n) {
  if (n <= 0)
    return Status::ok();
  unaryKernel<<<gridFor(env, n, kThreads), kThreads, 0, env.stream>>>(op, x,
                                                                      out, n);
  return launchStatus("unary elementwise");
}

Status launchFill(const KernelEnv &env, float *out, float value, int64_t n) {
  if (n <= 0)
    return Status::ok();
  fillKernel<<<gridFor(env, n, kThreads), kThreads, 0, env.stream>>>(out, value,
                                                                     n);
  return launchStatus("fill");
}

Status launchWriteInt64s(const KernelEnv &env, const int64_t *values, int n,
                         int64_t *out) {
  if (n <= 0)
    return Status::ok();
  if (n > 8)
    return internalError("launchWriteInt64s: more than 8 values");
  Int64s v = {};
  for (int i = 0; i < n; ++i)
    v.v[i] = values[i];
  writeInt64sKernel<<<1, 32, 0, env.stream>>>(v, n, out);
  return launchStatus("shape");
}

Status launchBiasActivation(const KernelEnv &env, float *out, const float *bias,
                            int64_t n, int act, int64_t total) {
  if (total <= 0 || n <= 0)
    return Status::ok();
  biasActivationKernel<<<gridFor(env, total, kThreads), kThreads, 0,
                         env.stream>>>(out, bias, n, act, total);
  return launchStatus("bias/activation epilogue");
}

Status launchCrossCombine(const KernelEnv &env, const float *x0,
                          const float *xl, float *out, int64_t total) {
  if (total <= 0)
    return Status::ok();
  crossCombineKernel<<<gridFor(env, total, kThreads), kThreads, 0,
                       env.stream>>>(x0, xl, out, total);
  return launchStatus("dcn_cross combine");
}

template <typename T>
Status launchBinary(const KernelEnv &env, const BroadcastIndex &ix, int op,
                    const T *a, const T *b, T *out, int64_t n) {
  if (n <= 0)
    return Status::ok();
  binaryKernel<T><<<gridFor(env, n, kThreads), kThreads, 0, env.stream>>>(
      ix, op, a, b, out, n);
  return launchStatus("binary elementwise");
}

template <typename T>
Status launchCompare(const KernelEnv &env, const BroadcastIndex &ix, int op,
                     const T *a, const T *b, uint8_t *out, int64_t n) {
  if (n <= 0)
    return Status::ok();
  compareKernel<T><<<gridFor(env, n, kThreads), kThreads, 0, env.stream>>>(
      ix, op, a, b, out, n);
  return launchStatus("comparison");
}

template Status launchBinary<float>(const KernelEnv &, const BroadcastIndex &,
                                    int, const float *, const float *, float *,
                                    int64_t);
template Status launchBinary<int32_t>(const KernelEnv &, const BroadcastIndex &,
                                      int, const int32_t *, const int32_t *,
                                      int32_t *, int64_t);
template Status launchBinary<int64_t>(const KernelEnv &, const BroadcastIndex &,
                                      int, const int64_t *, const int64_t *,
                                      int64_t *, int64_t);
#define EMBER_INSTANTIATE_COMPARE(T)                                           \
  template Status launchCompare<T>(const KernelEnv &, const BroadcastIndex &,  \
                                   int, const T *, const T *, uint8_t *,       \
                                   int64_t);
EMBER_INSTANTIATE_COMPARE(float)
EMBER_INSTANTIATE_COMPARE(double)
EMBER_INSTANTIATE_COMPARE(int8_t)
EMBER_INSTANTIATE_COMPARE(uint8_t)
EMBER_INSTANTIATE_COMPARE(int32_t)
EMBER_INSTANTIATE_COMPARE(int64_t)
#undef EMBER_INSTANTIATE_COMPARE

Status launchWhere(const KernelEnv &env, const BroadcastIndex &ix,
                   const uint8_t *cond, const void *a, const void *b, void *out,
                   int elementBytes, int64_t n) {
  if (n <= 0)
    return Status::ok();
  switch (elementBytes) {
  case 1:
    return whereTyped<uint8_t>(env, ix, cond, a, b, out, n);
  case 2:
    return whereTyped<uint16_t>(env, ix, cond, a, b, out, n);
  case 4:
    return whereTyped<uint32_t>(env, ix, cond, a, b, out, n);
  case 8:
    return whereTyped<uint64_t>(env, ix, cond, a, b, out, n);
  default:
    return internalError("where: unsupported element size " +
                         std::to_string(elementBytes));
  }
}

Status launchExpand(const KernelEnv &env, const BroadcastIndex &ix,
                    const void *x, void *out, int elementBytes, int64_t n) {
  if (n <= 0)
    return Status::ok();
  switch (elementBytes) {
  case 1:
    return expandTyped<uint8_t>(env, ix, x, out, n);
  case 2:
    return expandTyped<uint16_t>(env, ix, x, out, n);
  case 4:
    return expandTyped<uint32_t>(env, ix, x, out, n);
  case 8:
    return expandTyped<uint64_t>(env, ix, x, out, n);
  default:
    return internalError("expand: unsupported element size " +
                         std::to_string(elementBytes));
  }
}

} // namespace ember::cuda::dense
