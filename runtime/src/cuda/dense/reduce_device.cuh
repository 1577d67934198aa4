//===- reduce_device.cuh - reduce_sum/max per-lane code --------*- C++ -*-===//
//
// A warp per output element: lane l takes the reduced elements l, l + 32, ...
// (in row-major order of the reduced dims), accumulates in double like the
// CPU kernel, and the lanes' partials are combined with a butterfly. max
// propagates NaN.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_DENSE_REDUCE_DEVICE_CUH
#define EMBER_CUDA_DENSE_REDUCE_DEVICE_CUH

#include "cuda/host_device.h"

#include <cmath>
#include <cstdint>

namespace ember::cuda::dense {

enum ReduceCode : int { kReduceSum = 0, kReduceMax };

/// The input's kept and reduced dims (size-1 dims dropped) with their
/// element strides.
struct ReduceIndex {
  int keptRank = 0, redRank = 0;
  int64_t keptDims[8] = {}, keptStrides[8] = {};
  int64_t redDims[8] = {}, redStrides[8] = {};
  int64_t keptCount = 1, reducedCount = 1;

  /// Input offset of the first element reduced into output i.
  EMBER_HD_INLINE int64_t keptOffset(int64_t i) const {
    int64_t off = 0;
    for (int k = keptRank - 1; k >= 0; --k) {
      off += (i % keptDims[k]) * keptStrides[k];
      i /= keptDims[k];
    }
    return off;
  }
  /// Offset of reduced element j relative to keptOffset.
  EMBER_HD_INLINE int64_t reducedOffset(int64_t j) const {
    int64_t off = 0;
    for (int k = redRank - 1; k >= 0; --k) {
      off += (j % redDims[k]) * redStrides[k];
      j /= redDims[k];
    }
    return off;
  }
};

/// Host: the index of a row-major tensor of `rank` dims, reducing the dims
/// flagged in `reduced`.
inline ReduceIndex makeReduceIndex(const int64_t *dims, int rank,
                                   const bool *reduced) {
  ReduceIndex ix;
  int64_t stride = 1, strides[8];
  for (int i = rank - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  for (int i = 0; i < rank; ++i) {
    if (dims[i] == 1)
      continue;
    if (reduced[i]) {
      ix.redDims[ix.redRank] = dims[i];
      ix.redStrides[ix.redRank++] = strides[i];
      ix.reducedCount *= dims[i];
    } else {
      ix.keptDims[ix.keptRank] = dims[i];
      ix.keptStrides[ix.keptRank++] = strides[i];
      ix.keptCount *= dims[i];
    }
  }
  return ix;
}

EMBER_HD_INLINE double reduceInit(int op) {
  return op == kReduceMax ? -INFINITY : 0.0;
}

EMBER_HD_INLINE double reduceCombine(int op, double acc, double v) {
  if (op != kReduceMax)
    return acc + v;
  if (acc != acc)
    return acc;
  return (v > acc || v != v) ? v : acc;
}

/// Lane `lane`'s partial over the reduced elements of output i.
EMBER_HD_INLINE double reduceLanePartial(const float *x, const ReduceIndex &ix,
                                         int op, int64_t i, int lane,
                                         int lanes) {
  const float *base = x + ix.keptOffset(i);
  double acc = reduceInit(op);
  for (int64_t j = lane; j < ix.reducedCount; j += lanes)
    acc = reduceCombine(op, acc, base[ix.reducedOffset(j)]);
  return acc;
}

} // namespace ember::cuda::dense

#endif // EMBER_CUDA_DENSE_REDUCE_DEVICE_CUH
