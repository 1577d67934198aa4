//===- dtype.h - Element types of runtime tensors --------------*- C++ -*-===//
#ifndef EMBER_DTYPE_H
#define EMBER_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ember {

/// Element type of a runtime tensor. Row-wise quantized embedding tables are
/// kUInt8 tensors of shape [rows, rowBytes] whose layout is described by
/// TableFormat below; they are not a dtype of their own.
enum class DType : uint8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kBFloat16 = 2,
  kInt8 = 3,
  kUInt8 = 4,
  kInt32 = 5,
  kInt64 = 6,
  kBool = 7,
  kFloat64 = 8,
};

/// Size in bytes of one element.
size_t dtypeSize(DType dtype);
/// "float32", "float16", "bfloat16", "int8", "uint8", "int32", "int64",
/// "bool", "float64".
std::string_view dtypeName(DType dtype);
/// Inverse of dtypeName; nullopt for an unknown name.
std::optional<DType> parseDType(std::string_view name);

/// Storage format of the rows of an embedding table.
///   kFloat32/kFloat16/kBFloat16: `dim` elements per row.
///   kInt8RowWise: `dim` uint8 codes q, then float32 scale and
///     float32 bias: value = q * scale + bias. Row bytes = dim + 8.
///   kInt4RowWise: ceil(dim / 2) bytes, element 2k in the low nibble and 2k+1
///     in the high nibble of byte k, then float32 scale and float32 bias.
///     Row bytes = ceil(dim / 2) + 8.
enum class TableFormat : uint8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kBFloat16 = 2,
  kInt8RowWise = 3,
  kInt4RowWise = 4,
};

/// Bytes of one row of a table with `dim` columns in `format`.
int64_t tableRowBytes(TableFormat format, int64_t dim);
/// "float32", "float16", "bfloat16", "int8_rowwise", "int4_rowwise".
std::string_view tableFormatName(TableFormat format);
std::optional<TableFormat> parseTableFormat(std::string_view name);

/// IEEE half and bfloat16 conversions (round to nearest even).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bfloat16ToFloat(uint16_t b);
uint16_t floatToBFloat16(float f);

} // namespace ember

#endif // EMBER_DTYPE_H
