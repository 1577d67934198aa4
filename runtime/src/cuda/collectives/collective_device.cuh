//===- collective_device.cuh - Per-thread code of collectives --*- C++ -*-===//
//
// What one thread (or one lane of a warp) of the collective kernels does:
// the 16-bit wire codecs (comm_dtype), the unpacking of received blocks
// into the output layout, the ordered reduction of received blocks, and the
// KJT all-to-all's counting and reordering. Written once as EMBER_HD
// functions: nvcc compiles them into the kernels of collective_kernels.cu /
// kjt_all_to_all.cu, and tests/unit/gpu/collectives_emulation_test.cpp runs
// them with g++ over an emulated grid against the CPU kernels.
//
// Every index is int64 (element counts may exceed 2^31).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_COLLECTIVES_COLLECTIVE_DEVICE_CUH
#define EMBER_CUDA_COLLECTIVES_COLLECTIVE_DEVICE_CUH

#include "cuda/copy_element.h"
#include "cuda/host_device.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace ember::cuda::collectives {

/// Element formats on the wire; the values equal collective::CommCodec.
enum WireType : int { kWireFloat32 = 0, kWireFloat16 = 1, kWireBFloat16 = 2 };

// --- codecs (round to nearest even, as the CPU's comm_codec.cpp) -----------

EMBER_HD_INLINE uint16_t encodeWire(int wire, float v) {
  if (wire == kWireFloat16)
    return __half_as_ushort(__float2half_rn(v));
  return __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

EMBER_HD_INLINE float decodeWire(int wire, uint16_t v) {
  if (wire == kWireFloat16)
    return __half2float(__ushort_as_half(v));
  return __bfloat162float(__ushort_as_bfloat16(v));
}

/// Element i of a buffer of float32 (kWireFloat32) or 16-bit wire values.
EMBER_HD_INLINE float loadWire(const void *buf, int wire, int64_t i) {
  if (wire == kWireFloat32)
    return static_cast<const float *>(buf)[i];
  return decodeWire(wire, static_cast<const uint16_t *>(buf)[i]);
}

EMBER_HD_INLINE void storeWire(void *buf, int wire, int64_t i, float v) {
  if (wire == kWireFloat32)
    static_cast<float *>(buf)[i] = v;
  else
    static_cast<uint16_t *>(buf)[i] = encodeWire(wire, v);
}


// --- layout ------------------------------------------------------------------

/// The segment of x: the largest q in [0, g) with off[q] <= x (off: g + 1
/// ascending prefix sums, off[0] = 0 <= x < off[g]); empty segments
/// (off[q] == off[q + 1]) are never returned.
EMBER_HD_INLINE int findSegment(const int64_t *off, int g, int64_t x) {
  int lo = 0, hi = g - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo + 1) / 2;
    if (off[mid] <= x)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// pooled_all_to_all: output element i of [bMe, dSum] comes from this
/// element of the staging buffer (source position q's block [bMe, dims[q]]
/// starts at bMe * colOff[q]). The output's columns are n segments, ordered
/// by output column: `segments` holds n + 1 output column starts (the last
/// dSum), then each segment's staging index of its row 0's first element,
/// then each segment's staging row length (its position's dims[q]); see
/// pooledUnpackTable.
EMBER_HD_INLINE int64_t pooledSourceIndex(int64_t i, int64_t dSum,
                                          const int64_t *segments, int n) {
  const int64_t b = i / dSum, c = i - b * dSum;
  const int s = findSegment(segments, n, c);
  const int64_t *first = segments + n + 1, *rowLength = first + n;
  return first[s] + b * rowLength[s] + (c - segments[s]);
}

/// reduce_scatter / all_reduce: element i of the reduction of g received
/// blocks of `block` elements, in position order 0, 1, ... (as the CPU).
EMBER_HD_INLINE float reduceBlocksAt(const void *staging, int wire, int g,
                                     int64_t block, int64_t i, bool isMax) {
  float acc = loadWire(staging, wire, i);
  for (int q = 1; q < g; ++q) {
    float v = loadWire(staging, wire, q * block + i);
    acc = isMax ? (acc < v ? v : acc) : acc + v;
  }
  return acc;
}

// --- kjt_all_to_all
// ------------------------------------------------------------

EMBER_HD_INLINE int64_t loadIndex(const void *p, bool is64, int64_t i) {
  return is64 ? static_cast<const int64_t *>(p)[i]
              : static_cast<int64_t>(static_cast<const int32_t *>(p)[i]);
}

EMBER_HD_INLINE void storeIndex(void *p, bool is64, int64_t i, int64_t v) {
  if (is64)
    static_cast<int64_t *>(p)[i] = v;
  else
    static_cast<int32_t *>(p)[i] = static_cast<int32_t>(v);
}

/// Counts, for the lengths [begin, end) of one thread, the values of each
/// destination position (lenOff: g + 1 prefix sums of key_splits * B_me);
/// calls sink.add(p, sum) once per run of one destination and
/// sink.negative(i) for a negative length (which counts as 0).
template <class Sink>
EMBER_HD_INLINE void kjtCountRange(const void *lengths, bool is64,
                                   const int64_t *lenOff, int g, int64_t begin,
                                   int64_t end, Sink &sink) {
  if (begin >= end)
    return;
  int p = findSegment(lenOff, g, begin);
  int64_t sum = 0;
  for (int64_t i = begin; i < end; ++i) {
    while (i >= lenOff[p + 1]) {
      if (sum)
        sink.add(p, sum);
      sum = 0;
      ++p;
    }
    int64_t len = loadIndex(lengths, is64, i);
    if (len < 0)
      sink.negative(i);
    else
      sum += len;
  }
  if (sum)
    sink.add(p, sum);
}

/// Output bag i of the key-major [K_me * B_total] lengths comes from this
/// received bag: source position q's block holds K_me * B_q lengths (key
/// major) and starts at K_me * batchOff[q].
EMBER_HD_INLINE int64_t kjtSourceBag(int64_t i, int64_t kMe, int64_t bTotal,
                                     const int64_t *batchOff, int g) {
  const int64_t f = i / bTotal, j = i - f * bTotal;
  const int q = findSegment(batchOff, g, j);
  const int64_t bq = batchOff[q + 1] - batchOff[q];
  return kMe * batchOff[q] + f * bq + (j - batchOff[q]);
}

/// Whether a bag of `len` values read at `src` and written at `dst` stays
/// inside buffers of `n` values (a peer whose lengths do not match its
/// values must not make the kernel read or write out of bounds).
EMBER_HD_INLINE bool kjtBagInBounds(int64_t len, int64_t src, int64_t dst,
                                    int64_t n) {
  return len >= 0 && src >= 0 && dst >= 0 && src <= n - len && dst <= n - len;
}

/// Lane `lane` of `lanes` copies its share of one bag: values (of
/// valueBytes bytes) and, when present, weights.
EMBER_HD_INLINE void kjtCopyBag(const void *rv, void *ov, int valueBytes,
                                const float *rw, float *ow, int64_t src,
                                int64_t dst, int64_t len, int lane, int lanes) {
  for (int64_t k = lane; k < len; k += lanes) {
    copyElement(ov, dst + k, rv, src + k, valueBytes);
    if (ow)
      ow[dst + k] = rw[src + k];
  }
}

} // namespace ember::cuda::collectives

#endif // EMBER_CUDA_COLLECTIVES_COLLECTIVE_DEVICE_CUH
