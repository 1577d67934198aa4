//===- embedding_test_support.h - Tables and references for lookup tests -*- C++
//-*-===//
//
// Shared by the embedding/grouped/sequence kernel tests: random tables in
// every TableFormat together with their dequantized float values, random ids
// and bags, and a naive reference of PyTorch's embedding_bag semantics that
// the kernels are compared with.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_EMBEDDING_TEST_SUPPORT_H
#define EMBER_TESTS_EMBEDDING_TEST_SUPPORT_H

#include "ember/dtype.h"
#include "ember/tensor.h"
#include "kernels/cpu/embedding_pool.h"
#include "kernels/shared/embedding_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace ember::testing {

/// A table in some format and the floats its rows decode to.
struct TestTable {
  Tensor tensor;
  std::vector<float> values; // [rows * dim], dequantized
  int64_t rows = 0, dim = 0;
  TableFormat format = TableFormat::kFloat32;
  std::string formatName() const {
    return std::string(tableFormatName(format));
  }
  const float *row(int64_t r) const { return values.data() + r * dim; }
};

inline TestTable makeTable(int64_t rows, int64_t dim, TableFormat format,
                           uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  TestTable t;
  t.rows = rows;
  t.dim = dim;
  t.format = format;
  t.values.resize(rows * dim);
  std::vector<float> raw(rows * dim);
  for (auto &v : raw)
    v = dist(gen);
  switch (format) {
  case TableFormat::kFloat32: {
    t.tensor = *Tensor::allocate(DType::kFloat32, {rows, dim});
    std::memcpy(t.tensor.data(), raw.data(), raw.size() * 4);
    t.values = raw;
    break;
  }
  case TableFormat::kFloat16:
  case TableFormat::kBFloat16: {
    bool half = format == TableFormat::kFloat16;
    t.tensor = *Tensor::allocate(half ? DType::kFloat16 : DType::kBFloat16,
                                 {rows, dim});
    uint16_t *p = t.tensor.data<uint16_t>();
    for (size_t i = 0; i < raw.size(); ++i) {
      p[i] = half ? floatToHalf(raw[i]) : floatToBFloat16(raw[i]);
      t.values[i] = half ? halfToFloat(p[i]) : bfloat16ToFloat(p[i]);
    }
    break;
  }
  case TableFormat::kInt8RowWise:
  case TableFormat::kInt4RowWise: {
    bool int8 = format == TableFormat::kInt8RowWise;
    int64_t rowBytes = tableRowBytes(format, dim);
    int levels = int8 ? 255 : 15;
    t.tensor = *Tensor::zeros(DType::kUInt8, {rows, rowBytes});
    for (int64_t r = 0; r < rows; ++r) {
      const float *src = raw.data() + r * dim;
      float lo = *std::min_element(src, src + dim),
            hi = *std::max_element(src, src + dim);
      float scale = hi > lo ? (hi - lo) / levels : 1.0f, bias = lo;
      uint8_t *row = t.tensor.data<uint8_t>() + r * rowBytes;
      int64_t codeBytes = int8 ? dim : (dim + 1) / 2;
      for (int64_t d = 0; d < dim; ++d) {
        int q = std::clamp(
            static_cast<int>(std::lround((src[d] - bias) / scale)), 0, levels);
        if (int8)
          row[d] = static_cast<uint8_t>(q);
        else
          row[d / 2] |= static_cast<uint8_t>(q << ((d & 1) * 4));
        t.values[r * dim + d] = q * scale + bias;
      }
      std::memcpy(row + codeBytes, &scale, 4);
      std::memcpy(row + codeBytes + 4, &bias, 4);
    }
    break;
  }
  }
  return t;
}

/// An int32 or int64 1-D tensor holding `v`.
inline Tensor indexTensor(const std::vector<int64_t> &v, DType dtype) {
  Tensor t = *Tensor::allocate(dtype, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::kInt32)
      t.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
    else
      t.data<int64_t>()[i] = v[i];
  }
  return t;
}

