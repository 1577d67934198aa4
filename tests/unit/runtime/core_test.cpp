//===- core_test.cpp - Status, dtypes, tensors, attributes ----------------===//
#include "ember/dtype.h"
#include "ember/status.h"
#include "ember/tensor.h"
#include "kernels/attributes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace ember;

TEST(Status, OkAndErrorsWithContext) {
  EXPECT_TRUE(Status::ok().isOk());
  Status s = dataLoss("checksum mismatch").withContext("rank0.weights");
  EXPECT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.toString(), "DataLoss: rank0.weights: checksum mismatch");
}

static Result<int> half(int x) {
  if (x % 2)
    return invalidArgument("odd");
  return x / 2;
}
static Result<int> quarter(int x) {
  EMBER_ASSIGN_OR_RETURN(int h, half(x));
  return half(h);
}

TEST(Status, AssignOrReturnPropagates) {
  EXPECT_EQ(*quarter(8), 2);
  EXPECT_EQ(quarter(6).status().message(), "odd");
}

TEST(DType, NamesRoundTrip) {
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt8,
                  DType::kUInt8, DType::kInt32, DType::kInt64, DType::kBool,
                  DType::kFloat64})
    EXPECT_EQ(parseDType(dtypeName(d)), d);
  EXPECT_FALSE(parseDType("complex64").has_value());
  EXPECT_EQ(tableRowBytes(TableFormat::kInt4RowWise, 5), 3 + 8);
  EXPECT_EQ(tableRowBytes(TableFormat::kInt8RowWise, 64), 72);
  EXPECT_EQ(parseTableFormat("int8_rowwise"), TableFormat::kInt8RowWise);
}

// Reference: round-to-nearest-even through double arithmetic.
static double halfValue(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double sign = (h & 0x8000) ? -1 : 1;
  if (exp == 0)
    return sign * std::ldexp(mant, -24);
  if (exp == 31)
    return mant ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + mant, exp - 25);
}

TEST(DType, HalfConversionIsExactAndRoundsToNearestEven) {
  // Every finite half converts to float exactly and back to itself.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (((h >> 10) & 0x1f) == 31)
      continue;
    float f = halfToFloat(static_cast<uint16_t>(h));
    ASSERT_EQ(static_cast<double>(f), halfValue(static_cast<uint16_t>(h))) << h;
    ASSERT_EQ(floatToHalf(f), h) << h;
  }
  // Random floats round to the nearest half (ties to even).
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-70000.f, 70000.f);
  for (int i = 0; i < 20000; ++i) {
    float f = dist(rng) * std::ldexp(1.0f, -(i % 30));
    uint16_t h = floatToHalf(f);
    double got = halfValue(h);
    if (std::isinf(got)) {
      EXPECT_GE(std::fabs(f), 65520.f);
      continue;
    }
    // Neighbours are no closer.
    double up = halfValue(static_cast<uint16_t>(h + 1));
    double down = (h & 0x7fff) ? halfValue(static_cast<uint16_t>(h - 1)) : -got;
    EXPECT_LE(std::fabs(got - f), std::fabs(up - f)) << f;
    EXPECT_LE(std::fabs(got - f), std::fabs(down - f)) << f;
  }
  EXPECT_EQ(floatToHalf(1e9f), 0x7c00);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
}

TEST(DType, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
  float f;
  uint32_t bits = 0x3f808000; // exactly halfway between 0x3f80 and 0x3f81
  std::memcpy(&f, &bits, 4);
  EXPECT_EQ(floatToBFloat16(f), 0x3f80);
  bits = 0x3f818000;
  std::memcpy(&f, &bits, 4);
  EXPECT_EQ(floatToBFloat16(f), 0x3f82);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBFloat16(NAN))));
}

TEST(Tensor, AllocateViewReshapeClone) {
  auto t = Tensor::zeros(DType::kFloat32, {2, 3});
  ASSERT_TRUE(t.isOk());
  EXPECT_EQ(t->numel(), 6);
  EXPECT_EQ(t->nbytes(), 24u);
  EXPECT_EQ(t->describe(), "float32[2, 3]");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
  t->data<float>()[5] = 4.f;
  auto r = t->reshaped({3, 2});
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->data<float>()[5], 4.f);
  EXPECT_FALSE(t->reshaped({4, 2}).isOk());
  auto c = t->clone();
  ASSERT_TRUE(c.isOk());
  c->data<float>()[5] = 1.f;
  EXPECT_EQ(t->data<float>()[5], 4.f);

  int64_t buf[4] = {1, 2, 3, 4};
  Tensor v = Tensor::view(buf, DType::kInt64, {4});
  EXPECT_EQ(v.data<int64_t>()[3], 4);
  EXPECT_FALSE(Tensor().defined());
  EXPECT_TRUE(Tensor::view(static_cast<void *>(nullptr), DType::kInt64, {0}).defined());
}

TEST(Tensor, RejectsHugeAndNegativeShapes) {
  // 2^90 elements: no shape (its element count would overflow int64).
  int64_t dims[] = {1 << 30, 1 << 30, 1 << 30};
  EXPECT_FALSE(Shape::fromDims(dims, 3).isOk());
  EXPECT_FALSE(Shape({1 << 30, 1 << 30, 1 << 30}).valid());
  // 2^60 elements is a shape, but 2^63 bytes of float64 are never allocated.
  int64_t most[] = {int64_t{1} << 30, int64_t{1} << 30};
  auto shape = Shape::fromDims(most, 2);
  ASSERT_TRUE(shape.isOk());
  EXPECT_TRUE(shape->valid());
  auto t = Tensor::allocate(DType::kFloat64, *shape);
  EXPECT_EQ(t.status().code(), StatusCode::kResourceExhausted);
  // An empty shape still may not have dims that multiply past 2^60.
  int64_t withZero[] = {0, int64_t{1} << 30, int64_t{1} << 30};
  EXPECT_TRUE(Shape::fromDims(withZero, 3).isOk());
  int64_t hugeEmpty[] = {0, int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_FALSE(Shape::fromDims(hugeEmpty, 3).isOk());
  int64_t neg[] = {2, -1};
  EXPECT_FALSE(Shape::fromDims(neg, 2).isOk());
  int64_t many[9] = {};
  EXPECT_FALSE(Shape::fromDims(many, 9).isOk());
}

TEST(Attributes, TypedGettersNameTheProblem) {
  Attributes a;
  a.set("axis", int64_t{1}).set("mode", std::string("sum"))
      .set("dims", std::vector<int64_t>{4, 8});
  EXPECT_EQ(*a.getInt("axis"), 1);
  EXPECT_EQ(*a.getFloat("axis"), 1.0);
  EXPECT_EQ(*a.getString("mode"), "sum");
  EXPECT_EQ(a.getInts("dims")->size(), 2u);
  EXPECT_EQ(a.getInt("missing").status().message(), "missing attribute 'missing'");
  EXPECT_EQ(a.getInt("mode").status().message(), "attribute 'mode' must be an integer");
}
