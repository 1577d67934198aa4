//===- embedding_pool_avx512.cpp - AVX-512 register-blocked pooling -------===//
//
// On CPUs with AVX-512 (F, BW, VL, DQ) pooling keeps each bag's accumulator in
// registers: the row is processed in blocks of up to 8 vectors (128 floats),
// and for each block the bag's rows are summed into 8 zmm registers before
// one store, instead of loading and storing the output row for every id. The
// last vector of a block is masked, so any dim works without a scalar tail.
// Only functions marked EMBER_POOL_TARGET use AVX-512; embedding_pool.cpp
// calls them only after checking the CPU.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/embedding_pool.h"
#include "kernels/cpu/embedding_row_decode.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>
#include <limits>

// GCC 12 warns that the _mm512_undefined_ps() inside its own _mm512_max_ps
// "may be used uninitialized" (a known false positive of its headers).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#if defined(__x86_64__)
#define EMBER_HAVE_AVX512_ROUTINES 1
#define EMBER_POOL_TARGET                                                      \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#include "kernels/cpu/embedding_pool_loop.h"
#include "kernels/cpu/embedding_pool_whole_row.h"

namespace {

using namespace ember::embedding::rowdecode;

// The loops over a block's vectors are fully unrolled (#pragma GCC unroll)
// so that the compiler keeps acc[] in registers; left rolled, it spills acc[]
// to the stack.
constexpr int kLanes = 16;
constexpr int kMaxVecs = 8; // 128 floats per block

inline __mmask16 laneMask(int64_t count) {
  return count >= kLanes ? static_cast<__mmask16>(0xffff)
                         : static_cast<__mmask16>((1u << count) - 1);
}

/// Loads up to 16 elements (lanes set in `mask`) starting at element d of a
/// row in format F, as floats without scale/bias.
template <TableFormat F> struct Load16;
template <> struct Load16<TableFormat::kFloat32> {
  EMBER_POOL_TARGET static __m512 at(const uint8_t *row, int64_t d,
                                     __mmask16 mask) {
    return _mm512_maskz_loadu_ps(mask,
                                 reinterpret_cast<const float *>(row) + d);
  }
};
template <> struct Load16<TableFormat::kFloat16> {
  EMBER_POOL_TARGET static __m512 at(const uint8_t *row, int64_t d,
                                     __mmask16 mask) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, row + 2 * d));
  }
};
template <> struct Load16<TableFormat::kBFloat16> {
  EMBER_POOL_TARGET static __m512 at(const uint8_t *row, int64_t d,
                                     __mmask16 mask) {
    __m512i wide =
        _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, row + 2 * d));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
};
template <> struct Load16<TableFormat::kInt8RowWise> {
  EMBER_POOL_TARGET static __m512 at(const uint8_t *row, int64_t d,
                                     __mmask16 mask) {
    return _mm512_cvtepi32_ps(
        _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mask, row + d)));
  }
};
template <> struct Load16<TableFormat::kInt4RowWise> {
  // d is a multiple of 16: the elements are the 8 bytes at d / 2. Lanes past
  // the mask decode whatever nibbles were loaded (zeros); they are never
  // stored.
  EMBER_POOL_TARGET static __m512 at(const uint8_t *row, int64_t d,
                                     __mmask16 mask) {
    int lanes = __builtin_popcount(mask);
    __mmask16 byteMask = static_cast<__mmask16>((1u << ((lanes + 1) / 2)) - 1);
    __m128i v = _mm_maskz_loadu_epi8(byteMask, row + d / 2);
    __m128i nibble = _mm_set1_epi8(0x0f);
    __m128i lo = _mm_and_si128(v, nibble);
    __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), nibble);
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_unpacklo_epi8(lo, hi)));
  }
};

/// The vector traits of embedding_pool_whole_row.h: 16 floats per zmm, masks
/// for the last vector of a row.
struct V512 {
  using Reg = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  EMBER_POOL_TARGET static Reg zero() { return _mm512_setzero_ps(); }
  EMBER_POOL_TARGET static Reg set1(float v) { return _mm512_set1_ps(v); }
  EMBER_POOL_TARGET static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  EMBER_POOL_TARGET static Reg fmadd(Reg a, Reg b, Reg c) {
    return _mm512_fmadd_ps(a, b, c);
  }
  EMBER_POOL_TARGET static Reg div(Reg a, Reg b) { return _mm512_div_ps(a, b); }
  static Mask fullMask() { return static_cast<Mask>(0xffff); }
  static Mask tailMask(int64_t n) { return laneMask(n); }
  template <TableFormat F>
  EMBER_POOL_TARGET static Reg load(const uint8_t *row, int k, Mask m) {
    return Load16<F>::at(row, int64_t{k} * kLanes, m);
  }
  EMBER_POOL_TARGET static void store(float *out, int k, Reg v, Mask m) {
    _mm512_mask_storeu_ps(out + k * kLanes, m, v);
  }
};

