//===- reduce.cu - reduce_sum/max CUDA kernel -----------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/reduce_device.cuh"

namespace ember::cuda::dense {
namespace {

constexpr int kThreads = 256;
constexpr int kLanes = 32;
constexpr int kWarpsPerBlock = kThreads / kLanes;

__global__ void reduceKernel(const float *x, float *out, ReduceIndex ix,
                             int op) {
  int lane = threadIdx.x % kLanes;
  int64_t first =
      static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kLanes;
  int64_t stride = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t i = first; i < ix.keptCount; i += stride) {
    double acc = reduceLanePartial(x, ix, op, i, lane, kLanes);
    for (int o = kLanes / 2; o > 0; o /= 2)
      acc = reduceCombine(op, acc, __shfl_xor_sync(0xffffffffu, acc, o));
    if (lane == 0)
      out[i] = static_cast<float>(acc);
  }
}

} // namespace

Status launchReduce(const KernelEnv &env, const float *x, float *out,
                    const ReduceIndex &ix, int op) {
  if (ix.keptCount <= 0)
    return Status::ok();
  int64_t blocks = (ix.keptCount + kWarpsPerBlock - 1) / kWarpsPerBlock;
  int64_t cap =
      static_cast<int64_t>(env.multiprocessors > 0 ? env.multiprocessors : 1) *
      32;
  reduceKernel<<<static_cast<int>(blocks < cap ? blocks : cap), kThreads, 0,
                 env.stream>>>(x, out, ix, op);
  return launchStatus("reduce");
}

} // namespace ember::cuda::dense
