//===- embedding_pool_avx2.cpp - AVX2 + FMA + F16C row routines -----------===//
//
// Pooling with the bag's accumulator in ymm registers (64 columns per pass,
// then a scalar tail), and the row routines gatherRows uses.
// Compiled for the baseline ISA like every other file; only the functions
// marked EMBER_POOL_TARGET use AVX2/FMA/F16C, and embedding_pool.cpp calls
// them only after checking the CPU supports those extensions.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/embedding_pool.h"
#include "kernels/cpu/embedding_row_decode.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <immintrin.h>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#define EMBER_HAVE_AVX2_ROUTINES 1
#define EMBER_POOL_TARGET __attribute__((target("avx2,fma,f16c")))
#include "kernels/cpu/embedding_pool_loop.h"
#include "kernels/cpu/embedding_pool_whole_row.h"

namespace {

using namespace ember::embedding::rowdecode;

/// Loads 8 consecutive elements of a row in format F as floats, without
/// scale/bias (quantized codes come back as 0..255 or 0..15).
template <TableFormat F> struct Load8;
template <> struct Load8<TableFormat::kFloat32> {
  EMBER_POOL_TARGET static __m256 at(const uint8_t *row, int64_t d) {
    return _mm256_loadu_ps(reinterpret_cast<const float *>(row) + d);
  }
};
template <> struct Load8<TableFormat::kFloat16> {
  EMBER_POOL_TARGET static __m256 at(const uint8_t *row, int64_t d) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(row + 2 * d)));
  }
};
template <> struct Load8<TableFormat::kBFloat16> {
  EMBER_POOL_TARGET static __m256 at(const uint8_t *row, int64_t d) {
    __m256i wide = _mm256_cvtepu16_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(row + 2 * d)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
};
template <> struct Load8<TableFormat::kInt8RowWise> {
  EMBER_POOL_TARGET static __m256 at(const uint8_t *row, int64_t d) {
    __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(row + d));
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
  }
};
template <> struct Load8<TableFormat::kInt4RowWise> {
  // d is a multiple of 8, so the 8 elements are the 4 bytes at d / 2.
  EMBER_POOL_TARGET static __m256 at(const uint8_t *row, int64_t d) {
    int32_t packed;
    std::memcpy(&packed, row + d / 2, 4);
    __m128i v = _mm_cvtsi32_si128(packed);
    __m128i mask = _mm_set1_epi8(0x0f);
    __m128i lo = _mm_and_si128(v, mask);
    __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), mask);
    __m128i inter = _mm_unpacklo_epi8(lo, hi); // e0 e1 e2 ... e7
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(inter));
  }
};

/// The vector traits of embedding_pool_whole_row.h: 8 floats per ymm. AVX2
/// has no masked 8/16-bit loads, so rows are whole vectors (dim % 8 == 0)
/// and the masks are unused.
struct V256 {
  using Reg = __m256;
  using Mask = int;
  static constexpr int kLanes = 8;
  EMBER_POOL_TARGET static Reg zero() { return _mm256_setzero_ps(); }
  EMBER_POOL_TARGET static Reg set1(float v) { return _mm256_set1_ps(v); }
  EMBER_POOL_TARGET static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  EMBER_POOL_TARGET static Reg fmadd(Reg a, Reg b, Reg c) {
    return _mm256_fmadd_ps(a, b, c);
  }
  EMBER_POOL_TARGET static Reg div(Reg a, Reg b) { return _mm256_div_ps(a, b); }
  static Mask fullMask() { return 0; }
  static Mask tailMask(int64_t) { return 0; }
  template <TableFormat F>
  EMBER_POOL_TARGET static Reg load(const uint8_t *row, int k, Mask) {
    return Load8<F>::at(row, int64_t{k} * kLanes);
  }
  EMBER_POOL_TARGET static void store(float *out, int k, Reg v, Mask) {
    _mm256_storeu_ps(out + k * kLanes, v);
  }
};

