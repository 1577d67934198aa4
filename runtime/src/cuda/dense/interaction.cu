//===- interaction.cu - The fused dot_interaction CUDA kernel -------------===//
//
// A block per sample (grid-stride over samples): the sample's n = F + 1 rows
// go to shared memory with row stride D + 1 (no bank conflicts between rows),
// then the block's threads write the output row [dense | pairs]. Samples
// whose rows do not fit in kMaxTileBytes read the rows from global memory.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/interaction_device.cuh"

#include <algorithm>

namespace ember::cuda::dense {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxTileBytes = 48 * 1024; // no opt-in needed

__global__ void interactionTiledKernel(const float *dense, const float *sparse,
                                       float *out, int64_t batch, int64_t n,
                                       int64_t d, bool self, bool torchrec) {
  extern __shared__ float tile[];
  int64_t width = d + interactionPairs(n, self);
  for (int64_t s = blockIdx.x; s < batch; s += gridDim.x) {
    const float *ds = dense + s * d, *ss = sparse + s * (n - 1) * d;
    for (int64_t e = threadIdx.x; e < n * d; e += blockDim.x)
      interactionLoadTile(ds, ss, n, d, tile, e);
    __syncthreads();
    float *y = out + s * width;
    for (int64_t col = threadIdx.x; col < width; col += blockDim.x)
      y[col] = interactionValue(tile, tile + (d + 1), d + 1, n, d, self,
                                torchrec, col);
    __syncthreads();
  }
}

__global__ void interactionGlobalKernel(const float *dense, const float *sparse,
                                        float *out, int64_t batch, int64_t n,
                                        int64_t d, bool self, bool torchrec) {
  int64_t width = d + interactionPairs(n, self);
  for (int64_t s = blockIdx.x; s < batch; s += gridDim.x) {
    float *y = out + s * width;
    for (int64_t col = threadIdx.x; col < width; col += blockDim.x)
      y[col] = interactionValue(dense + s * d, sparse + s * (n - 1) * d, d, n,
                                d, self, torchrec, col);
  }
}

} // namespace

Status launchDotInteraction(const KernelEnv &env, const float *dense,
                            const float *sparse, float *out, int64_t batch,
                            int64_t n, int64_t d, bool self,
                            bool torchrecOrder) {
  if (batch <= 0)
    return Status::ok();
  int64_t blocks64 = std::min<int64_t>(
      batch,
      static_cast<int64_t>(env.multiprocessors > 0 ? env.multiprocessors : 1) *
          64);
  int blocks = static_cast<int>(blocks64);
  int64_t tileBytes = n * (d + 1) * static_cast<int64_t>(sizeof(float));
  if (d > 0 && tileBytes <= kMaxTileBytes) {
    interactionTiledKernel<<<blocks, kThreads, static_cast<size_t>(tileBytes),
                             env.stream>>>(dense, sparse, out, batch, n, d,
                                           self, torchrecOrder);
  } else {
    interactionGlobalKernel<<<blocks, kThreads, 0, env.stream>>>(
        dense, sparse, out, batch, n, d, self, torchrecOrder);
  }
  return launchStatus("dot_interaction");
}

} // namespace ember::cuda::dense
