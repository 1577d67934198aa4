//===- cast_test.cpp - cast between every pair of dtypes ------------------===//
#include "dense_test_support.h"

#include <cmath>
#include <limits>

using namespace ember;
using namespace ember::testing;

namespace {

const DType kAll[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                      DType::kInt8,    DType::kUInt8,   DType::kInt32,
                      DType::kInt64,   DType::kBool,    DType::kFloat64};

bool isFloat(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat16 ||
         d == DType::kBFloat16 || d == DType::kFloat64;
}

/// Writes small integer-valued numbers (exact in every dtype) into dtype d.
Tensor smallValues(DType d, const std::vector<int> &values) {
  Tensor t = *Tensor::allocate(d, {int64_t(values.size())});
  for (size_t i = 0; i < values.size(); ++i) {
    int v = values[i];
    switch (d) {
    case DType::kFloat32:
      t.data<float>()[i] = float(v);
      break;
    case DType::kFloat16:
      t.data<uint16_t>()[i] = floatToHalf(float(v));
      break;
    case DType::kBFloat16:
      t.data<uint16_t>()[i] = floatToBFloat16(float(v));
      break;
    case DType::kInt8:
      t.data<int8_t>()[i] = int8_t(v);
      break;
    case DType::kUInt8:
      t.data<uint8_t>()[i] = uint8_t(v);
      break;
    case DType::kInt32:
      t.data<int32_t>()[i] = v;
      break;
    case DType::kInt64:
      t.data<int64_t>()[i] = v;
      break;
    case DType::kBool:
      t.data<uint8_t>()[i] = v != 0;
      break;
    case DType::kFloat64:
      t.data<double>()[i] = v;
      break;
    }
  }
  return t;
}

Tensor runCast(const Tensor &x, DType to, int threads = 1) {
  return runOk(
      "cast",
      [&](TestKernelContext &c) {
        c.addInput(x);
        c.attrs().set("to", std::string(dtypeName(to)));
      },
      threads);
}

TEST(Cast, EveryPairOnExactValues) {
  // 0..100 fit every dtype (bool: nonzero -> 1).
  std::vector<int> values = {0, 1, 2, 7, 100, 0, 3};
  for (DType from : kAll) {
    for (DType to : kAll) {
      std::vector<int> src = values;
      if (from == DType::kBool)
        for (int &v : src)
          v = v != 0;
      Tensor y = runCast(smallValues(from, src), to);
      std::vector<int> expect = src;
      if (to == DType::kBool)
        for (int &v : expect)
          v = v != 0;
      Tensor ref = smallValues(to, expect);
      expectIdentical(y, ref,
                      std::string(dtypeName(from)) + " -> " +
                          std::string(dtypeName(to)));
    }
  }
}

TEST(Cast, FloatToIntegerTruncatesSaturatesAndZeroesNaN) {
  Tensor x =
      floats({7}, {2.9f, -2.9f, 1e20f, -1e20f,
                   std::numeric_limits<float>::quiet_NaN(), 300.f, -0.5f});
  EXPECT_EQ(
      valuesOf<int32_t>(runCast(x, DType::kInt32)),
      (std::vector<int32_t>{2, -2, std::numeric_limits<int32_t>::max(),
                            std::numeric_limits<int32_t>::min(), 0, 300, 0}));
  EXPECT_EQ(valuesOf<uint8_t>(runCast(x, DType::kUInt8)),
            (std::vector<uint8_t>{2, 0, 255, 0, 0, 255, 0}));
  EXPECT_EQ(valuesOf<int64_t>(runCast(x, DType::kInt64))[2],
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(valuesOf<uint8_t>(runCast(x, DType::kBool)),
            (std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1}));
}

TEST(Cast, IntegersWrapAndHalfRoundsToNearestEven) {
  Tensor x = int64s({3}, {257, -1, (int64_t{1} << 40) + 5});
  EXPECT_EQ(valuesOf<uint8_t>(runCast(x, DType::kUInt8)),
            (std::vector<uint8_t>{1, 255, 5}));
  EXPECT_EQ(valuesOf<int32_t>(runCast(x, DType::kInt32)),
            (std::vector<int32_t>{257, -1, 5}));
  Tensor f = randomFloats({50000}, 3, -70000.f, 70000.f);
  Tensor one = runCast(f, DType::kFloat16, 1),
         four = runCast(f, DType::kFloat16, 4);
  expectIdentical(one, four);
  for (int64_t i = 0; i < f.numel(); ++i)
    ASSERT_EQ(one.data<uint16_t>()[i], floatToHalf(f.data<float>()[i])) << i;
  Tensor b = runCast(f, DType::kBFloat16);
  for (int64_t i = 0; i < f.numel(); ++i)
    ASSERT_EQ(b.data<uint16_t>()[i], floatToBFloat16(f.data<float>()[i])) << i;
}

TEST(Cast, SameDtypeAliasesAndBadTargetIsAnError) {
  Tensor x = randomFloats({3}, 1);
  EXPECT_EQ(runCast(x, DType::kFloat32).data(), x.data());
  expectError(runStatus("cast",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("to", std::string("float8"));
                        }),
              {"attribute 'to'", "float8"});
  expectError(runStatus("cast", [&](TestKernelContext &c) { c.addInput(x); }),
              {"kernel 'cast' needs the attribute 'to' (a string)"});
  (void)isFloat;
}

} // namespace