template <TableFormat F> struct RowOps {
  /// For quantized rows: scale and bias; (1, 0) for float rows.
  static void scaleBias(const uint8_t *row, int64_t dim, float &s, float &b) {
    if constexpr (isQuantized(F)) {
      const uint8_t *sb = row + codeBytes(F, dim);
      s = loadFloat(sb);
      b = loadFloat(sb + 4);
    } else {
      s = 1.0f;
      b = 0.0f;
    }
  }

  EMBER_POOL_TARGET static void fill(float *acc, float v, int64_t dim) {
    __m256 vv = _mm256_set1_ps(v);
    int64_t d = 0;
    for (; d + 8 <= dim; d += 8)
      _mm256_storeu_ps(acc + d, vv);
    for (; d < dim; ++d)
      acc[d] = v;
  }
  EMBER_POOL_TARGET static void storeRow(float *out, const uint8_t *row,
                                         int64_t dim) {
    float s, b;
    scaleBias(row, dim, s, b);
    const __m256 vs = _mm256_set1_ps(s), vb = _mm256_set1_ps(b);
    int64_t d = 0;
    for (; d + 8 <= dim; d += 8) {
      __m256 v = Load8<F>::at(row, d);
      if constexpr (isQuantized(F))
        v = _mm256_fmadd_ps(v, vs, vb);
      _mm256_storeu_ps(out + d, v);
    }
    for (; d < dim; ++d)
      out[d] = isQuantized(F) ? std::fma(Decode<F>::at(row, d), s, b)
                              : Decode<F>::at(row, d);
  }
};

// Register-blocked pooling: a bag is reduced 64 columns (8 ymm registers) at
// a time with the accumulators in registers, then the last dim % 8 columns
// in scalar code. The per-vector loops are fully unrolled (#pragma GCC
// unroll) so that the compiler keeps acc[] in registers.
constexpr int kLanes = 8;
constexpr int kMaxVecs = 8;

/// Pools bag [begin, end) into columns [c0, c0 + 8 * NV) of `out`. `first`
/// marks the bag's first pass, which prefetches, counts invalid ids, stops
/// at the first one in kFatal (returning false) and, for quantized sums in
/// the fast order, sums the bag's weighted biases into `biasSum`, which
/// every pass adds to its columns.
template <TableFormat F, typename IndexT, bool kMax, int NV>
EMBER_POOL_TARGET bool poolBlock(const PoolJob &job, int64_t begin, int64_t end,
                                 int64_t c0, bool first, int64_t distance,
                                 int64_t idsEnd, float *out, float &biasSum,
                                 PoolResult &result) {
  const IndexT *ids = static_cast<const IndexT *>(job.ids);
  const uint8_t *table = job.table.data;
  const int64_t rows = job.table.rows, rowBytes = job.table.rowBytes;
  const int64_t dim = job.table.dim;
  const bool hasPadding = job.paddingIdx >= 0;
  const bool prefetch = first && distance > 0;
  const bool fbgemmOrder = job.quantizedSums == QuantizedSums::kFbgemm;
  __m256 acc[NV];
  const __m256 init =
      kMax ? _mm256_set1_ps(-std::numeric_limits<float>::infinity())
           : _mm256_setzero_ps();
#pragma GCC unroll 8
  for (int k = 0; k < NV; ++k)
    acc[k] = init;
  int64_t count = 0;
  for (int64_t i = begin; i < end; ++i) {
    if (prefetch && i + distance < idsEnd)
      prefetchRow(table, ids[i + distance], rows, rowBytes);
    const int64_t id = ids[i];
    if (hasPadding && id == job.paddingIdx)
      continue;
    ++count;
    if (job.checkBounds &&
        static_cast<uint64_t>(id) >= static_cast<uint64_t>(rows)) {
      if (job.stopAtInvalid) {
        result.firstInvalidPos = i;
        result.firstInvalidId = id;
        return false;
      }
      if (first)
        ++result.invalidIds;
      if (kMax)
#pragma GCC unroll 8
        for (int k = 0; k < NV; ++k)
          acc[k] = _mm256_max_ps(acc[k], _mm256_setzero_ps());
      continue;
    }
    const uint8_t *row = table + id * rowBytes;
    float s = 1.0f, b = 0.0f;
    if constexpr (isQuantized(F)) {
      const uint8_t *sb = row + codeBytes(F, dim);
      s = loadFloat(sb);
      b = loadFloat(sb + 4);
    }
    if constexpr (kMax) {
      const __m256 vs = _mm256_set1_ps(s), vb = _mm256_set1_ps(b);
#pragma GCC unroll 8
      for (int k = 0; k < NV; ++k) {
        __m256 v = Load8<F>::at(row, c0 + k * kLanes);
        if constexpr (isQuantized(F))
          v = _mm256_fmadd_ps(v, vs, vb);
        acc[k] = _mm256_max_ps(acc[k], v);
      }
    } else {
      const float w = job.weights ? job.weights[i] : 1.0f;
      const __m256 vws = _mm256_set1_ps(w * s);
      if constexpr (isQuantized(F)) {
        if (fbgemmOrder) {
          const __m256 vwb = _mm256_set1_ps(w * b);
#pragma GCC unroll 8
          for (int k = 0; k < NV; ++k) // FBGEMM's order (bit-identical sums)
            acc[k] = _mm256_fmadd_ps(Load8<F>::at(row, c0 + k * kLanes), vws,
                                     _mm256_add_ps(acc[k], vwb));
        } else {
#pragma GCC unroll 8
          for (int k = 0; k < NV; ++k)
            acc[k] = _mm256_fmadd_ps(Load8<F>::at(row, c0 + k * kLanes), vws,
                                     acc[k]);
          if (first)
            biasSum += w * b;
        }
      } else {
#pragma GCC unroll 8
        for (int k = 0; k < NV; ++k)
          acc[k] =
              _mm256_fmadd_ps(Load8<F>::at(row, c0 + k * kLanes), vws, acc[k]);
      }
    }
  }
  if (!kMax && isQuantized(F) && !fbgemmOrder) {
    const __m256 vb = _mm256_set1_ps(biasSum);
#pragma GCC unroll 8
    for (int k = 0; k < NV; ++k)
      acc[k] = _mm256_add_ps(acc[k], vb);
  }
  if (count == 0) {
#pragma GCC unroll 8
    for (int k = 0; k < NV; ++k)
      acc[k] = _mm256_setzero_ps();
  } else if (!kMax && job.pooling == Pooling::kMean && count > 1) {
    const __m256 c = _mm256_set1_ps(static_cast<float>(count));
#pragma GCC unroll 8
    for (int k = 0; k < NV; ++k)
      acc[k] = _mm256_div_ps(acc[k], c);
  }
#pragma GCC unroll 8
  for (int k = 0; k < NV; ++k)
    _mm256_storeu_ps(out + c0 + k * kLanes, acc[k]);
  return true;
}