/// The row routines gatherRowsLoop (embedding_pool_loop.h) uses.
template <TableFormat F> struct RowOps {
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
    __m512 vv = _mm512_set1_ps(v);
    for (int64_t d = 0; d < dim; d += kLanes)
      _mm512_mask_storeu_ps(acc + d, laneMask(dim - d), vv);
  }
  EMBER_POOL_TARGET static void storeRow(float *out, const uint8_t *row,
                                         int64_t dim) {
    float s, b;
    scaleBias(row, dim, s, b);
    __m512 vs = _mm512_set1_ps(s), vb = _mm512_set1_ps(b);
    for (int64_t d = 0; d < dim; d += kLanes) {
      __mmask16 m = laneMask(dim - d);
      __m512 v = Load16<F>::at(row, d, m);
      if constexpr (isQuantized(F))
        v = _mm512_fmadd_ps(v, vs, vb);
      _mm512_mask_storeu_ps(out + d, m, v);
    }
  }
};

/// Pools bag [begin, end) into columns [c0, c0 + 16 * NV) of `out` (the
/// last vector masked by `tail`) with the accumulators in registers.
/// Returns false (and fills `result`) when it stops at an invalid id. For
/// quantized sums in the fast order the first block (c0 == 0) sums the
/// bag's weighted biases into `biasSum`, which every block adds.
template <TableFormat F, typename IndexT, bool kMax, int NV>
EMBER_POOL_TARGET bool poolBlock(const PoolJob &job, int64_t begin, int64_t end,
                                 int64_t c0, __mmask16 tail, bool prefetch,
                                 int64_t distance, int64_t idsEnd, float *out,
                                 float &biasSum, PoolResult &result) {
  const IndexT *ids = static_cast<const IndexT *>(job.ids);
  const uint8_t *table = job.table.data;
  const int64_t rows = job.table.rows, rowBytes = job.table.rowBytes,
                dim = job.table.dim;
  const bool hasPadding = job.paddingIdx >= 0;
  const bool fbgemmOrder = job.quantizedSums == QuantizedSums::kFbgemm;
  __m512 acc[NV];
  const __m512 init =
      kMax ? _mm512_set1_ps(-std::numeric_limits<float>::infinity())
           : _mm512_setzero_ps();
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
      if (c0 == 0)
        ++result.invalidIds;
      if (kMax)
#pragma GCC unroll 8
        for (int k = 0; k < NV; ++k)
          acc[k] = _mm512_max_ps(acc[k], _mm512_setzero_ps());
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
      const __m512 vs = _mm512_set1_ps(s), vb = _mm512_set1_ps(b);
#pragma GCC unroll 8
      for (int k = 0; k < NV; ++k) {
        __m512 v =
            Load16<F>::at(row, c0 + k * kLanes, k == NV - 1 ? tail : 0xffff);
        if constexpr (isQuantized(F))
          v = _mm512_fmadd_ps(v, vs, vb);
        acc[k] = _mm512_max_ps(acc[k], v);
      }
    } else {
      const float w = job.weights ? job.weights[i] : 1.0f;
      const __m512 vws = _mm512_set1_ps(w * s);
      if constexpr (isQuantized(F)) {
        if (fbgemmOrder) {
          const __m512 vwb = _mm512_set1_ps(w * b);
#pragma GCC unroll 8
          for (int k = 0; k < NV; ++k) {
            __m512 v = Load16<F>::at(row, c0 + k * kLanes,
                                     k == NV - 1 ? tail : 0xffff);
            // FBGEMM's order (bit-identical sums): v * ws + (acc + wb).
            acc[k] = _mm512_fmadd_ps(v, vws, _mm512_add_ps(acc[k], vwb));
          }
        } else {
#pragma GCC unroll 8
          for (int k = 0; k < NV; ++k)
            acc[k] = _mm512_fmadd_ps(Load16<F>::at(row, c0 + k * kLanes,
                                                   k == NV - 1 ? tail : 0xffff),
                                     vws, acc[k]);
          if (c0 == 0)
            biasSum += w * b;
        }
      } else {
#pragma GCC unroll 8
        for (int k = 0; k < NV; ++k)
          acc[k] = _mm512_fmadd_ps(
              Load16<F>::at(row, c0 + k * kLanes, k == NV - 1 ? tail : 0xffff),
              vws, acc[k]);
      }
    }
  }
  if (!kMax && isQuantized(F) && !fbgemmOrder) {
    const __m512 vb = _mm512_set1_ps(biasSum);
#pragma GCC unroll 8
    for (int k = 0; k < NV; ++k)
      acc[k] = _mm512_add_ps(acc[k], vb);
  }
  if (count == 0) {
#pragma GCC unroll 8
    for (int k = 0; k < NV; ++k)
      acc[k] = _mm512_setzero_ps();
  } else if (!kMax && job.pooling == Pooling::kMean && count > 1) {
    const __m512 c = _mm512_set1_ps(static_cast<float>(count));
#pragma GCC unroll 8
    for (int k = 0; k < NV; ++k)
      acc[k] = _mm512_div_ps(acc[k], c);
  }
