//===- jagged_test.cpp - lengths_to_offsets, jagged_to_padded, padded_to_jagged
//===//
#include "embedding_test_support.h"
#include "support/test_kernel_context.h"

#include <gtest/gtest.h>

using namespace ember;
using namespace ember::testing;

namespace {

TEST(LengthsToOffsets, ExclusiveCumsum) {
  std::mt19937 gen(1);
  for (DType dt : {DType::kInt32, DType::kInt64})
    for (int64_t k : {0, 1, 17, 1000}) {
      std::vector<int64_t> lengths = randomLengths(k, 9, gen);
      TestKernelContext ctx;
      ctx.addInput(indexTensor(lengths, dt)).setNumOutputs(1);
      ASSERT_TRUE(runKernel("lengths_to_offsets", ctx).isOk());
      const Tensor &out = ctx.output(0);
      ASSERT_EQ(out.dtype(), DType::kInt64);
      ASSERT_EQ(out.shape(), Shape({k + 1}));
      std::vector<int64_t> want = offsetsOf(lengths);
      EXPECT_EQ(std::vector<int64_t>(out.data<int64_t>(),
                                     out.data<int64_t>() + k + 1),
                want);
    }
}

TEST(LengthsToOffsets, Errors) {
  TestKernelContext ctx;
  ctx.addInput(indexTensor({1, 2, -1, 3}, DType::kInt32)).setNumOutputs(1);
  Status s = runKernel("lengths_to_offsets", ctx);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("lengths[2] is negative (-1)"), std::string::npos)
      << s.message();
  TestKernelContext ctx2;
  ctx2.addInput(floatTensor({1, 2})).setNumOutputs(1);
  s = runKernel("lengths_to_offsets", ctx2);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("must be int32 or int64"), std::string::npos)
      << s.message();
}

/// Random bytes as a tensor of `dtype` and shape `dims` (the kernels copy
/// elements without interpreting them).
Tensor randomValues(DType dtype, std::vector<int64_t> dims, std::mt19937 &gen) {
  Shape shape = *Shape::fromDims(dims.data(), dims.size());
  Tensor t = *Tensor::allocate(dtype, shape);
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t i = 0; i < t.nbytes(); ++i)
    t.data<uint8_t>()[i] = static_cast<uint8_t>(byte(gen));
  return t;
}