inline Tensor floatTensor(const std::vector<float> &v) {
  Tensor t =
      *Tensor::allocate(DType::kFloat32, {static_cast<int64_t>(v.size())});
  if (!v.empty())
    std::memcpy(t.data(), v.data(), v.size() * 4);
  return t;
}

inline std::vector<int64_t> randomLengths(int64_t count, int64_t maxLength,
                                          std::mt19937 &gen) {
  std::uniform_int_distribution<int64_t> dist(0, maxLength);
  std::vector<int64_t> lengths(count);
  for (auto &l : lengths)
    l = dist(gen);
  return lengths;
}

inline std::vector<int64_t> randomIds(int64_t n, int64_t rows,
                                      std::mt19937 &gen) {
  std::uniform_int_distribution<int64_t> dist(0, rows - 1);
  std::vector<int64_t> ids(n);
  for (auto &id : ids)
    id = dist(gen);
  return ids;
}

inline std::vector<float> randomWeights(int64_t n, std::mt19937 &gen) {
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> w(n);
  for (auto &x : w)
    x = dist(gen);
  return w;
}

inline std::vector<int64_t> offsetsOf(const std::vector<int64_t> &lengths) {
  std::vector<int64_t> offsets(lengths.size() + 1, 0);
  for (size_t i = 0; i < lengths.size(); ++i)
    offsets[i + 1] = offsets[i] + lengths[i];
  return offsets;
}

/// Naive pooling of one bag, PyTorch embedding_bag semantics; invalid ids
/// (out of range) are zero rows, padding ids are skipped.
inline std::vector<float> referenceBag(const TestTable &t, const int64_t *ids,
                                       const float *weights, int64_t n,
                                       embedding::Pooling pooling,
                                       int64_t paddingIdx = -1) {
  using embedding::Pooling;
  std::vector<double> acc(t.dim, pooling == Pooling::kMax
                                     ? -std::numeric_limits<double>::infinity()
                                     : 0.0);
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] == paddingIdx)
      continue;
    ++count;
    bool valid = ids[i] >= 0 && ids[i] < t.rows;
    for (int64_t d = 0; d < t.dim; ++d) {
      double v = valid ? t.row(ids[i])[d] : 0.0;
      if (pooling == Pooling::kMax)
        acc[d] = std::max(acc[d], v);
      else
        acc[d] += (weights ? weights[i] : 1.0f) * v;
    }
  }
  std::vector<float> out(t.dim, 0.0f);
  if (count == 0)
    return out;
  for (int64_t d = 0; d < t.dim; ++d)
    out[d] =
        static_cast<float>(pooling == Pooling::kMean ? acc[d] / count : acc[d]);
  return out;
}

/// Code d of a quantized row (int8 or int4 row-wise).
inline float quantizedCode(const uint8_t *row, TableFormat format, int64_t d) {
  if (format == TableFormat::kInt8RowWise)
    return row[d];
  const uint8_t byte = row[d / 2];
  return (d & 1) ? (byte >> 4) : (byte & 0x0f);
}

