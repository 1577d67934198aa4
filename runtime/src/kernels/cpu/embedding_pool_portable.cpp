//===- embedding_pool_portable.cpp - Portable row routines ----------------===//
//
// Plain C++ row routines (the compiler vectorizes the float32 loops for the
// baseline ISA). Used on CPUs without AVX2/FMA/F16C and as the reference the
// AVX2 routines are tested against.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/embedding_pool.h"
#include "kernels/cpu/embedding_row_decode.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#define EMBER_POOL_TARGET
#include "kernels/cpu/embedding_pool_loop.h"

namespace {

using namespace ember::embedding::rowdecode;

template <TableFormat F> struct RowOps {
  static constexpr bool kQuantized = isQuantized(F);
  static void fill(float *acc, float v, int64_t dim) {
    std::fill(acc, acc + dim, v);
  }
  static void divide(float *acc, float c, int64_t dim) {
    for (int64_t d = 0; d < dim; ++d)
      acc[d] /= c;
  }
  static void maxZero(float *acc, int64_t dim) {
    for (int64_t d = 0; d < dim; ++d)
      acc[d] = std::max(acc[d], 0.0f);
  }
  /// Adds row * w to acc. Quantized rows: in FBGEMM's order with
  /// `fbgemmOrder` (bias added per row; bit-identical to its kernels and to
  /// the AVX routines), else codes * scale only, the bias added to
  /// `biasSum` (the caller adds it to the bag at the end).
  static void addRow(float *acc, const uint8_t *row, float w, int64_t dim,
                     bool fbgemmOrder, float &biasSum) {
    if constexpr (F == TableFormat::kFloat32) {
      const float *r = reinterpret_cast<const float *>(row);
      for (int64_t d = 0; d < dim; ++d)
        acc[d] += w * r[d];
    } else if constexpr (isQuantized(F)) {
      const uint8_t *sb = row + codeBytes(F, dim);
      float ws = w * loadFloat(sb), wb = w * loadFloat(sb + 4);
      if (fbgemmOrder) {
        for (int64_t d = 0; d < dim; ++d)
          acc[d] = std::fma(Decode<F>::at(row, d), ws, acc[d] + wb);
      } else {
        for (int64_t d = 0; d < dim; ++d)
          acc[d] = std::fma(Decode<F>::at(row, d), ws, acc[d]);
        biasSum += wb;
      }
    } else {
      for (int64_t d = 0; d < dim; ++d)
        acc[d] += w * Decode<F>::at(row, d);
    }
  }
  static void maxRow(float *acc, const uint8_t *row, int64_t dim) {
    if constexpr (isQuantized(F)) {
      const uint8_t *sb = row + codeBytes(F, dim);
      float s = loadFloat(sb), b = loadFloat(sb + 4);
      for (int64_t d = 0; d < dim; ++d)
        acc[d] = std::max(acc[d], std::fma(Decode<F>::at(row, d), s, b));
    } else {
      for (int64_t d = 0; d < dim; ++d)
        acc[d] = std::max(acc[d], Decode<F>::at(row, d));
    }
  }
  static void storeRow(float *out, const uint8_t *row, int64_t dim) {
    if constexpr (isQuantized(F)) {
      const uint8_t *sb = row + codeBytes(F, dim);
      float s = loadFloat(sb), b = loadFloat(sb + 4);
      for (int64_t d = 0; d < dim; ++d)
        out[d] = std::fma(Decode<F>::at(row, d), s, b);
    } else {
      for (int64_t d = 0; d < dim; ++d)
        out[d] = Decode<F>::at(row, d);
    }
  }
};

} // namespace

namespace ember::embedding::detail {

PoolResult poolBagsPortable(const PoolJob &job) {
  return dispatchPoolBags<RowOps>(job);
}

PoolResult gatherRowsPortable(const PoolJob &job) {
  return dispatchGatherRows<RowOps>(job);
}

} // namespace ember::embedding::detail
