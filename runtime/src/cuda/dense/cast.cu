//===- cast.cu - The cast CUDA kernel -------------------------------------===//
//
// One kernel for every (from, to) pair: the dtypes are a run-time switch in
// castElement (elementwise_device.cuh) rather than 81 instantiations.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/dense/dense_launch.h"

namespace ember::cuda::dense {
namespace {

constexpr int kThreads = 256;

__global__ void castKernel(const void *in, int from, void *out, int to,
                           int64_t n) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += stride)
    castElement(in, from, out, to, i);
}

} // namespace

Status launchCast(const KernelEnv &env, const void *in, int from, void *out,
                  int to, int64_t n) {
  if (n <= 0)
    return Status::ok();
  castKernel<<<gridFor(env, n, kThreads), kThreads, 0, env.stream>>>(
      in, from, out, to, n);
  return launchStatus("cast");
}

} // namespace ember::cuda::dense
