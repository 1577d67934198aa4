//===- norm_test.cpp - layer_norm vs a naive reference --------------------===//
#include "dense_test_support.h"

#include <cmath>

using namespace ember;
using namespace ember::testing;

namespace {

std::vector<double> naiveLayerNorm(const Tensor &x, int axis,
                                   const Tensor *gamma, const Tensor *beta,
                                   double eps) {
  int64_t d = 1;
  for (int i = axis; i < x.rank(); ++i)
    d *= x.dim(i);
  int64_t rows = d ? x.numel() / d : 0;
  std::vector<double> y(static_cast<size_t>(x.numel()));
  const float *p = x.data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < d; ++i)
      mean += p[r * d + i];
    mean /= double(d);
    for (int64_t i = 0; i < d; ++i)
      var += (p[r * d + i] - mean) * (p[r * d + i] - mean);
    var /= double(d);
    for (int64_t i = 0; i < d; ++i) {
      double v = (p[r * d + i] - mean) / std::sqrt(var + eps);
      if (gamma)
        v *= gamma->data<float>()[i];
      if (beta)
        v += beta->data<float>()[i];
      y[r * d + i] = v;
    }
  }
  return y;
}

TEST(LayerNorm, MatchesNaiveWithOptionalAffine) {
  uint32_t seed = 1;
  struct Case {
    Shape x;
    int axis;
  };
  for (Case c : {Case{{4, 16}, -1}, Case{{1, 3}, 1}, Case{{2, 3, 5}, -2},
                 Case{{2, 3, 5}, 0}, Case{{257, 64}, -1}, Case{{3, 1}, -1},
                 Case{{0, 8}, -1}}) {
    int axis = c.axis < 0 ? c.axis + c.x.rank() : c.axis;
    int64_t dims[Shape::kMaxRank];
    int r = 0;
    for (int i = axis; i < c.x.rank(); ++i)
      dims[r++] = c.x[i];
    Shape norm = *Shape::fromDims(dims, r);
    Tensor x = randomFloats(c.x, seed++, -3.f, 5.f);
    Tensor gamma = randomFloats(norm, seed++),
           beta = randomFloats(norm, seed++);
    for (int affine = 0; affine < 3; ++affine) { // none, gamma, gamma + beta
      const Tensor *g = affine >= 1 ? &gamma : nullptr,
                   *b = affine >= 2 ? &beta : nullptr;
      std::vector<double> ref = naiveLayerNorm(x, axis, g, b, 1e-3);
      auto setup = [&](TestKernelContext &ctx) {
        ctx.addInput(x);
        if (g)
          ctx.addInput(*g);
        if (b)
          ctx.addInput(*b);
        ctx.attrs().set("axis", int64_t{c.axis});
        ctx.attrs().set("epsilon", 1e-3);
      };
      Tensor one = runOk("layer_norm", setup, 1),
             four = runOk("layer_norm", setup, 4);
      std::string what = c.x.toString() + " axis " + std::to_string(c.axis) +
                         " affine " + std::to_string(affine);
      expectClose(one, ref, 2e-5, what);
      expectIdentical(one, four, what);
    }
  }
}

TEST(LayerNorm, BetaWithoutGammaAndFlatAffine) {
  Tensor x = randomFloats({3, 2, 4}, 5);
  Tensor beta = randomFloats({8}, 6); // 1-D over the normalized [2, 4]
  Tensor y = runOk("layer_norm", [&](TestKernelContext &c) {
    c.addInput(x).addAbsentInput().addInput(beta);
    c.attrs().set("axis", int64_t{1});
  });
  expectClose(y, naiveLayerNorm(x, 1, nullptr, &beta, 1e-5), 2e-5);
}

TEST(LayerNorm, MalformedInputsAreClearErrors) {
  Tensor x = randomFloats({4, 6}, 1);
  expectError(runStatus("layer_norm",
                        [&](TestKernelContext &c) {
                          c.addInput(x).addInput(randomFloats({5}, 2));
                        }),
              {"test kernel", "gamma", "float32[5]", "normalized dims"});
  expectError(runStatus("layer_norm",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("axis", int64_t{-3});
                        }),
              {"axis", "out of range"});
  expectError(runStatus("layer_norm",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("epsilon", -1.0);
                        }),
              {"epsilon", ">= 0"});
  expectError(
      runStatus("layer_norm",
                [&](TestKernelContext &c) { c.addInput(int64s({1}, {1})); }),
      {"float32"});
}

} // namespace