/// Quantized sum/mean pooling of bags (`lengths`; `weights` empty: none)
/// element by element, in either order. Per valid id (padding skipped,
/// out-of-range ids zero rows that count for mean), scale and bias times
/// the weight, then kFbgemm: acc = code * scale +
/// (acc + bias) with the multiply-add fused, as FBGEMM's JIT EmbeddingSpMDM
/// kernel (and torch's embedding_bag_byte_rowwise_offsets) computes it;
/// kFast: acc = code * scale + acc, the bag's biases summed in id order and
/// added at the end. Mean divides by the count.
inline std::vector<float>
quantizedPoolReference(const TestTable &table, const std::vector<int64_t> &ids,
                       const std::vector<int64_t> &lengths,
                       const std::vector<float> &weights,
                       embedding::Pooling pooling, int64_t paddingIdx,
                       embedding::QuantizedSums order) {
  const bool fbgemm = order == embedding::QuantizedSums::kFbgemm;
  const int64_t dim = table.dim;
  const int64_t rowBytes = tableRowBytes(table.format, dim);
  const int64_t scaleAt = rowBytes - 8;
  const uint8_t *data = table.tensor.data<uint8_t>();
  std::vector<int64_t> offsets = offsetsOf(lengths);
  std::vector<float> out(lengths.size() * dim, 0.0f);
  for (size_t b = 0; b + 1 < offsets.size(); ++b) {
    float *acc = out.data() + b * dim;
    float bias = 0.0f;
    int64_t count = 0;
    for (int64_t i = offsets[b]; i < offsets[b + 1]; ++i) {
      const int64_t id = ids[i];
      if (id == paddingIdx)
        continue;
      ++count;
      if (id < 0 || id >= table.rows)
        continue;
      const uint8_t *row = data + id * rowBytes;
      float s, rowBias;
      std::memcpy(&s, row + scaleAt, 4);
      std::memcpy(&rowBias, row + scaleAt + 4, 4);
      const float w = weights.empty() ? 1.0f : weights[i];
      s *= w;
      rowBias *= w;
      for (int64_t d = 0; d < dim; ++d) {
        const float code = quantizedCode(row, table.format, d);
        acc[d] = fbgemm ? std::fma(code, s, acc[d] + rowBias)
                        : std::fma(code, s, acc[d]);
      }
      bias += rowBias;
    }
    for (int64_t d = 0; d < dim; ++d) {
      if (!fbgemm)
        acc[d] += bias;
      if (count == 0)
        acc[d] = 0.0f;
      else if (pooling == embedding::Pooling::kMean && count > 1)
        acc[d] /= static_cast<float>(count);
    }
  }
  return out;
}

/// Compares `count` floats with a tolerance that grows with the bag length
/// (float32 accumulation against the double reference).
inline void expectRowNear(const float *got, const float *want, int64_t count,
                          int64_t bagLength, const std::string &what) {
  float tol =
      1e-5f * static_cast<float>(std::max<int64_t>(bagLength, 1)) + 1e-5f;
  for (int64_t d = 0; d < count; ++d) {
    float t = tol * std::max(1.0f, std::fabs(want[d]));
    ASSERT_NEAR(got[d], want[d], t) << what << " column " << d;
  }
}

inline const std::vector<TableFormat> &allFormats() {
  static const std::vector<TableFormat> formats = {
      TableFormat::kFloat32, TableFormat::kFloat16, TableFormat::kBFloat16,
      TableFormat::kInt8RowWise, TableFormat::kInt4RowWise};
  return formats;
}

/// Every row routine set this CPU can run (portable always).
inline std::vector<embedding::RowIsa> supportedRowIsas() {
  std::vector<embedding::RowIsa> isas;
  for (auto isa : {embedding::RowIsa::kPortable, embedding::RowIsa::kAvx2,
                   embedding::RowIsa::kAvx512})
    if (embedding::rowIsaSupported(isa))
      isas.push_back(isa);
  return isas;
}

/// Forces a row routine set for the lifetime of the guard.
struct RowIsaGuard {
  explicit RowIsaGuard(embedding::RowIsa isa) {
    embedding::setRowIsaOverride(isa);
  }
  ~RowIsaGuard() { embedding::setRowIsaOverride(std::nullopt); }
  RowIsaGuard(const RowIsaGuard &) = delete;
  RowIsaGuard &operator=(const RowIsaGuard &) = delete;
};

/// Forces the order of quantized sums; restores the default on scope exit.
struct QuantizedSumsGuard {
  explicit QuantizedSumsGuard(embedding::QuantizedSums sums) {
    embedding::setQuantizedSumsOverride(sums);
  }
  ~QuantizedSumsGuard() { embedding::setQuantizedSumsOverride(std::nullopt); }
  QuantizedSumsGuard(const QuantizedSumsGuard &) = delete;
  QuantizedSumsGuard &operator=(const QuantizedSumsGuard &) = delete;
};

} // namespace ember::testing

#endif // EMBER_TESTS_EMBEDDING_TEST_SUPPORT_H