TEST(JaggedToPadded, MatchesReferenceAndRoundTrips) {
  std::mt19937 gen(2);
  for (DType dtype :
       {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kInt8})
    for (std::vector<int64_t> trailing :
         {std::vector<int64_t>{}, std::vector<int64_t>{3},
          std::vector<int64_t>{2, 2}})
      for (int64_t maxLength : {0, 2, 4, 9})
        for (double padValue : {3.0, 0.0}) { // 0: the memset path
          std::vector<int64_t> lengths = randomLengths(6, 6, gen);
          lengths[1] = 0;
          std::vector<int64_t> offsets = offsetsOf(lengths);
          std::vector<int64_t> dims = {offsets.back()};
          dims.insert(dims.end(), trailing.begin(), trailing.end());
          Tensor values = randomValues(dtype, dims, gen);
          TestKernelContext ctx;
          ctx.addInput(values)
              .addInput(indexTensor(offsets, DType::kInt32))
              .setNumOutputs(1);
          ctx.attrs()
              .set("max_length", maxLength)
              .set("padding_value", padValue);
          Status s = runKernel("jagged_to_padded", ctx);
          ASSERT_TRUE(s.isOk()) << s.toString();
          const Tensor &padded = ctx.output(0);
          ASSERT_EQ(padded.dtype(), dtype);
          ASSERT_EQ(padded.dim(0), 6);
          ASSERT_EQ(padded.dim(1), maxLength);
          size_t elem = dtypeSize(dtype), inner = 1;
          for (int64_t d : trailing)
            inner *= d;
          const size_t rowBytes = inner * elem;
          // The padding value in this dtype.
          std::vector<uint8_t> three(elem);
          if (dtype == DType::kFloat32) {
            float v = static_cast<float>(padValue);
            std::memcpy(three.data(), &v, 4);
          }
          if (dtype == DType::kFloat16) {
            uint16_t v = floatToHalf(static_cast<float>(padValue));
            std::memcpy(three.data(), &v, 2);
          }
          if (dtype == DType::kInt64) {
            int64_t v = static_cast<int64_t>(padValue);
            std::memcpy(three.data(), &v, 8);
          }
          if (dtype == DType::kInt8)
            three[0] = static_cast<uint8_t>(padValue);
          for (int64_t b = 0; b < 6; ++b)
            for (int64_t j = 0; j < maxLength; ++j) {
              const uint8_t *got =
                  padded.data<uint8_t>() + (b * maxLength + j) * rowBytes;
              if (j < lengths[b]) {
                ASSERT_EQ(std::memcmp(got,
                                      values.data<uint8_t>() +
                                          (offsets[b] + j) * rowBytes,
                                      rowBytes),
                          0)
                    << "row " << b << " item " << j;
              } else {
                for (size_t e = 0; e < inner; ++e)
                  ASSERT_EQ(std::memcmp(got + e * elem, three.data(), elem), 0)
                      << "padding at row " << b << " item " << j;
              }
            }
          // Back to jagged: with truncated lengths the values are the kept
          // ones.
          std::vector<int64_t> kept(6);
          for (int64_t b = 0; b < 6; ++b)
            kept[b] = std::min(lengths[b], maxLength);
          std::vector<int64_t> keptOffsets = offsetsOf(kept);
          TestKernelContext back;
          back.addInput(padded)
              .addInput(indexTensor(keptOffsets, DType::kInt64))
              .setNumOutputs(1);
          ASSERT_TRUE(runKernel("padded_to_jagged", back).isOk());
          const Tensor &jagged = back.output(0);
          ASSERT_EQ(jagged.dim(0), keptOffsets.back());
          for (int64_t b = 0; b < 6; ++b)
            ASSERT_EQ(
                std::memcmp(jagged.data<uint8_t>() + keptOffsets[b] * rowBytes,
                            values.data<uint8_t>() + offsets[b] * rowBytes,
                            kept[b] * rowBytes),
                0);
        }
}

TEST(JaggedToPadded, EmptyBatch) {
  TestKernelContext ctx;
  ctx.addInput(*Tensor::zeros(DType::kFloat32, {0, 4}))
      .addInput(indexTensor({0}, DType::kInt64))
      .setNumOutputs(1);
  ctx.attrs().set("max_length", int64_t{3});
  ASSERT_TRUE(runKernel("jagged_to_padded", ctx).isOk());
  EXPECT_EQ(ctx.output(0).shape(), Shape({0, 3, 4}));
}

