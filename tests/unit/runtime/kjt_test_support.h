//===- kjt_test_support.h - Random KJTs for the KJT kernel tests -*- C++
//-*-===//
#ifndef EMBER_TESTS_KJT_TEST_SUPPORT_H
#define EMBER_TESTS_KJT_TEST_SUPPORT_H

#include "embedding_test_support.h"
#include "support/test_kernel_context.h"

namespace ember::testing {

/// A KJT held as plain vectors (key-major lengths).
struct TestKjt {
  int64_t keys = 0, batch = 0;
  std::vector<int64_t> lengths, values;
  std::vector<float> weights;
  /// Weighted even when it has no values (weights then empty but present).
  bool weighted = false;
  bool isWeighted() const { return weighted || !weights.empty(); }

  std::vector<int64_t> offsets() const { return offsetsOf(lengths); }
  /// Values of key k, sample b.
  std::vector<int64_t> segment(int64_t k, int64_t b) const {
    auto o = offsets();
    return {values.begin() + o[k * batch + b],
            values.begin() + o[k * batch + b + 1]};
  }
  std::vector<float> weightSegment(int64_t k, int64_t b) const {
    auto o = offsets();
    return {weights.begin() + o[k * batch + b],
            weights.begin() + o[k * batch + b + 1]};
  }
};

inline TestKjt randomKjt(int64_t keys, int64_t batch, bool weighted,
                         std::mt19937 &gen, int64_t maxLength = 5,
                         int64_t maxId = 1000) {
  TestKjt k;
  k.keys = keys;
  k.batch = batch;
  k.lengths = randomLengths(keys * batch, maxLength, gen);
  k.values = randomIds(offsetsOf(k.lengths).back(), maxId, gen);
  k.weighted = weighted;
  if (weighted)
    k.weights = randomWeights(k.values.size(), gen);
  return k;
}

inline void addKjtInputs(TestKernelContext &ctx, const TestKjt &k,
                         DType valueType, DType lengthType) {
  ctx.addInput(indexTensor(k.values, valueType))
      .addInput(indexTensor(k.lengths, lengthType));
  if (!k.isWeighted())
    ctx.addAbsentInput();
  else
    ctx.addInput(floatTensor(k.weights));
}

inline std::vector<int64_t> toVector(const Tensor &t) {
  EXPECT_TRUE(t.dtype() == DType::kInt32 || t.dtype() == DType::kInt64)
      << t.describe();
  std::vector<int64_t> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i)
    v[i] = t.dtype() == DType::kInt32 ? t.data<int32_t>()[i]
                                      : t.data<int64_t>()[i];
  return v;
}

inline std::vector<float> toFloats(const Tensor &t) {
  EXPECT_EQ(t.dtype(), DType::kFloat32);
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

/// The KJT in outputs first, first+1, first+2.
inline TestKjt outputKjt(const TestKernelContext &ctx, int first,
                         int64_t keys) {
  TestKjt k;
  k.values = toVector(ctx.output(first));
  k.lengths = toVector(ctx.output(first + 1));
  if (ctx.output(first + 2).defined())
    k.weights = toFloats(ctx.output(first + 2));
  k.keys = keys;
  k.batch = keys > 0 ? static_cast<int64_t>(k.lengths.size()) / keys : 0;
  return k;
}

} // namespace ember::testing

#endif // EMBER_TESTS_KJT_TEST_SUPPORT_H