#pragma GCC unroll 8
  for (int k = 0; k < NV; ++k)
    _mm512_mask_storeu_ps(out + c0 + k * kLanes, k == NV - 1 ? tail : 0xffff,
                          acc[k]);
  return true;
}

template <TableFormat F, typename IndexT, bool kMax>
EMBER_POOL_TARGET PoolResult poolBagsBlocked(const PoolJob &job) {
  using BlockFn =
      bool (*)(const PoolJob &, int64_t, int64_t, int64_t, __mmask16, bool,
               int64_t, int64_t, float *, float &, PoolResult &);
  static constexpr BlockFn kBlocks[kMaxVecs] = {
      poolBlock<F, IndexT, kMax, 1>, poolBlock<F, IndexT, kMax, 2>,
      poolBlock<F, IndexT, kMax, 3>, poolBlock<F, IndexT, kMax, 4>,
      poolBlock<F, IndexT, kMax, 5>, poolBlock<F, IndexT, kMax, 6>,
      poolBlock<F, IndexT, kMax, 7>, poolBlock<F, IndexT, kMax, 8>};
  PoolResult result;
  if (job.numBags <= 0)
    return result;
  const int64_t dim = job.table.dim;
  const int64_t distance = prefetchDistance(job.table.rowBytes);
  const int64_t idsEnd = job.offsets[job.numBags];
  const IndexT *ids = static_cast<const IndexT *>(job.ids);
  for (int64_t i = job.offsets[0];
       i < std::min(idsEnd, job.offsets[0] + distance); ++i)
    prefetchRow(job.table.data, ids[i], job.table.rows, job.table.rowBytes);
  for (int64_t bag = 0; bag < job.numBags; ++bag) {
    const int64_t begin = job.offsets[bag], end = job.offsets[bag + 1];
    float *out = job.out + bag * job.outStride;
    float biasSum = 0.0f; // summed by the first block (quantized, kFast)
    for (int64_t c0 = 0; c0 < dim; c0 += kMaxVecs * kLanes) {
      const int64_t width = std::min<int64_t>(dim - c0, kMaxVecs * kLanes);
      const int64_t vecs = (width + kLanes - 1) / kLanes;
      const __mmask16 tail = laneMask(width - (vecs - 1) * kLanes);
      if (!kBlocks[vecs - 1](job, begin, end, c0, tail, c0 == 0 && distance > 0,
                             distance, idsEnd, out, biasSum, result))
        return result;
    }
  }
  return result;
}

/// Sum and mean pooling of rows of up to 8 vectors (128 floats) or exactly
/// 16 (256 floats): poolWholeRows with NV = ceil(dim / 16). Null otherwise.
/// Whether poolWholeRows pools two bags at a time: quantized rows (whose
/// add-then-fma chain per row is twice as long as a float row's) when both
/// bags' accumulators fit in the registers with room to spare.
template <TableFormat F, int NV>
constexpr bool kPairBags = isQuantized(F) && NV <= 8;

template <TableFormat F, typename IndexT, bool kWeighted, bool kFbgemmSums>
PoolResult (*wholeRowPooling(int64_t dim))(const PoolJob &) {
  auto loop = [](auto nv) {
    constexpr int NV = decltype(nv)::value;
    return poolWholeRows<V512, F, IndexT, NV, kWeighted, kPairBags<F, NV>, 1,
                         true, kFbgemmSums>;
  };
  using std::integral_constant;
  switch ((dim + kLanes - 1) / kLanes) {
  case 1:
    return loop(integral_constant<int, 1>());
  case 2:
    return loop(integral_constant<int, 2>());
  case 3:
    return loop(integral_constant<int, 3>());
  case 4:
    return loop(integral_constant<int, 4>());
  case 5:
    return loop(integral_constant<int, 5>());
  case 6:
    return loop(integral_constant<int, 6>());
  case 7:
    return loop(integral_constant<int, 7>());
  case 8:
    return loop(integral_constant<int, 8>());
  case 16:
    return loop(integral_constant<int, 16>());
  default: return nullptr;
  }
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
#endif // x86-64

namespace ember::embedding::detail {

#ifdef EMBER_HAVE_AVX512_ROUTINES
PoolResult poolBagsAvx512(const PoolJob &job) {
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
PoolResult gatherRowsAvx512(const PoolJob &job) {
  return dispatchGatherRows<RowOps>(job);
}
#else
PoolResult poolBagsAvx512(const PoolJob &job) { return poolBagsAvx2(job); }
PoolResult gatherRowsAvx512(const PoolJob &job) { return gatherRowsAvx2(job); }
#endif

} // namespace ember::embedding::detail
