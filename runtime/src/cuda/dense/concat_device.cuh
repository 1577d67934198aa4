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

} // namespace ember::cuda::dense

#endif // EMBER_CUDA_DENSE_CONCAT_DEVICE_CUH