/// The last columns [c0, dim) (fewer than 8) of bag [begin, end), scalar;
/// same contract as poolBlock.
template <TableFormat F, typename IndexT, bool kMax>
EMBER_POOL_TARGET bool poolTail(const PoolJob &job, int64_t begin, int64_t end,
                                int64_t c0, bool first, int64_t distance,
                                int64_t idsEnd, float *out, float &biasSum,
                                PoolResult &result) {
  const IndexT *ids = static_cast<const IndexT *>(job.ids);
  const uint8_t *table = job.table.data;
  const int64_t rows = job.table.rows, rowBytes = job.table.rowBytes;
  const int64_t dim = job.table.dim, width = dim - c0;
  const bool prefetch = first && distance > 0;
  const bool fbgemmOrder = job.quantizedSums == QuantizedSums::kFbgemm;
  float acc[kLanes];
  std::fill(acc, acc + width,
            kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
  int64_t count = 0;
  for (int64_t i = begin; i < end; ++i) {
    if (prefetch && i + distance < idsEnd)
      prefetchRow(table, ids[i + distance], rows, rowBytes);
    const int64_t id = ids[i];
    if (job.paddingIdx >= 0 && id == job.paddingIdx)
      continue;
    ++count;
    if (job.checkBounds &&
        static_cast<uint64_t>(id) >= static_cast<uint64_t>(rows)) {
      if (job.stopAtInvalid) {
        result.firstInvalidPos = i;
        result.firstInvalidId = id;
        return false;
      }
      if (first)
        ++result.invalidIds;
      if (kMax)
        for (int64_t t = 0; t < width; ++t)
          acc[t] = std::max(acc[t], 0.0f);
      continue;
    }
    const uint8_t *row = table + id * rowBytes;
    float s = 1.0f, b = 0.0f;
    if constexpr (isQuantized(F)) {
      const uint8_t *sb = row + codeBytes(F, dim);
      s = loadFloat(sb);
      b = loadFloat(sb + 4);
    }
    const float w = (!kMax && job.weights) ? job.weights[i] : 1.0f;
    for (int64_t t = 0; t < width; ++t) {
      const float v = Decode<F>::at(row, c0 + t);
      if constexpr (kMax)
        acc[t] = std::max(acc[t], isQuantized(F) ? std::fma(v, s, b) : v);
      else if constexpr (isQuantized(F)) // as poolBlock
        acc[t] = fbgemmOrder ? std::fma(v, w * s, acc[t] + w * b)
                             : std::fma(v, w * s, acc[t]);
      else
        acc[t] = std::fma(v, w, acc[t]);
    }
    if (!kMax && isQuantized(F) && !fbgemmOrder && first)
      biasSum += w * b;
  }
  for (int64_t t = 0; t < width; ++t) {
    float v = acc[t];
    if (!kMax && isQuantized(F) && !fbgemmOrder)
      v += biasSum;
    if (count == 0)
      v = 0.0f;
    else if (!kMax && job.pooling == Pooling::kMean && count > 1)
      v /= static_cast<float>(count);
    out[c0 + t] = v;
  }
  return true;
}

template <TableFormat F, typename IndexT, bool kMax>
EMBER_POOL_TARGET PoolResult poolBagsBlocked(const PoolJob &job) {
  using BlockFn = bool (*)(const PoolJob &, int64_t, int64_t, int64_t, bool,
                           int64_t, int64_t, float *, float &, PoolResult &);
  static constexpr BlockFn kBlocks[kMaxVecs] = {
      poolBlock<F, IndexT, kMax, 1>, poolBlock<F, IndexT, kMax, 2>,
      poolBlock<F, IndexT, kMax, 3>, poolBlock<F, IndexT, kMax, 4>,
      poolBlock<F, IndexT, kMax, 5>, poolBlock<F, IndexT, kMax, 6>,
      poolBlock<F, IndexT, kMax, 7>, poolBlock<F, IndexT, kMax, 8>};
  PoolResult result;
  if (job.numBags <= 0)
    return result;
  const int64_t dim = job.table.dim, dimVec = dim / kLanes * kLanes;
  const int64_t distance = prefetchDistance(job.table.rowBytes);
  const int64_t idsEnd = job.offsets[job.numBags];
  const IndexT *ids = static_cast<const IndexT *>(job.ids);
  for (int64_t i = job.offsets[0];
       i < std::min(idsEnd, job.offsets[0] + distance); ++i)
    prefetchRow(job.table.data, ids[i], job.table.rows, job.table.rowBytes);
  for (int64_t bag = 0; bag < job.numBags; ++bag) {
    const int64_t begin = job.offsets[bag], end = job.offsets[bag + 1];
    float *out = job.out + bag * job.outStride;
    bool first = true;
    float biasSum = 0.0f; // summed by the first pass (quantized, kFast)
    for (int64_t c0 = 0; c0 < dimVec; c0 += kMaxVecs * kLanes) {
      const int64_t vecs = std::min<int64_t>(kMaxVecs, (dimVec - c0) / kLanes);
      if (!kBlocks[vecs - 1](job, begin, end, c0, first, distance, idsEnd, out,
                             biasSum, result))
        return result;
      first = false;
    }
    if (dimVec < dim &&
        !poolTail<F, IndexT, kMax>(job, begin, end, dimVec, first, distance,
                                   idsEnd, out, biasSum, result))
      return result;
  }
  return result;
}

/// Sum and mean pooling of rows of whole ymm vectors (dim % 8 == 0) with
/// poolWholeRows, NV = dim / 8: up to 8 vectors (64 columns) in one pass
/// over each bag; 16 vectors (128 columns) in two passes of 8 (the second
/// finds the rows in L1), which leaves registers for the TLB priming, or,
/// for unweighted fp32 where avx2WideRowPasses() says so, in one; fp32
/// also 12 (96 columns) in one pass. Null for other widths (the blocked
/// loops take them).
/// Two passes for D 128 measured, against the loops they replace
/// (interleaved A/B, 1 thread, load 3.7-4.6): int8 1M rows L 80 (the blocked
/// loop before) 1.06x by the minimum, 1.18x by the median; fp32 10M rows
/// L 80 (16 ymm of accumulators, no priming before) 1.05x / 1.18x.
/// Whether poolWholeRows pools two bags at a time: quantized rows (whose
/// add-then-fma chain per row is twice as long as a float row's) when both
/// bags' accumulators fit in the registers with room to spare. (Pairs of
/// 8-vector rows in two passes of 4 measured 0.81-0.88x of one bag at a
/// time; in one pass, spilling, 0.83x.)
template <TableFormat F, int NV>
constexpr bool kPairBags = isQuantized(F) && NV <= 4;

/// The one-pass loops of rows of 1..sizeof...(P) vectors, by vectors - 1.
template <TableFormat F, typename IndexT, bool kWeighted, bool kMayPrime,
          bool kFbgemmSums, int... P>
PoolResult (*onePassPooling(int64_t vecs, std::integer_sequence<int, P...>))(
    const PoolJob &) {
  using Fn = PoolResult (*)(const PoolJob &);
  static constexpr Fn kLoops[] = {
      poolWholeRows<V256, F, IndexT, P + 1, kWeighted, kPairBags<F, P + 1>, 1,
                    kMayPrime, kFbgemmSums>...};
  return kLoops[vecs - 1];
}

template <TableFormat F, typename IndexT, bool kWeighted, bool kMayPrime,
          bool kFbgemmSums>
PoolResult (*wholeRowPoolingPrimed(int64_t dim))(const PoolJob &) {
  if (dim % kLanes != 0)
    return nullptr;
  const int64_t vecs = dim / kLanes;
  if (vecs >= 1 && vecs <= kMaxVecs)
    return onePassPooling<F, IndexT, kWeighted, kMayPrime, kFbgemmSums>(
        vecs, std::make_integer_sequence<int, kMaxVecs>());
  switch (vecs) {
  case 12:
    // 12 ymm of accumulators: no priming either way.
    if constexpr (F == TableFormat::kFloat32)
      return poolWholeRows<V256, F, IndexT, 12, kWeighted, false>;
    return nullptr;
  case 16:
    // Unweighted float rows need no register besides the accumulators: one
    // pass (no priming) on the CPUs that measured it faster
    // (avx2WideRowPasses).
    if constexpr (F == TableFormat::kFloat32 && !kWeighted)
      if (ember::embedding::avx2WideRowPasses() == 1)
        return poolWholeRows<V256, F, IndexT, 16, kWeighted, false, 1>;
    return poolWholeRows<V256, F, IndexT, 16, kWeighted, false, 2, kMayPrime,
                         kFbgemmSums>;
  default: return nullptr;
  }
}

/// The whole-row loop for `dim`, priming the TLB where that measured faster
/// (avx2PrimesTlb); nullptr when rows are not whole vectors or too wide.
template <TableFormat F, typename IndexT, bool kWeighted, bool kFbgemmSums>
PoolResult (*wholeRowPooling(int64_t dim))(const PoolJob &) {
  return ember::embedding::avx2PrimesTlb()
             ? wholeRowPoolingPrimed<F, IndexT, kWeighted, true, kFbgemmSums>(
                   dim)
             : wholeRowPoolingPrimed<F, IndexT, kWeighted, false, kFbgemmSums>(
                   dim);
}

/// The whole-row loop for `job` (its index type, weights and, for
/// quantized rows, order of sums), or nullptr.
template <TableFormat F, bool kFbgemmSums>
PoolResult (*wholeRowPoolingFor(const PoolJob &job))(const PoolJob &) {
  const int64_t dim = job.table.dim;
  const bool weighted = job.weights != nullptr;
  if (job.idsAre64)
    return weighted ? wholeRowPooling<F, int64_t, true, kFbgemmSums>(dim)
                    : wholeRowPooling<F, int64_t, false, kFbgemmSums>(dim);
  return weighted ? wholeRowPooling<F, int32_t, true, kFbgemmSums>(dim)
                  : wholeRowPooling<F, int32_t, false, kFbgemmSums>(dim);
}

template <TableFormat F> PoolResult poolBagsBlockedFor(const PoolJob &job) {
  bool isMax = job.pooling == Pooling::kMax;
  if (!isMax) {
    auto fn = isQuantized(F) && job.quantizedSums == QuantizedSums::kFbgemm
                  ? wholeRowPoolingFor<F, isQuantized(F)>(job)
                  : wholeRowPoolingFor<F, false>(job);
    if (fn)
      return fn(job);
  }
  if (job.idsAre64)
    return isMax ? poolBagsBlocked<F, int64_t, true>(job)
                 : poolBagsBlocked<F, int64_t, false>(job);
  return isMax ? poolBagsBlocked<F, int32_t, true>(job)
               : poolBagsBlocked<F, int32_t, false>(job);
}

} // namespace
#endif // x86

namespace ember::embedding::detail {

#ifdef EMBER_HAVE_AVX2_ROUTINES
PoolResult poolBagsAvx2(const PoolJob &job) {
  switch (job.table.format) {
  case TableFormat::kFloat32:
    return poolBagsBlockedFor<TableFormat::kFloat32>(job);
  case TableFormat::kFloat16:
    return poolBagsBlockedFor<TableFormat::kFloat16>(job);
  case TableFormat::kBFloat16:
    return poolBagsBlockedFor<TableFormat::kBFloat16>(job);
  case TableFormat::kInt8RowWise:
    return poolBagsBlockedFor<TableFormat::kInt8RowWise>(job);
  case TableFormat::kInt4RowWise:
    return poolBagsBlockedFor<TableFormat::kInt4RowWise>(job);
  }
  return PoolResult();
}
PoolResult gatherRowsAvx2(const PoolJob &job) {
  return dispatchGatherRows<RowOps>(job);
}
#else
PoolResult poolBagsAvx2(const PoolJob &job) { return poolBagsPortable(job); }
PoolResult gatherRowsAvx2(const PoolJob &job) {
  return gatherRowsPortable(job);
}
#endif

} // namespace ember::embedding::detail
