//===- embedding_pool_avx2.cpp - AVX2 + FMA + F16C row routines -----------===//
//
// Compiled for the baseline ISA like every other file; only the functions
// marked EMBER_POOL_TARGET use AVX2/FMA/F16C, and embedding_pool.cpp calls
// them only after checking the CPU supports those extensions.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/embedding_pool.h"
#include "kernels/cpu/embedding_row_decode.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>

#if defined(__x86_64__) || defined(__i386__)
#define EMBER_HAVE_AVX2_ROUTINES 1
#define EMBER_POOL_TARGET __attribute__((target("avx2,fma,f16c")))
#include "kernels/cpu/embedding_pool_loop.h"

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
  EMBER_POOL_TARGET static void divide(float *acc, float c, int64_t dim) {
    __m256 vc = _mm256_set1_ps(c);
    int64_t d = 0;
    for (; d + 8 <= dim; d += 8)
      _mm256_storeu_ps(acc + d, _mm256_div_ps(_mm256_loadu_ps(acc + d), vc));
    for (; d < dim; ++d)
      acc[d] /= c;
  }
  EMBER_POOL_TARGET static void maxZero(float *acc, int64_t dim) {
    __m256 z = _mm256_setzero_ps();
    int64_t d = 0;
    for (; d + 8 <= dim; d += 8)
      _mm256_storeu_ps(acc + d, _mm256_max_ps(_mm256_loadu_ps(acc + d), z));
    for (; d < dim; ++d)
      acc[d] = std::max(acc[d], 0.0f);
  }

  /// acc += w * row, i.e. acc += (w * s) * code + w * b for quantized rows.
  EMBER_POOL_TARGET static void addRow(float *acc, const uint8_t *row, float w,
                                       int64_t dim) {
    float s, b;
    scaleBias(row, dim, s, b);
    const float ws = w * s, wb = w * b;
    const __m256 vws = _mm256_set1_ps(ws);
    int64_t d = 0;
    if constexpr (isQuantized(F)) {
      const __m256 vwb = _mm256_set1_ps(wb);
      for (; d + 8 <= dim; d += 8) {
        __m256 v = _mm256_fmadd_ps(Load8<F>::at(row, d), vws, vwb);
        _mm256_storeu_ps(acc + d, _mm256_add_ps(_mm256_loadu_ps(acc + d), v));
      }
    } else {
      for (; d + 32 <= dim; d += 32) {
        __m256 a0 = _mm256_fmadd_ps(Load8<F>::at(row, d), vws,
                                    _mm256_loadu_ps(acc + d));
        __m256 a1 = _mm256_fmadd_ps(Load8<F>::at(row, d + 8), vws,
                                    _mm256_loadu_ps(acc + d + 8));
        __m256 a2 = _mm256_fmadd_ps(Load8<F>::at(row, d + 16), vws,
                                    _mm256_loadu_ps(acc + d + 16));
        __m256 a3 = _mm256_fmadd_ps(Load8<F>::at(row, d + 24), vws,
                                    _mm256_loadu_ps(acc + d + 24));
        _mm256_storeu_ps(acc + d, a0);
        _mm256_storeu_ps(acc + d + 8, a1);
        _mm256_storeu_ps(acc + d + 16, a2);
        _mm256_storeu_ps(acc + d + 24, a3);
      }
      for (; d + 8 <= dim; d += 8)
        _mm256_storeu_ps(acc + d, _mm256_fmadd_ps(Load8<F>::at(row, d), vws,
                                                  _mm256_loadu_ps(acc + d)));
    }
    for (; d < dim; ++d)
      acc[d] += ws * Decode<F>::at(row, d) + wb;
  }

  EMBER_POOL_TARGET static void maxRow(float *acc, const uint8_t *row,
                                       int64_t dim) {
    float s, b;
    scaleBias(row, dim, s, b);
    const __m256 vs = _mm256_set1_ps(s), vb = _mm256_set1_ps(b);
    int64_t d = 0;
    for (; d + 8 <= dim; d += 8) {
      __m256 v = Load8<F>::at(row, d);
      if constexpr (isQuantized(F))
        v = _mm256_fmadd_ps(v, vs, vb);
      _mm256_storeu_ps(acc + d, _mm256_max_ps(_mm256_loadu_ps(acc + d), v));
    }
    for (; d < dim; ++d)
      acc[d] = std::max(acc[d], isQuantized(F) ? s * Decode<F>::at(row, d) + b
                                               : Decode<F>::at(row, d));
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
      out[d] = isQuantized(F) ? s * Decode<F>::at(row, d) + b
                              : Decode<F>::at(row, d);
  }
};

} // namespace
#endif // x86

namespace ember::embedding::detail {

#ifdef EMBER_HAVE_AVX2_ROUTINES
PoolResult poolBagsAvx2(const PoolJob &job) {
  return dispatchPoolBags<RowOps>(job);
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
