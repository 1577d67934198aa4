//===- shape_view_test.cpp - reshape flatten squeeze unsqueeze shape ------===//
#include "dense_test_support.h"

using namespace ember;
using namespace ember::testing;

namespace {

Tensor runView(const char *name, const Tensor &x, const char *attr,
               const std::vector<int64_t> &value) {
  return runOk(name, [&](TestKernelContext &c) {
    c.addInput(x);
    if (attr)
      c.attrs().set(attr, value);
  });
}

TEST(Reshape, AliasesWithInferredAndCopiedDims) {
  Tensor x = randomInts({2, 3, 4}, 1, 0, 100);
  struct Case {
    std::vector<int64_t> target;
    Shape out;
  };
  for (const Case &c :
       {Case{{6, 4}, {6, 4}}, Case{{-1}, {24}}, Case{{0, -1}, {2, 12}},
        Case{{0, 0, 4}, {2, 3, 4}}, Case{{4, -1, 3}, {4, 2, 3}},
        Case{{1, 24, 1}, {1, 24, 1}}}) {
    Tensor y = runView("reshape", x, "shape", c.target);
    EXPECT_EQ(y.shape(), c.out);
    EXPECT_EQ(y.data(), x.data()) << "reshape must not copy";
    EXPECT_EQ(y.dtype(), DType::kInt64);
  }
  // A shape input instead of the attribute (ONNX style).
  Tensor y = runOk("reshape", [&](TestKernelContext &c) {
    c.addInput(x).addInput(int64s({2}, {-1, 2}));
  });
  EXPECT_EQ(y.shape(), Shape({12, 2}));
  // Empty tensors reshape too (-1 infers 0); 0 still copies the input dim.
  Tensor e = *Tensor::allocate(DType::kFloat32, {0, 4});
  EXPECT_EQ(runView("reshape", e, "shape", {2, -1}).shape(), Shape({2, 0}));
  EXPECT_EQ(runView("reshape", e, "shape", {0, 2, 2}).shape(),
            Shape({0, 2, 2}));
}

TEST(Reshape, MalformedTargetsAreClearErrors) {
  Tensor x = randomFloats({2, 3}, 1);
  auto err = [&](const std::vector<int64_t> &t) {
    return runStatus("reshape", [&](TestKernelContext &c) {
      c.addInput(x);
      c.attrs().set("shape", t);
    });
  };
  expectError(err({4, 2}), {"test kernel", "6 elements", "[4, 2]", "8"});
  expectError(err({-1, -1}), {"more than one -1"});
  expectError(err({4, -1}), {"cannot infer"});
  expectError(err({0, 0, 0}), {"no dim 2"});
  expectError(err({-2, 3}), {"invalid dim -2"});
  expectError(
      runStatus("reshape", [&](TestKernelContext &c) { c.addInput(x); }),
      {"needs attribute 'shape'"});
  expectError(err({1, 1, 1, 1, 1, 1, 1, 1, 6}), {"more than 8 dims"});
}

TEST(Flatten, AxisSplitsDims) {
  Tensor x = randomFloats({2, 3, 4}, 2);
  auto run = [&](int64_t axis) {
    return runOk("flatten", [&](TestKernelContext &c) {
      c.addInput(x);
      c.attrs().set("axis", axis);
    });
  };
  EXPECT_EQ(run(0).shape(), Shape({1, 24}));
  EXPECT_EQ(run(1).shape(), Shape({2, 12}));
  EXPECT_EQ(run(3).shape(), Shape({24, 1}));
  EXPECT_EQ(run(-1).shape(), Shape({6, 4}));
  EXPECT_EQ(run(1).data(), x.data());
  EXPECT_EQ(
      runOk("flatten", [&](TestKernelContext &c) { c.addInput(x); }).shape(),
      Shape({2, 12}));
  expectError(runStatus("flatten",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("axis", int64_t{4});
                        }),
              {"test kernel", "axis", "out of range"});
}

TEST(SqueezeUnsqueeze, InsertAndDropUnitDims) {
  Tensor x = randomFloats({3, 1, 4, 1}, 3);
  EXPECT_EQ(runView("squeeze", x, nullptr, {}).shape(), Shape({3, 4}));
  EXPECT_EQ(runView("squeeze", x, "axes", {-1}).shape(), Shape({3, 1, 4}));
  EXPECT_EQ(runView("squeeze", x, "axes", {1, 3}).shape(), Shape({3, 4}));
  Tensor y = randomFloats({3, 4}, 4);
  EXPECT_EQ(runView("unsqueeze", y, "axes", {0}).shape(), Shape({1, 3, 4}));
  EXPECT_EQ(runView("unsqueeze", y, "axes", {-1}).shape(), Shape({3, 4, 1}));
  EXPECT_EQ(runView("unsqueeze", y, "axes", {1, 3}).shape(),
            Shape({3, 1, 4, 1}));
  EXPECT_EQ(runView("unsqueeze", y, "axes", {0, 1}).data(), y.data());
  Tensor s = floats({}, {5.f});
  EXPECT_EQ(runView("unsqueeze", s, "axes", {0}).shape(), Shape({1}));
  expectError(runStatus("squeeze",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("axes", std::vector<int64_t>{0});
                        }),
              {"test kernel", "axis 0", "size 3, not 1"});
  expectError(runStatus("unsqueeze",
                        [&](TestKernelContext &c) {
                          c.addInput(y);
                          c.attrs().set("axes", std::vector<int64_t>{1, 1});
                        }),
              {"repeats"});
  expectError(runStatus("unsqueeze",
                        [&](TestKernelContext &c) {
                          c.addInput(y);
                          c.attrs().set("axes", std::vector<int64_t>{3});
                        }),
              {"out of range"});
  expectError(
      runStatus("unsqueeze", [&](TestKernelContext &c) { c.addInput(y); }),
      {"kernel 'unsqueeze' needs the attribute 'axes'"});
}

TEST(ShapeOp, ReturnsDimsAsInt64) {
  Tensor x = *Tensor::allocate(DType::kBFloat16, {2, 0, 7});
  Tensor y = runOk("shape", [&](TestKernelContext &c) { c.addInput(x); });
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(valuesOf<int64_t>(y), (std::vector<int64_t>{2, 0, 7}));
  Tensor z = runOk("shape", [&](TestKernelContext &c) {
    c.addInput(x);
    c.attrs().set("start", int64_t{-2});
  });
  EXPECT_EQ(valuesOf<int64_t>(z), (std::vector<int64_t>{0, 7}));
  Tensor s = runOk(
      "shape", [&](TestKernelContext &c) { c.addInput(floats({}, {1.f})); });
  EXPECT_EQ(s.shape(), Shape({0}));
}

} // namespace
