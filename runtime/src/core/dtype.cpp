//===- dtype.cpp - Element types ------------------------------------------===//
#include "ember/dtype.h"

#include <cstring>

namespace ember {

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::kFloat32: return 4;
  case DType::kFloat16: return 2;
  case DType::kBFloat16: return 2;
  case DType::kInt8: return 1;
  case DType::kUInt8: return 1;
  case DType::kInt32: return 4;
  case DType::kInt64: return 8;
  case DType::kBool: return 1;
  case DType::kFloat64: return 8;
  }
  return 0;
}

static constexpr std::pair<DType, std::string_view> kDTypeNames[] = {
    {DType::kFloat32, "float32"}, {DType::kFloat16, "float16"},
    {DType::kBFloat16, "bfloat16"}, {DType::kInt8, "int8"},
    {DType::kUInt8, "uint8"},     {DType::kInt32, "int32"},
    {DType::kInt64, "int64"},     {DType::kBool, "bool"},
    {DType::kFloat64, "float64"},
};

std::string_view dtypeName(DType dtype) {
  for (auto &[d, name] : kDTypeNames)
    if (d == dtype)
      return name;
  return "unknown";
}

std::optional<DType> parseDType(std::string_view name) {
  for (auto &[d, n] : kDTypeNames)
    if (n == name)
      return d;
  return std::nullopt;
}

int64_t tableRowBytes(TableFormat format, int64_t dim) {
  switch (format) {
  case TableFormat::kFloat32: return dim * 4;
  case TableFormat::kFloat16: return dim * 2;
  case TableFormat::kBFloat16: return dim * 2;
  case TableFormat::kInt8RowWise: return dim + 8;
  case TableFormat::kInt4RowWise: return (dim + 1) / 2 + 8;
  }
  return 0;
}

static constexpr std::pair<TableFormat, std::string_view> kFormatNames[] = {
    {TableFormat::kFloat32, "float32"},
    {TableFormat::kFloat16, "float16"},
    {TableFormat::kBFloat16, "bfloat16"},
    {TableFormat::kInt8RowWise, "int8_rowwise"},
    {TableFormat::kInt4RowWise, "int4_rowwise"},
};

std::string_view tableFormatName(TableFormat format) {
  for (auto &[f, name] : kFormatNames)
    if (f == format)
      return name;
  return "unknown";
}

std::optional<TableFormat> parseTableFormat(std::string_view name) {
  for (auto &[f, n] : kFormatNames)
    if (n == name)
      return f;
  return std::nullopt;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13); // inf / nan
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) // rounds to >= 65520: overflow to inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (absx < 0x38800000u) { // below the smallest normal half: subnormal or 0
    if (absx < 0x33000000u)
      return static_cast<uint16_t>(sign);
    uint32_t exp = absx >> 23;
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    // value = mant * 2^(exp - 150) and the half subnormal unit is 2^-24.
    uint32_t shift = 126 - exp;
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1)))
      ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t mant = absx & 0x7fffffu;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
    ++h; // may carry into the exponent, which is correct rounding
  return static_cast<uint16_t>(sign | h);
}

float bfloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) // nan: keep it a quiet nan
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

} // namespace ember
