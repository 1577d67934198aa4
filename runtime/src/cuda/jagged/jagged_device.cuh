//===- jagged_device.cuh - Per-thread bodies of the jagged/KJT kernels -*- C++
//-*-===//
//
// The work of one CUDA thread of each jagged and KJT kernel, as EMBER_HD
// functions: nvcc compiles them into the kernels (jagged/*.cu) and the host
// compiler into tests/unit/gpu/jagged_emulation_test.cpp, which runs them over
// an emulated grid against the CPU kernels. Every function takes the index
// of its work item (a value, a segment, a bag) and touches only memory that
// item owns, so the emulation may run items in any order.
//
// Index tensors (ids, lengths, offsets) are int32 or int64, chosen at run
// time (`is64`): one instantiation per kernel. Values and weights of any
// dtype are moved as elements of 1, 2, 4 or 8 bytes.
//
// Bad data (negative lengths, offsets that go backwards or past the data,
// ids outside a table) is recorded with recordError and never makes a thread
// read out of bounds: ranges are clamped to the data.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_JAGGED_JAGGED_DEVICE_CUH
#define EMBER_CUDA_JAGGED_JAGGED_DEVICE_CUH

#include "cuda/device_error.h"
#include "cuda/copy_element.h"
#include "cuda/host_device.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace ember::cuda::jagged {

/// Where a thread records bad data (raiseDeviceError on the device; the
/// same first-error-wins rule on the host).
struct ErrorSink {
  DeviceErrorRecord *record = nullptr;
  int32_t instruction = 0;
};

EMBER_HD_INLINE void recordError(const ErrorSink &sink, DeviceErrorCode code,
                                 int64_t a, int64_t b = 0, int64_t c = 0,
                                 int64_t d = 0) {
#ifdef __CUDA_ARCH__
  raiseDeviceError(sink.record, sink.instruction, code, a, b, c, d);
#else
  DeviceErrorRecord *r = sink.record;
  if (!r || r->code != 0)
    return;
  r->code = static_cast<int32_t>(code);
  r->instruction = sink.instruction;
  r->a = a;
  r->b = b;
  r->c = c;
  r->d = d;
#endif
}

/// Element i of an int32 (is64 false) or int64 index array.
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


