//===- collective_kernels.cu - Codec, unpack and reduce kernels -----------===//
//
// Grid-stride kernels over int64 element indices; the grid is capped at a
// few blocks per multiprocessor. Bodies: collective_device.cuh.
//
//===----------------------------------------------------------------------===//
#include "cuda/collectives/collective_device.cuh"
#include "cuda/collectives/collective_launch.h"
#include "cuda/cuda_status.h"

#include <algorithm>

namespace ember::cuda::collectives {

namespace {

constexpr int kThreads = 256;

/// Blocks for n elements: enough to cover them, at most 8 per SM.
unsigned gridFor(const KernelEnv &env, int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  int64_t cap = std::max<int64_t>(1, int64_t{8} * env.multiprocessors);
  return static_cast<unsigned>(std::min(blocks, cap));
}

__device__ inline int64_t firstIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t gridStride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

__global__ void encodeWireKernel(const float *in, uint16_t *out, int64_t n,
                                 int wire) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    out[i] = encodeWire(wire, in[i]);
}

__global__ void decodeWireKernel(const uint16_t *in, float *out, int64_t n,
                                 int wire) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    out[i] = decodeWire(wire, in[i]);
}

__global__ void pooledUnpackKernel(const void *staging, int wire,
                                   int elementBytes, void *out, int64_t bMe,
                                   int64_t dSum, const int64_t *segments,
                                   int numSegments) {
  const int64_t n = bMe * dSum;
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    int64_t src = pooledSourceIndex(i, dSum, segments, numSegments);
    if (wire == kWireFloat32)
      copyElement(out, i, staging, src, elementBytes);
    else
      static_cast<float *>(out)[i] = loadWire(staging, wire, src);
  }
}

__global__ void reduceBlocksKernel(const void *staging, int wire, int g,
                                   int64_t block, bool isMax, float *out,
                                   uint16_t *outWire, int encode) {
  for (int64_t i = firstIndex(); i < block; i += gridStride()) {
    float v = reduceBlocksAt(staging, wire, g, block, i, isMax);
    out[i] = v;
    if (outWire)
      outWire[i] = encodeWire(encode, v);
  }
}

} // namespace

Status launchEncodeWire(const KernelEnv &env, const float *in, uint16_t *out,
                        int64_t n, int wire) {
  if (n <= 0)
    return Status::ok();
  encodeWireKernel<<<gridFor(env, n), kThreads, 0, env.stream>>>(in, out, n,
                                                                 wire);
  return launchStatus("collectives encodeWire");
}

Status launchDecodeWire(const KernelEnv &env, const uint16_t *in, float *out,
                        int64_t n, int wire) {
  if (n <= 0)
    return Status::ok();
  decodeWireKernel<<<gridFor(env, n), kThreads, 0, env.stream>>>(in, out, n,
                                                                 wire);
  return launchStatus("collectives decodeWire");
}

Status launchPooledUnpack(const KernelEnv &env, const void *staging, int wire,
                          int elementBytes, void *out, int64_t bMe,
                          int64_t dSum, const int64_t *segments,
                          int numSegments) {
  if (bMe <= 0 || dSum <= 0)
    return Status::ok();
  pooledUnpackKernel<<<gridFor(env, bMe * dSum), kThreads, 0, env.stream>>>(
      staging, wire, elementBytes, out, bMe, dSum, segments, numSegments);
  return launchStatus("pooled_all_to_all unpack");
}

Status launchReduceBlocks(const KernelEnv &env, const void *staging, int wire,
                          int g, int64_t block, bool isMax, float *out,
                          uint16_t *outWire, int encode) {
  if (block <= 0)
    return Status::ok();
  reduceBlocksKernel<<<gridFor(env, block), kThreads, 0, env.stream>>>(
      staging, wire, g, block, isMax, out, outWire, encode);
  return launchStatus("collectives reduceBlocks");
}

} // namespace ember::cuda::collectives