TEST(JaggedPadding, Errors) {
  Tensor values = *Tensor::zeros(DType::kFloat32, {5, 2});
  auto toPadded = [&](const Tensor &offsets,
                      const std::function<void(Attributes &)> &attrs) {
    TestKernelContext ctx;
    ctx.addInput(values).addInput(offsets).setNumOutputs(1);
    attrs(ctx.attrs());
    Status s = runKernel("jagged_to_padded", ctx);
    EXPECT_FALSE(s.isOk());
    return s.message();
  };
  auto withMax = [](Attributes &a) { a.set("max_length", int64_t{4}); };
  EXPECT_NE(toPadded(indexTensor({0, 3, 2}, DType::kInt64), withMax)
                .find("offsets decrease"),
            std::string::npos);
  EXPECT_NE(toPadded(indexTensor({0, 3, 6}, DType::kInt64), withMax)
                .find("past the 5 values"),
            std::string::npos);
  EXPECT_NE(toPadded(indexTensor({1, 3}, DType::kInt64), withMax)
                .find("offsets[0] must be 0"),
            std::string::npos);
  EXPECT_NE(toPadded(indexTensor({0, 3}, DType::kInt64), [](Attributes &) {})
                .find("kernel 'jagged_to_padded' needs the attribute "
                      "'max_length' (an int)"),
            std::string::npos);
  EXPECT_NE(toPadded(indexTensor({0, 3}, DType::kInt64),
                     [](Attributes &a) { a.set("max_length", int64_t{-1}); })
                .find("must be >= 0"),
            std::string::npos);
  EXPECT_NE(toPadded(indexTensor({0, 3}, DType::kInt64),
                     [](Attributes &a) {
                       a.set("max_length", int64_t{2})
                           .set("padding_value", std::string("x"));
                     })
                .find("attribute 'padding_value' of kernel 'jagged_to_padded' "
                      "must be a float, the plan gives a string"),
            std::string::npos);
  TestKernelContext ctx;
  ctx.addInput(*Tensor::zeros(DType::kFloat32, {2, 3, 2}))
      .addInput(indexTensor({0, 4, 5}, DType::kInt64))
      .setNumOutputs(1);
  Status s = runKernel("padded_to_jagged", ctx);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(
      s.message().find("row 0 has length 4, longer than the padded length 3"),
      std::string::npos)
      << s.message();
  TestKernelContext ctx2;
  ctx2.addInput(*Tensor::zeros(DType::kFloat32, {2, 3, 2}))
      .addInput(indexTensor({0, 1}, DType::kInt64))
      .setNumOutputs(1);
  s = runKernel("padded_to_jagged", ctx2);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("expected B + 1"), std::string::npos)
      << s.message();
}

} // namespace

TEST(JaggedSum, MatchesReducedPaddedRowsAndRefusesBadInput) {
  auto runSum = [](TestKernelContext &ctx, const Tensor &values,
                   const std::vector<int64_t> &offsets, DType offsetsType,
                   int64_t maxLength) {
    ctx.addInput(values)
        .addInput(indexTensor(offsets, offsetsType))
        .setNumOutputs(1);
    ctx.attrs().set("max_length", maxLength);
    return runKernel("jagged_sum", ctx);
  };
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  for (int64_t maxLength : {0, 1, 3, 100}) {
    std::vector<int64_t> lengths = randomLengths(7, 6, gen);
    lengths[2] = 0;
    std::vector<int64_t> offsets = offsetsOf(lengths);
    Tensor values =
        *Tensor::allocate(DType::kFloat32, Shape{offsets.back(), 2, 3});
    for (int64_t i = 0; i < values.numel(); ++i)
      values.data<float>()[i] = uni(gen);
    TestKernelContext ctx;
    Status s = runSum(ctx, values, offsets, DType::kInt64, maxLength);
    ASSERT_TRUE(s.isOk()) << s.toString();
    const Tensor &out = ctx.output(0);
    ASSERT_EQ(out.shape(), (Shape{7, 2, 3}));
    for (int64_t b = 0; b < 7; ++b)
      for (int64_t c = 0; c < 6; ++c) {
        double want = 0; // naive: the padded rows (zeros) summed in order
        for (int64_t j = 0; j < maxLength; ++j)
          want += j < lengths[b] ? values.data<float>()[(offsets[b] + j) * 6 + c]
                                 : 0.0;
        EXPECT_EQ(out.data<float>()[b * 6 + c], static_cast<float>(want))
            << "row " << b << " column " << c << " max_length " << maxLength;
      }
  }
  auto expectRefused = [&](Tensor values, std::vector<int64_t> offsets,
                           int64_t maxLength, const std::string &what) {
    TestKernelContext ctx;
    Status s = runSum(ctx, values, offsets, DType::kInt32, maxLength);
    ASSERT_FALSE(s.isOk()) << what;
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
  };
  Tensor f32 = *Tensor::allocate(DType::kFloat32, Shape{3, 2});
  expectRefused(*Tensor::allocate(DType::kInt64, Shape{3, 2}), {0, 3}, 2,
                "values must be float32");
  expectRefused(f32, {0, 2, 1}, 2, "offsets decrease");
  expectRefused(f32, {0, 4}, 2, "past the 3 values");
  expectRefused(f32, {0, 3}, -1, "'max_length' must be >= 0");
}
