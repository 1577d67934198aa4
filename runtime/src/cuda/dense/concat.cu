//===- concat.cu - The concat CUDA kernel ---------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/dense/dense_launch.h"

#include <vector_types.h>

namespace ember::cuda::dense {
namespace {

constexpr int kThreads = 256;

template <typename Unit>
__global__ void concatKernel(ConcatChunk chunk, Unit *dst, int64_t total) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       u < total; u += stride)
    concatElement<Unit>(chunk, dst, u);
}

template <typename Unit>
Status concatTyped(const KernelEnv &env, const ConcatChunk &chunk, void *dst,
                   int64_t total) {
  concatKernel<Unit>
      <<<gridFor(env, total, kThreads), kThreads, 0, env.stream>>>(
          chunk, static_cast<Unit *>(dst), total);
  return launchStatus("concat");
}

} // namespace

Status launchConcat(const KernelEnv &env, const ConcatChunk &chunk, void *dst,
                    int unitBytes, int64_t rows) {
  int64_t width = chunk.colStart[chunk.count];
  if (rows <= 0 || width <= 0)
    return Status::ok();
  int64_t total = rows * width;
  switch (unitBytes) {
  case 1:
    return concatTyped<uint8_t>(env, chunk, dst, total);
  case 2:
    return concatTyped<uint16_t>(env, chunk, dst, total);
  case 4:
    return concatTyped<uint32_t>(env, chunk, dst, total);
  case 8:
    return concatTyped<uint64_t>(env, chunk, dst, total);
  case 16:
    return concatTyped<uint4>(env, chunk, dst, total);
  default:
    return internalError("concat: unsupported unit of " +
                         std::to_string(unitBytes) + " bytes");
  }
}

} // namespace ember::cuda::dense
