//===- concat_device.cuh - concat per-thread code ---------------*- C++ -*-===//
//
// concat seen as bytes: output row o (the dims before the axis) is the
// inputs' rows o side by side. The kernel moves `Unit`s (1 to 16 bytes: the
// largest power of two dividing every input's row width and pointer) with a
// thread per output unit; up to kConcatChunk inputs per launch (more inputs
// take several launches, each writing its own columns).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_DENSE_CONCAT_DEVICE_CUH
#define EMBER_CUDA_DENSE_CONCAT_DEVICE_CUH

#include "cuda/host_device.h"

#include <cstdint>

namespace ember::cuda::dense {

constexpr int kConcatChunk = 64;

struct ConcatChunk {
  int count = 0;
  const void *src[kConcatChunk] = {};
  /// Column (in units) of input k within this chunk; colStart[count] = width.
  int64_t colStart[kConcatChunk + 1] = {};
  int64_t colBase = 0;  // first column of the chunk in an output row
  int64_t rowUnits = 0; // output row width (all inputs)
};

/// The input of the chunk holding column c (binary search).
EMBER_HD_INLINE int concatSource(const ConcatChunk &ch, int64_t c) {
  int lo = 0, hi = ch.count - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (ch.colStart[mid] <= c)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// Output unit u of the chunk (u < rows * chunk width).
template <typename Unit>
EMBER_HD_INLINE void concatElement(const ConcatChunk &ch, Unit *dst,
                                   int64_t u) {
  int64_t width = ch.colStart[ch.count];
  int64_t o = u / width, c = u % width;
  int k = concatSource(ch, c);
  int64_t w = ch.colStart[k + 1] - ch.colStart[k];
  const Unit *src = static_cast<const Unit *>(ch.src[k]);
  dst[o * ch.rowUnits + ch.colBase + c] = src[o * w + (c - ch.colStart[k])];
}

/// Host: the unit (1, 2, 4, 8 or 16 bytes) that divides the output address
/// and every input's row bytes and (non-empty) address.
inline int concatUnitBytes(const void *dst, const void *const *src,
                           const int64_t *rowBytes, const bool *empty,
                           int count) {
  uint64_t bits = reinterpret_cast<uintptr_t>(dst) | 16u;
  for (int i = 0; i < count; ++i) {
    bits |= static_cast<uint64_t>(rowBytes[i]);
    if (!empty[i])
      bits |= reinterpret_cast<uintptr_t>(src[i]);
  }
  return static_cast<int>(bits & (~bits + 1));
}

/// Host: the chunk of inputs [begin, end) (end - begin <= kConcatChunk)
/// whose first column in an output row is colBase (units).
inline ConcatChunk makeConcatChunk(const void *const *src,
                                   const int64_t *rowBytes, int begin, int end,
                                   int unit, int64_t colBase,
                                   int64_t rowUnits) {
  ConcatChunk chunk;
  chunk.rowUnits = rowUnits;
  chunk.colBase = colBase;
  chunk.count = end - begin;
  int64_t col = 0;
  for (int i = begin; i < end; ++i) {
    chunk.src[i - begin] = src[i];
    chunk.colStart[i - begin] = col;
    col += rowBytes[i] / unit;
  }
  chunk.colStart[chunk.count] = col;
  return chunk;
}

} // namespace ember::cuda::dense

#endif // EMBER_CUDA_DENSE_CONCAT_DEVICE_CUH
