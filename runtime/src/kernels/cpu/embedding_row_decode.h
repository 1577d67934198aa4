//===- embedding_row_decode.h - Scalar decoding of table rows --*- C++ -*-===//
//
// Element-wise decoding of a table row in each TableFormat: the portable row
// routines use it for everything, the AVX2 ones for the tail of a row.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_CPU_EMBEDDING_ROW_DECODE_H
#define EMBER_KERNELS_CPU_EMBEDDING_ROW_DECODE_H

#include "ember/dtype.h"

#include <cstdint>
#include <cstring>

namespace ember::embedding::rowdecode {

inline float loadFloat(const uint8_t *p) {
  float f;
  std::memcpy(&f, p, sizeof f);
  return f;
}

inline uint16_t loadU16(const uint8_t *p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// Element d of a row in format F (scale/bias already read for quantized).
template <TableFormat F> struct Decode;
template <> struct Decode<TableFormat::kFloat32> {
  static float at(const uint8_t *row, int64_t d) {
    return loadFloat(row + 4 * d);
  }
};
template <> struct Decode<TableFormat::kFloat16> {
  static float at(const uint8_t *row, int64_t d) {
    return ember::halfToFloat(loadU16(row + 2 * d));
  }
};
template <> struct Decode<TableFormat::kBFloat16> {
  static float at(const uint8_t *row, int64_t d) {
    return ember::bfloat16ToFloat(loadU16(row + 2 * d));
  }
};
template <> struct Decode<TableFormat::kInt8RowWise> {
  static float at(const uint8_t *row, int64_t d) { return row[d]; }
};
template <> struct Decode<TableFormat::kInt4RowWise> {
  static float at(const uint8_t *row, int64_t d) {
    uint8_t byte = row[d >> 1];
    return (d & 1) ? (byte >> 4) : (byte & 0x0f);
  }
};

constexpr bool isQuantized(TableFormat f) {
  return f == TableFormat::kInt8RowWise || f == TableFormat::kInt4RowWise;
}

/// Where the scale and bias of a quantized row start.
inline int64_t codeBytes(TableFormat f, int64_t dim) {
  return f == TableFormat::kInt8RowWise ? dim : (dim + 1) / 2;
}

} // namespace ember::embedding::rowdecode

#endif // EMBER_KERNELS_CPU_EMBEDDING_ROW_DECODE_H
