//===- dense_launch.h - Launchers of the CUDA dense kernels -----*- C++ -*-===//
//
// The host side of the dense kernels (the *_kernels.cpp files: shapes,
// dtypes, attributes) calls these to enqueue device work on env.stream. Each
// launcher launches nothing for an empty range and returns launchStatus().
// Pointers are device memory.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_DENSE_DENSE_LAUNCH_H
#define EMBER_CUDA_DENSE_DENSE_LAUNCH_H

#include "cuda/dense/concat_device.cuh"
#include "cuda/dense/elementwise_device.cuh"
#include "cuda/dense/reduce_device.cuh"
#include "cuda/kernel_env.h"
#include "ember/status.h"

#include <cstdint>

namespace ember::cuda::dense {

/// Blocks for a grid-stride loop over n items with `threads` per block:
/// enough to fill the device, never more than the items need.
int gridFor(const KernelEnv &env, int64_t n, int threads);

// elementwise.cu
Status launchUnary(const KernelEnv &env, int op, const float *x, float *out,
                   int64_t n);
Status launchBiasActivation(const KernelEnv &env, float *out, const float *bias,
                            int64_t n, int act, int64_t total);
Status launchCrossCombine(const KernelEnv &env, const float *x0,
                          const float *xl, float *out, int64_t total);
/// T: float, int32_t, int64_t.
template <typename T>
Status launchBinary(const KernelEnv &env, const BroadcastIndex &ix, int op,
                    const T *a, const T *b, T *out, int64_t n);
/// T: float, double, int8_t, uint8_t, int32_t, int64_t.
template <typename T>
Status launchCompare(const KernelEnv &env, const BroadcastIndex &ix, int op,
                     const T *a, const T *b, uint8_t *out, int64_t n);
/// Operands (condition, a, b); elementBytes 1, 2, 4 or 8.
Status launchWhere(const KernelEnv &env, const BroadcastIndex &ix,
                   const uint8_t *cond, const void *a, const void *b, void *out,
                   int elementBytes, int64_t n);
Status launchExpand(const KernelEnv &env, const BroadcastIndex &ix,
                    const void *x, void *out, int elementBytes, int64_t n);

/// out[i] = value for i < n (float32).
Status launchFill(const KernelEnv &env, float *out, float value, int64_t n);

/// out[i] = values[i] for i < n <= 8 (the values travel as kernel
/// parameters: no host memory is read after the launch).
Status launchWriteInt64s(const KernelEnv &env, const int64_t *values, int n,
                         int64_t *out);

// gather.cu: out-of-range indices raise kIndexOutOfRange (a = index,
// b = position, c = dim) and give zero elements.
Status launchGather(const KernelEnv &env, const void *data, const void *indices,
                    bool wideIndices, int64_t n, int64_t inner, int64_t axisDim,
                    void *out, int elementBytes, int64_t total);
Status launchGatherElements(const KernelEnv &env, const void *data,
                            const void *indices, bool wideIndices,
                            const int64_t *dims, const int64_t *dataStrides,
                            int rank, int axis, int64_t axisDim, void *out,
                            int elementBytes, int64_t total);

// cast.cu
Status launchCast(const KernelEnv &env, const void *in, int from, void *out,
                  int to, int64_t n);

// concat.cu: unitBytes 1, 2, 4, 8 or 16; rows output rows.
Status launchConcat(const KernelEnv &env, const ConcatChunk &chunk, void *dst,
                    int unitBytes, int64_t rows);

// interaction.cu
Status launchDotInteraction(const KernelEnv &env, const float *dense,
                            const float *sparse, float *out, int64_t batch,
                            int64_t n, int64_t d, bool self,
                            bool torchrecOrder);

// norm.cu
Status launchSoftmaxRows(const KernelEnv &env, const float *x, float *y,
                         int64_t rows, int64_t len);
Status launchSoftmaxColumns(const KernelEnv &env, const float *x, float *y,
                            int64_t outer, int64_t len, int64_t inner);
Status launchLayerNorm(const KernelEnv &env, const float *x, float *y,
                       int64_t rows, int64_t d, float eps, const float *gamma,
                       const float *beta);

// reduce.cu: out[i] for i < ix.keptCount (ix.reducedCount >= 1).
Status launchReduce(const KernelEnv &env, const float *x, float *out,
                    const ReduceIndex &ix, int op);

} // namespace ember::cuda::dense

#endif // EMBER_CUDA_DENSE_DENSE_LAUNCH_H
