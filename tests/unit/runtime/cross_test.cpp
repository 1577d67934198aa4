//===- cross_test.cpp - dcn_cross full and low rank vs naive loops --------===//
#include "dense_test_support.h"

using namespace ember;
using namespace ember::testing;

namespace {

/// TorchRec CrossNet layer in double: x0 * (W · xl + b) + xl, with W given as
/// a function (i, j) -> W[i][j].
template <typename WFn>
std::vector<double> naiveCross(const Tensor &x0, const Tensor &xl, WFn w,
                               const Tensor *bias) {
  int64_t b = x0.dim(0), d = x0.dim(1);
  std::vector<double> out;
  for (int64_t s = 0; s < b; ++s)
    for (int64_t i = 0; i < d; ++i) {
      double acc = bias ? bias->data<float>()[i] : 0.0;
      for (int64_t j = 0; j < d; ++j)
        acc += w(i, j) * xl.data<float>()[s * d + j];
      out.push_back(x0.data<float>()[s * d + i] * acc +
                    xl.data<float>()[s * d + i]);
    }
  return out;
}

TEST(DcnCross, FullRankMatchesNaive) {
  uint32_t seed = 1;
  for (auto [b, d] : {std::pair<int64_t, int64_t>{1, 1},
                      {1, 13},
                      {9, 16},
                      {70, 129},
                      {0, 4}}) {
    Tensor x0 = randomFloats({b, d}, seed++), xl = randomFloats({b, d}, seed++);
    Tensor w = randomFloats({d, d}, seed++), bias = randomFloats({d}, seed++);
    auto wFn = [&](int64_t i, int64_t j) {
      return double(w.data<float>()[i * d + j]);
    };
    for (bool withBias : {false, true}) {
      std::vector<double> ref =
          naiveCross(x0, xl, wFn, withBias ? &bias : nullptr);
      auto setup = [&](TestKernelContext &c) {
        c.addInput(x0).addInput(xl).addInput(w);
        if (withBias)
          c.addInput(bias);
      };
      Tensor one = runOk("dcn_cross", setup, 1),
             four = runOk("dcn_cross", setup, 4);
      std::string what = "B" + std::to_string(b) + " D" + std::to_string(d);
      ASSERT_EQ(one.shape(), Shape({b, d}));
      expectClose(one, ref, 1e-5 * std::max<int64_t>(1, d), what);
      expectIdentical(one, four, what);
    }
  }
}

TEST(DcnCross, LowRankMatchesNaiveAndTorchRecBiasShape) {
  uint32_t seed = 100;
  for (auto [b, d, r] : {std::tuple<int64_t, int64_t, int64_t>{1, 8, 1},
                         {5, 12, 3},
                         {66, 64, 16},
                         {4, 6, 0}}) {
    Tensor x0 = randomFloats({b, d}, seed++), xl = randomFloats({b, d}, seed++);
    Tensor v = randomFloats({r, d}, seed++), w = randomFloats({d, r}, seed++);
    Tensor bias = randomFloats({d, 1}, seed++); // TorchRec keeps bias as [D, 1]
    // Effective full matrix: W · V  ([D, r] · [r, D]).
    auto wFn = [&](int64_t i, int64_t j) {
      double acc = 0;
      for (int64_t q = 0; q < r; ++q)
        acc += double(w.data<float>()[i * r + q]) * v.data<float>()[q * d + j];
      return acc;
    };
    std::vector<double> ref = naiveCross(x0, xl, wFn, &bias);
    auto setup = [&](TestKernelContext &c) {
      c.addInput(x0).addInput(xl).addInput(v).addInput(w).addInput(bias);
      c.attrs().set("low_rank", int64_t{1});
    };
    Tensor one = runOk("dcn_cross", setup, 1),
           four = runOk("dcn_cross", setup, 4);
    std::string what = "B" + std::to_string(b) + " D" + std::to_string(d) +
                       " r" + std::to_string(r);
    expectClose(one, ref, 1e-5 * std::max<int64_t>(1, d), what);
    expectIdentical(one, four, what);
  }
}

TEST(DcnCross, MalformedInputsAreClearErrors) {
  Tensor x0 = randomFloats({4, 6}, 1), xl = randomFloats({4, 6}, 2);
  Tensor w = randomFloats({6, 6}, 3);
  expectError(
      runStatus("dcn_cross",
                [&](TestKernelContext &c) {
                  c.addInput(x0).addInput(randomFloats({4, 5}, 4)).addInput(w);
                }),
      {"test kernel", "xl", "shape of x0"});
  expectError(
      runStatus("dcn_cross",
                [&](TestKernelContext &c) {
                  c.addInput(x0).addInput(xl).addInput(randomFloats({6, 5}, 4));
                }),
      {"weight must be [6, 6]", "[6, 5]"});
  expectError(runStatus("dcn_cross",
                        [&](TestKernelContext &c) {
                          c.addInput(x0).addInput(xl).addInput(w).addInput(
                              randomFloats({5}, 4));
                        }),
              {"bias must be [6] or [6, 1]"});
  expectError(runStatus("dcn_cross",
                        [&](TestKernelContext &c) {
                          c.addInput(x0)
                              .addInput(xl)
                              .addInput(randomFloats({2, 6}, 4))
                              .addInput(randomFloats({6, 3}, 5));
                          c.attrs().set("low_rank", int64_t{1});
                        }),
              {"W must be [6, 2]", "[6, 3]"});
  expectError(runStatus("dcn_cross",
                        [&](TestKernelContext &c) {
                          c.addInput(x0).addInput(xl).addInput(w);
                          c.attrs().set("low_rank", int64_t{1});
                        }),
              {"low_rank", "x0, xl, V, W"});
  expectError(runStatus("dcn_cross",
                        [&](TestKernelContext &c) {
                          c.addInput(x0).addInput(xl).addInput(w);
                          c.attrs().set("low_rank", int64_t{5});
                        }),
              {"low_rank", "0 or 1"});
}

} // namespace