EMBER_HD_INLINE int64_t clampTo(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

/// The segment of position x in non-decreasing offsets[0..n] (n segments):
/// the last i < n with offsets[i] <= x (empty segments are skipped).
EMBER_HD_INLINE int64_t segmentOf(const int64_t *offsets, int64_t n,
                                  int64_t x) {
  int64_t lo = 0, hi = n; // answer in [lo, hi)
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (offsets[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

//===----------------------------------------------------------------------===//
// Lengths -> offsets (a device prefix sum over what these return).
//===----------------------------------------------------------------------===//

/// Thread i of the scan's first pass: writes max(lengths[i], 0) as int64 to
/// out[i] (the scan's input; out = offsets + 1); a negative length is an
/// error. Thread 0 also writes offsets[0] = 0 (out[-1]).
EMBER_HD_INLINE void lengthForScan(int64_t i, const void *lengths, bool is64,
                                   int64_t *out, ErrorSink sink) {
  int64_t len = loadIndex(lengths, is64, i);
  if (len < 0) {
    recordError(sink, DeviceErrorCode::kNegativeLength, len, i);
    len = 0;
  }
  out[i] = len;
  if (i == 0)
    out[-1] = 0;
}

/// After the scan (one thread): the lengths must sum to expectedSum (< 0: no
/// check).
EMBER_HD_INLINE void checkLengthsSum(const int64_t *offsets, int64_t count,
                                     int64_t expectedSum, ErrorSink sink) {
  if (expectedSum >= 0 && offsets[count] != expectedSum)
    recordError(sink, DeviceErrorCode::kLengthsSumMismatch, offsets[count],
                expectedSum);
}

//===----------------------------------------------------------------------===//
// Offsets [B+1] of jagged_to_padded / padded_to_jagged.
//===----------------------------------------------------------------------===//

/// Thread i of B+1: offsets[0] must be 0, offsets must not decrease, and
/// must be at most `limit` (< 0: no limit); with maxLength >= 0 no row may be
/// longer than it. Writes the offset clamped to [0, limit] to clamped[i]
/// (clamped[0] = 0); with bad input these may still decrease, which
/// rowRange copes with.
EMBER_HD_INLINE void checkRowOffset(int64_t i, const void *offsets, bool is64,
                                    int64_t limit, int64_t maxLength,
                                    int64_t *clamped, ErrorSink sink) {
  const int64_t o = loadIndex(offsets, is64, i);
  if (i == 0 && o != 0)
    recordError(sink, DeviceErrorCode::kFirstOffsetNotZero, o);
  if (i > 0) {
    const int64_t prev = loadIndex(offsets, is64, i - 1);
    if (o < prev)
      recordError(sink, DeviceErrorCode::kOffsetsDecreasing, i, o, prev);
    else if (maxLength >= 0 && o - prev > maxLength)
      recordError(sink, DeviceErrorCode::kLengthTooLarge, i - 1, o - prev,
                  maxLength);
  }
  if (limit >= 0 && o > limit)
    recordError(sink, DeviceErrorCode::kOffsetOutOfRange, i, o, limit);
  int64_t c = i == 0 ? 0 : (o < 0 ? 0 : o);
  if (limit >= 0 && c > limit)
    c = limit;
  clamped[i] = c;
}

/// The [begin, end) of row b in clamped offsets (forced non-decreasing).
EMBER_HD_INLINE void rowRange(const int64_t *clamped, int64_t b, int64_t &begin,
                              int64_t &end) {
  begin = clamped[b];
  end = clamped[b + 1];
  if (end < begin)
    end = begin;
}

/// jagged_to_padded, element e of the output [B, L, rowElems]: a value of
/// row b at position l < its length, else the padding element.
EMBER_HD_INLINE void toPaddedElement(int64_t e, const void *values,
                                     const int64_t *clamped, int64_t L,
                                     int64_t rowElems, int elemBytes,
                                     const void *padding, void *out) {
  const int64_t perRow = L * rowElems;
  const int64_t b = e / perRow, rest = e - b * perRow;
  const int64_t l = rest / rowElems, k = rest - l * rowElems;
  int64_t begin, end;
  rowRange(clamped, b, begin, end);
  if (l < end - begin)
    copyElement(out, e, values, (begin + l) * rowElems + k, elemBytes);
  else
    copyElement(out, e, padding, 0, elemBytes);
}

/// padded_to_jagged, element e of the output [total, rowElems]: row r of the
/// output is position r - offsets[b] of padded row b.
EMBER_HD_INLINE void toJaggedElement(int64_t e, const void *padded,
                                     const int64_t *clamped, int64_t B,
                                     int64_t L, int64_t rowElems, int elemBytes,
                                     void *out) {
  const int64_t r = e / rowElems, k = e - r * rowElems;
  const int64_t b = segmentOf(clamped, B, r);
  const int64_t l = r - clamped[b];
  if (l < L)
    copyElement(out, e, padded, (b * L + l) * rowElems + k, elemBytes);
  else // a row longer than L (already an error): zeros
    for (int z = 0; z < elemBytes; ++z)
      static_cast<uint8_t *>(out)[e * elemBytes + z] = 0;
}

//===----------------------------------------------------------------------===//
// kjt_permute
//===----------------------------------------------------------------------===//

/// Thread i of P: the number of values of output key i (input key perm[i]),
/// from the input's segment offsets [K*B+1] (keyBegin(k) = offsets[k*B]).
EMBER_HD_INLINE void permuteKeyCount(int64_t i, const int64_t *perm,
                                     const int64_t *offsets, int64_t B,
                                     int64_t *counts) {
  const int64_t k = perm[i];
  counts[i] = offsets[(k + 1) * B] - offsets[k * B];
}

/// Thread j of P*B: output length j is input length perm[j/B]*B + j%B.
EMBER_HD_INLINE void permuteLength(int64_t j, const int64_t *perm, int64_t B,
                                   const void *lengths, void *outLengths,
                                   int lengthBytes) {
  const int64_t i = j / B, b = j - i * B;
  copyElement(outLengths, j, lengths, perm[i] * B + b, lengthBytes);
}

/// Thread j of the output values: outKeyBegin [P+1] is the exclusive scan of
/// the key counts.
/// The input holds numValues values: a position past them (lengths that do
/// not sum to numValues, already an error) is written as zeros.
EMBER_HD_INLINE void
permuteValue(int64_t j, const int64_t *perm, const int64_t *offsets, int64_t B,
             const int64_t *outKeyBegin, int64_t P, const void *values,
             int64_t numValues, void *outValues, int valueBytes,
             const void *weights, void *outWeights, int weightBytes) {
  const int64_t i = segmentOf(outKeyBegin, P, j);
  const int64_t src = offsets[perm[i] * B] + (j - outKeyBegin[i]);
  if (src >= numValues) {
    const int64_t zero = 0;
    copyElement(outValues, j, &zero, 0, valueBytes);
    if (outWeights)
      copyElement(outWeights, j, &zero, 0, weightBytes);
    return;
  }
  copyElement(outValues, j, values, src, valueBytes);
  if (outWeights)
    copyElement(outWeights, j, weights, src, weightBytes);
}

//===----------------------------------------------------------------------===//
// kjt_bucketize (FBGEMM block_bucketize_sparse_features semantics, uniform
// blocks, sequence = true; see kjt_bucketize_kernel.cpp)
//===----------------------------------------------------------------------===//

/// The bucket and local id of `id` (ids of 32 bits are read as uint32).
EMBER_HD_INLINE void bucketOf(int64_t id, bool ids64, uint64_t blockSize,
                              uint64_t numBuckets, uint64_t &bucket,
                              int64_t &local) {
  const uint64_t u = ids64 ? static_cast<uint64_t>(id)
                           : static_cast<uint64_t>(static_cast<uint32_t>(id));
  uint64_t l;
  if (u < blockSize * numBuckets) {
    bucket = u / blockSize;
    l = u % blockSize;
  } else {
    bucket = u % numBuckets;
    l = u / numBuckets;
  }
  local = ids64 ? static_cast<int64_t>(l)
                : static_cast<int64_t>(
                      static_cast<int32_t>(static_cast<uint32_t>(l)));
}

/// Segments are clamped to the numIds ids (lengths that sum to more are
/// already an error).
/// Thread s of F*B (one input segment): counts[p*FB + s] = the segment's ids
/// that go to bucket p. Only this thread touches the entries of segment s,
/// so the counts need no atomics; counts must be zero on entry.
EMBER_HD_INLINE void bucketizeCount(int64_t s, int64_t B, int64_t FB,
                                    const int64_t *offsets, const void *ids,
                                    bool ids64, int64_t numIds,
                                    const int64_t *blockSizes,
                                    uint64_t numBuckets, int64_t *counts) {
  const uint64_t block = static_cast<uint64_t>(blockSizes[s / B]);
  const int64_t end = offsets[s + 1] < numIds ? offsets[s + 1] : numIds;
  for (int64_t i = offsets[s]; i < end; ++i) {
    uint64_t bucket;
    int64_t local;
    bucketOf(loadIndex(ids, ids64, i), ids64, block, numBuckets, bucket, local);
    ++counts[static_cast<int64_t>(bucket) * FB + s];
  }
}

/// Thread j of numBuckets*F*B: the output length j.
EMBER_HD_INLINE void bucketizeLength(int64_t j, const int64_t *counts,
                                     void *outLengths, bool lengths64) {
  storeIndex(outLengths, lengths64, j, counts[j]);
}

/// Thread s of F*B: places the segment's ids, in input order, at the next
/// free positions of their (bucket, s) output segments. `cursor` starts as
/// the exclusive scan of the counts; only this thread touches its entries.
EMBER_HD_INLINE void
bucketizePlace(int64_t s, int64_t B, int64_t FB, const int64_t *offsets,
               const void *ids, bool ids64, int64_t numIds,
               const int64_t *blockSizes, uint64_t numBuckets, int64_t *cursor,
               void *outIds, int64_t *permute, const void *weights,
               void *outWeights, int weightBytes) {
  const uint64_t block = static_cast<uint64_t>(blockSizes[s / B]);
  const int64_t end = offsets[s + 1] < numIds ? offsets[s + 1] : numIds;
  for (int64_t i = offsets[s]; i < end; ++i) {
    uint64_t bucket;
    int64_t local;
    bucketOf(loadIndex(ids, ids64, i), ids64, block, numBuckets, bucket, local);
    const int64_t pos = cursor[static_cast<int64_t>(bucket) * FB + s]++;
    storeIndex(outIds, ids64, pos, local);
    permute[i] = pos;
    if (outWeights)
      copyElement(outWeights, pos, weights, i, weightBytes);
  }
}

//===----------------------------------------------------------------------===//
// kjt_from_bags (all features in each launch)
//===----------------------------------------------------------------------===//

/// The features of kjt_from_bags as device arrays (one int64 array of
/// 9F + 2 entries, laid out by fromBagsTable on the host): the work of all
/// features is one index space per launch (their offsets, their ids), and a
/// thread finds its feature by a binary search of the begin arrays.
struct BagFeatures {
  int64_t count = 0;                // F
  const int64_t *ids = nullptr;     // device pointers, as int64
  const int64_t *offsets = nullptr; // device pointers, as int64
  const int64_t *weights = nullptr; // device pointers (0: unweighted)
  const int64_t *flags = nullptr;   // kBagIds64 | kBagOffsets64 | ...
  const int64_t *numIds = nullptr;
  const int64_t *numOffsets = nullptr;
  const int64_t *numRows = nullptr;  // < 0: ids are not checked
  const int64_t *idBegin = nullptr;  // F + 1: prefix sum of numIds
  const int64_t *offBegin = nullptr; // F + 1: prefix sum of numOffsets
};

constexpr int64_t kBagIds64 = 1, kBagOffsets64 = 2, kBagIncludeLast = 4;

/// Entries of the table of F features.
EMBER_HD_INLINE int64_t bagTableSize(int64_t F) { return 9 * F + 2; }

EMBER_HD_INLINE BagFeatures bagFeaturesAt(const int64_t *table, int64_t F) {
  BagFeatures t;
  t.count = F;
  t.ids = table;
  t.offsets = table + F;
  t.weights = table + 2 * F;
  t.flags = table + 3 * F;
  t.numIds = table + 4 * F;
  t.numOffsets = table + 5 * F;
  t.numRows = table + 6 * F;
  t.idBegin = table + 7 * F;
  t.offBegin = table + 8 * F + 1;
  return t;
}

EMBER_HD_INLINE const void *bagPointer(const int64_t *pointers, int64_t f) {
  return reinterpret_cast<const void *>(static_cast<uintptr_t>(pointers[f]));
}

/// One feature of kjt_from_bags, on the host.
struct BagFeatureInfo {
  const void *ids = nullptr, *offsets = nullptr, *weights = nullptr;
  bool ids64 = true, offsets64 = true, includeLast = false;
  int64_t numIds = 0, numOffsets = 0, numRows = -1;
};

/// The host image of the BagFeatures table (bagTableSize(F) entries).
inline std::vector<int64_t>
fromBagsTable(const std::vector<BagFeatureInfo> &features) {
  const int64_t F = static_cast<int64_t>(features.size());
  std::vector<int64_t> table(bagTableSize(F), 0);
  int64_t *idBegin = table.data() + 7 * F, *offBegin = table.data() + 8 * F + 1;
  for (int64_t f = 0; f < F; ++f) {
    const BagFeatureInfo &b = features[f];
    table[f] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(b.ids));
    table[F + f] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(b.offsets));
    table[2 * F + f] =
        static_cast<int64_t>(reinterpret_cast<uintptr_t>(b.weights));
    table[3 * F + f] = (b.ids64 ? kBagIds64 : 0) |
                       (b.offsets64 ? kBagOffsets64 : 0) |
                       (b.includeLast ? kBagIncludeLast : 0);
    table[4 * F + f] = b.numIds;
    table[5 * F + f] = b.numOffsets;
    table[6 * F + f] = b.numRows;
    idBegin[f + 1] = idBegin[f] + b.numIds;
    offBegin[f + 1] = offBegin[f] + b.numOffsets;
  }
  return table;
}

/// Offset g of all the features' offsets (thread g of their total): offset
/// i of feature f. A feature's offsets have B + 1 entries (include_last_
/// offset) or B (the last bag then ends at its numIds). Offsets must start
/// at 0, not decrease and be at most numIds. Thread i < B writes the length
/// of bag i (lengths[f * B + i]); with include_last_offset, the last thread
/// writes the ids the bags cover (the last offset, clamped) to used[f].
EMBER_HD_INLINE void fromBagsOffset(int64_t g, const BagFeatures &t, int64_t B,
                                    void *outLengths, bool lengths64,
                                    int64_t *used, ErrorSink sink) {
  const int64_t f = segmentOf(t.offBegin, t.count, g);
  const int64_t i = g - t.offBegin[f];
  const void *offsets = bagPointer(t.offsets, f);
  const bool offsets64 = (t.flags[f] & kBagOffsets64) != 0;
  const int64_t numIds = t.numIds[f], numOffsets = t.numOffsets[f];
  const int64_t o = loadIndex(offsets, offsets64, i);
  if (i == 0 && o != 0)
    recordError(sink, DeviceErrorCode::kFeatureOffsetInvalid, f, 0, o, numIds);
  if ((i > 0 && o < loadIndex(offsets, offsets64, i - 1)) || o > numIds)
    recordError(sink, DeviceErrorCode::kFeatureOffsetInvalid, f, i, o, numIds);
  if (i < B) {
    const int64_t next =
        i + 1 < numOffsets ? loadIndex(offsets, offsets64, i + 1) : numIds;
    storeIndex(outLengths, lengths64, f * B + i, next > o ? next - o : 0);
  }
  if ((t.flags[f] & kBagIncludeLast) && i == numOffsets - 1)
    used[f] = clampTo(o, 0, numIds);
}

/// The ids of feature f the bags cover: [0, usedEnd).
EMBER_HD_INLINE int64_t bagIdsUsedEnd(const BagFeatures &t, int64_t f,
                                      int64_t B) {
  if (t.flags[f] & kBagIncludeLast)
    return clampTo(loadIndex(bagPointer(t.offsets, f),
                             (t.flags[f] & kBagOffsets64) != 0, B),
                   0, t.numIds[f]);
  return B > 0 ? t.numIds[f] : 0;
}

/// Id g of all the features' ids (thread g of their total): id i of feature
/// f must lie in [0, numRows[f]) when the bags cover it. The error names the
/// feature, the position and the sample (found by a search of the offsets,
/// only on the error path).
EMBER_HD_INLINE void fromBagsCheckId(int64_t g, const BagFeatures &t, int64_t B,
                                     ErrorSink sink) {
  const int64_t f = segmentOf(t.idBegin, t.count, g);
  const int64_t i = g - t.idBegin[f], numRows = t.numRows[f];
  if (numRows < 0 || i >= bagIdsUsedEnd(t, f, B))
    return;
  const int64_t id =
      loadIndex(bagPointer(t.ids, f), (t.flags[f] & kBagIds64) != 0, i);
  if (id >= 0 && id < numRows)
    return;
  // The sample: the last bag b < B with offsets[b] <= i.
  const void *offsets = bagPointer(t.offsets, f);
  const bool offsets64 = (t.flags[f] & kBagOffsets64) != 0;
  int64_t lo = 0, hi = B;
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (loadIndex(offsets, offsets64, mid) <= i)
      lo = mid;
    else
      hi = mid;
  }
  recordError(sink, DeviceErrorCode::kFeatureIdOutOfRange, id, i,
              packFeatureSample(f, lo), numRows);
}

/// Id g of all the features' ids: id i of feature f goes to output position
/// outBegin[f] + i when the bags cover it (i < outBegin[f+1] - outBegin[f]),
/// its weight likewise.
EMBER_HD_INLINE void fromBagsCopy(int64_t g, const BagFeatures &t,
                                  const int64_t *outBegin, void *outIds,
                                  int idBytes, void *outWeights) {
  const int64_t f = segmentOf(t.idBegin, t.count, g);
  const int64_t i = g - t.idBegin[f];
  if (i >= outBegin[f + 1] - outBegin[f])
    return;
  copyElement(outIds, outBegin[f] + i, bagPointer(t.ids, f), i, idBytes);
  if (outWeights)
    copyElement(outWeights, outBegin[f] + i, bagPointer(t.weights, f), i, 4);
}

} // namespace ember::cuda::jagged

#endif // EMBER_CUDA_JAGGED_JAGGED_DEVICE_CUH
