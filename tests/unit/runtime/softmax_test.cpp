//===- softmax_test.cpp - softmax vs a naive reference --------------------===//
#include "dense_test_support.h"

#include <cmath>
#include <limits>

using namespace ember;
using namespace ember::testing;

namespace {

/// Naive softmax along `axis` in double.
std::vector<double> naiveSoftmax(const Tensor &x, int axis) {
  const Shape &s = x.shape();
  int64_t outer = 1, len = s[axis], inner = 1;
  for (int i = 0; i < axis; ++i)
    outer *= s[i];
  for (int i = axis + 1; i < s.rank(); ++i)
    inner *= s[i];
  std::vector<double> y(static_cast<size_t>(x.numel()));
  const float *p = x.data<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      double mx = -INFINITY, sum = 0;
      for (int64_t l = 0; l < len; ++l)
        mx = std::max(mx, double(p[(o * len + l) * inner + in]));
      for (int64_t l = 0; l < len; ++l)
        sum += std::exp(p[(o * len + l) * inner + in] - mx);
      for (int64_t l = 0; l < len; ++l)
        y[(o * len + l) * inner + in] =
            std::exp(p[(o * len + l) * inner + in] - mx) / sum;
    }
  return y;
}

TEST(Softmax, MatchesNaiveOnEveryAxis) {
  uint32_t seed = 1;
  for (Shape s : {Shape{1, 1}, Shape{1, 10}, Shape{4, 7}, Shape{3, 5, 130},
                  Shape{2, 3, 4, 5}, Shape{0, 4}, Shape{300, 80}, Shape{6}}) {
    for (int axis = -s.rank(); axis < s.rank(); ++axis) {
      Tensor x = randomFloats(s, seed++, -4.f, 4.f);
      int norm = axis < 0 ? axis + s.rank() : axis;
      std::vector<double> ref = naiveSoftmax(x, norm);
      auto setup = [&](TestKernelContext &c) {
        c.addInput(x);
        c.attrs().set("axis", int64_t{axis});
      };
      Tensor one = runOk("softmax", setup, 1),
             four = runOk("softmax", setup, 4);
      std::string what = s.toString() + " axis " + std::to_string(axis);
      expectClose(one, ref, 1e-6, what);
      expectIdentical(one, four, what);
    }
  }
}

TEST(Softmax, DefaultAxisIsLastAndLargeValuesStayFinite) {
  Tensor x = floats({2, 3}, {1000.f, 1001.f, 1002.f, -1e30f, 0.f, 1e30f});
  Tensor y = runOk("softmax", [&](TestKernelContext &c) { c.addInput(x); });
  std::vector<double> ref = naiveSoftmax(x, 1);
  expectClose(y, ref, 1e-6);
  EXPECT_NEAR(y.data<float>()[5], 1.0, 1e-7);
}

TEST(Softmax, MalformedInputsAreClearErrors) {
  expectError(runStatus("softmax",
                        [](TestKernelContext &c) {
                          c.addInput(randomFloats({2, 3}, 1));
                          c.attrs().set("axis", int64_t{2});
                        }),
              {"test kernel", "axis", "out of range for rank 2"});
  expectError(runStatus("softmax",
                        [](TestKernelContext &c) {
                          c.addInput(randomFloats({2, 3}, 1));
                          c.attrs().set("axis", std::string("last"));
                        }),
              {"attribute 'axis' of kernel 'softmax' must be an int"});
  expectError(runStatus("softmax",
                        [](TestKernelContext &c) {
                          c.addInput(int64s({2}, {1, 2}));
                        }),
              {"float32", "int64[2]"});
  expectError(
      runStatus("softmax",
                [](TestKernelContext &c) { c.addInput(floats({}, {1.f})); }),
      {"rank >= 1"});
}

} // namespace
