//===- gemm_test.cpp - linear, matmul vs naive loops ----------------------===//
#include "dense_test_support.h"
#include "kernels/cpu/blas_core.h"
#include "kernels/cpu/gemm.h"

#include <cmath>
#include <cstdlib>
#include <string>

using namespace ember;
using namespace ember::testing;

namespace {

double activate(const std::string &act, double v) {
  if (act == "relu")
    return v > 0 ? v : 0;
  if (act == "sigmoid")
    return 1 / (1 + std::exp(-v));
  if (act == "tanh")
    return std::tanh(v);
  return v;
}

/// y[m, n] = act(sum_k x[m, k] * w(n, k) + bias[n]) in double.
std::vector<double> naiveLinear(const Tensor &x, const Tensor &w,
                                const Tensor *bias, bool transposeWeight,
                                const std::string &act) {
  int64_t k = x.dim(x.rank() - 1), m = x.numel() / std::max<int64_t>(k, 1);
  if (k == 0) {
    m = 1;
    for (int i = 0; i + 1 < x.rank(); ++i)
      m *= x.dim(i);
  }
  int64_t n = transposeWeight ? w.dim(0) : w.dim(1);
  std::vector<double> y(static_cast<size_t>(m * n));
  const float *px = x.data<float>(), *pw = w.data<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias ? bias->data<float>()[j] : 0.0;
      for (int64_t q = 0; q < k; ++q)
        acc += double(px[i * k + q]) *
               (transposeWeight ? pw[j * k + q] : pw[q * n + j]);
      y[i * n + j] = activate(act, acc);
    }
  return y;
}

Tensor runLinear(const Tensor &x, const Tensor &w, const Tensor *bias,
                 bool transposeWeight, const std::string &act,
                 int threads = 1) {
  return runOk(
      "linear",
      [&](TestKernelContext &ctx) {
        ctx.addInput(x).addInput(w);
        if (bias)
          ctx.addInput(*bias);
        ctx.attrs().set("transpose_weight", int64_t{transposeWeight});
        ctx.attrs().set("activation", act);
      },
      threads);
}

struct LinearCase {
  int64_t m, k, n;
};

class LinearSizes : public ::testing::TestWithParam<LinearCase> {};

TEST_P(LinearSizes, MatchesNaiveWithAndWithoutBiasAndTranspose) {
  LinearCase c = GetParam();
  uint32_t seed = static_cast<uint32_t>(c.m * 1000003 + c.k * 1009 + c.n);
  Tensor x = randomFloats({c.m, c.k}, seed);
  Tensor wNK = randomFloats({c.n, c.k}, seed + 1);
  Tensor bias = randomFloats({c.n}, seed + 2);
  // The same weights in [K, N] layout.
  Tensor wKN = *Tensor::allocate(DType::kFloat32, {c.k, c.n});
  for (int64_t i = 0; i < c.n; ++i)
    for (int64_t q = 0; q < c.k; ++q)
      wKN.data<float>()[q * c.n + i] = wNK.data<float>()[i * c.k + q];
  double tol = 1e-5 * std::max<double>(1, std::sqrt(double(c.k)));
  for (bool withBias : {false, true}) {
    const Tensor *b = withBias ? &bias : nullptr;
    std::vector<double> ref = naiveLinear(x, wNK, b, true, "none");
    Tensor y = runLinear(x, wNK, b, true, "none");
    ASSERT_EQ(y.shape(), Shape({c.m, c.n}));
    expectClose(y, ref, tol, "[N,K] weight");
    Tensor y2 = runLinear(x, wKN, b, false, "none");
    expectClose(y2, ref, tol, "[K,N] weight");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Gemm, LinearSizes,
    ::testing::Values(LinearCase{1, 1, 1}, LinearCase{3, 5, 7},
                      LinearCase{129, 257, 65},
                      LinearCase{1, 64, 300}, // batch 1, column split
                      LinearCase{64, 16, 1}),
    [](const ::testing::TestParamInfo<LinearCase> &info) {
      return "M" + std::to_string(info.param.m) + "K" +
             std::to_string(info.param.k) + "N" + std::to_string(info.param.n);
    });

TEST(Linear, FusedActivationsEqualSeparateKernels) {
  Tensor x = randomFloats({37, 19}, 11, -2.f, 2.f);
  Tensor w = randomFloats({23, 19}, 12);
  Tensor bias = randomFloats({23}, 13);
  Tensor plain = runLinear(x, w, &bias, true, "none");
  for (const char *act : {"relu", "sigmoid", "tanh"}) {
    Tensor fused = runLinear(x, w, &bias, true, act);
    Tensor separate =
        runOk(act, [&](TestKernelContext &ctx) { ctx.addInput(plain); });
    expectIdentical(fused, separate, act);
    expectClose(fused, naiveLinear(x, w, &bias, true, act), 1e-5, act);
  }
}

TEST(Linear, ThreadsAndGemmModesAgree) {
  Tensor x = randomFloats({203, 96}, 21);
  Tensor w = randomFloats({150, 96}, 22);
  Tensor bias = randomFloats({150}, 23);
  Tensor one = runLinear(x, w, &bias, true, "relu", 1);
  Tensor four = runLinear(x, w, &bias, true, "relu", 4);
  expectIdentical(one, four, "1 vs 4 threads");
  // Column-split path (small M).
  Tensor xs = randomFloats({4, 256}, 24);
  Tensor ws = randomFloats({2000, 256}, 25);
  expectIdentical(runLinear(xs, ws, nullptr, true, "none", 1),
                  runLinear(xs, ws, nullptr, true, "none", 4), "column split");
  cpu::setGemmThreading(cpu::GemmThreading::kOpenBlas);
  Tensor blas = runLinear(x, w, &bias, true, "relu", 4);
  cpu::setGemmThreading(cpu::GemmThreading::kRuntimePool);
  expectClose(blas, naiveLinear(x, w, &bias, true, "relu"), 1e-4,
              "openblas threads");
}

TEST(Linear, ZeroSizedDims) {
  Tensor w = randomFloats({4, 3}, 31);
  Tensor bias = floats({4}, {1, -2, 3, -4});
  Tensor y = runLinear(*Tensor::allocate(DType::kFloat32, {0, 3}), w, &bias,
                       true, "none");
  EXPECT_EQ(y.shape(), Shape({0, 4}));
  // K = 0: the product is empty, so the output is bias then activation.
  Tensor y2 = runLinear(*Tensor::allocate(DType::kFloat32, {2, 0}),
                        *Tensor::allocate(DType::kFloat32, {4, 0}), &bias, true,
                        "relu");
  expectClose(y2, {1, 0, 3, 0, 1, 0, 3, 0});
  Tensor y3 = runLinear(randomFloats({2, 3}, 32),
                        *Tensor::allocate(DType::kFloat32, {0, 3}), nullptr,
                        true, "none");
  EXPECT_EQ(y3.shape(), Shape({2, 0}));
}

TEST(Linear, LeadingDimsAndHalfInputs) {
  Tensor x = randomFloats({2, 3, 8}, 41);
  Tensor w = randomFloats({5, 8}, 42);
  Tensor y = runLinear(x, w, nullptr, true, "none");
  ASSERT_EQ(y.shape(), Shape({2, 3, 5}));
  expectClose(y, naiveLinear(x, w, nullptr, true, "none"), 1e-5);
  // float16 inputs are converted to float32 (output float32).
  Tensor xh = *Tensor::allocate(DType::kFloat16, x.shape());
  Tensor xr = *Tensor::allocate(DType::kFloat32, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    xh.data<uint16_t>()[i] = floatToHalf(x.data<float>()[i]);
    xr.data<float>()[i] = halfToFloat(xh.data<uint16_t>()[i]);
  }
  Tensor yh = runLinear(xh, w, nullptr, true, "none");
  expectClose(yh, naiveLinear(xr, w, nullptr, true, "none"), 1e-5);
}

TEST(Linear, MalformedInputsAreClearErrors) {
  Tensor x = randomFloats({4, 3}, 51), w = randomFloats({5, 3}, 52);
  expectError(runStatus("linear",
                        [&](TestKernelContext &c) {
                          c.addInput(x).addInput(randomFloats({5, 4}, 53));
                        }),
              {"test kernel", "K = 3", "K = 4"});
  expectError(runStatus("linear",
                        [&](TestKernelContext &c) {
                          c.addInput(x).addInput(w).addInput(
                              randomFloats({4}, 54));
                        }),
              {"bias must be [5]"});
  expectError(runStatus("linear",
                        [&](TestKernelContext &c) {
                          c.addInput(x).addInput(w);
                          c.attrs().set("activation", std::string("gelu"));
                        }),
              {"activation", "gelu"});
  expectError(runStatus("linear",
                        [&](TestKernelContext &c) {
                          c.addInput(x).addInput(w);
                          c.attrs().set("transpose_weight", int64_t{2});
                        }),
              {"transpose_weight", "0 or 1"});
  expectError(runStatus("linear",
                        [&](TestKernelContext &c) {
                          c.addInput(randomInts({4, 3}, 55, 0, 3)).addInput(w);
                        }),
              {"x must be float32", "int64[4, 3]"});
  expectError(runStatus("linear",
                        [&](TestKernelContext &c) {
                          c.addInput(x).addInput(randomFloats({5, 3, 1}, 56));
                        }),
              {"weight must have rank 2"});
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

/// ONNX MatMul in double: vectors are promoted and their dim dropped.
std::vector<double> naiveMatmul(const Tensor &a, const Tensor &b,
                                Shape *outShape) {
  Shape as = a.shape(), bs = b.shape();
  bool av = as.rank() == 1, bv = bs.rank() == 1;
  Shape a2 = av ? Shape{1, as[0]} : as;
  Shape b2 = bv ? Shape{bs[0], 1} : bs;
  int64_t m = a2[a2.rank() - 2], k = a2[a2.rank() - 1], n = b2[b2.rank() - 1];
  // batch shapes
  std::vector<int64_t> ab(a2.begin(), a2.end() - 2),
      bb(b2.begin(), b2.end() - 2);
  size_t r = std::max(ab.size(), bb.size());
  std::vector<int64_t> batch(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i + ab.size() >= r ? ab[i + ab.size() - r] : 1;
    int64_t db = i + bb.size() >= r ? bb[i + bb.size() - r] : 1;
    batch[i] = std::max(da, db);
    if (da == 0 || db == 0)
      batch[i] = 0;
  }
  std::vector<int64_t> outDims = batch;
  if (!av)
    outDims.push_back(m);
  if (!bv)
    outDims.push_back(n);
  *outShape = *Shape::fromDims(outDims.data(), outDims.size());
  Shape batchShape = *Shape::fromDims(batch.data(), batch.size());
  Shape abShape = *Shape::fromDims(ab.data(), ab.size());
  Shape bbShape = *Shape::fromDims(bb.data(), bb.size());
  std::vector<double> out;
  for (int64_t bi = 0; bi < batchShape.numel(); ++bi) {
    std::vector<int64_t> idx = unravel(bi, batchShape);
    int64_t ao = broadcastSource(idx, abShape),
            bo = broadcastSource(idx, bbShape);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t q = 0; q < k; ++q)
          acc += double(a.data<float>()[ao * m * k + i * k + q]) *
                 b.data<float>()[bo * k * n + q * n + j];
        out.push_back(acc);
      }
  }
  return out;
}

TEST(Matmul, OnnxShapesWithBroadcastBatches) {
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {
      {{3, 4}, {4, 5}, {3, 5}},
      {{4}, {4, 5}, {5}},
      {{3, 4}, {4}, {3}},
      {{4}, {4}, {}},
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},
      {{4}, {2, 4, 5}, {2, 5}},
      {{2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}},
      {{1, 3, 4}, {7, 4, 2}, {7, 3, 2}},
      {{0, 3, 4}, {4, 2}, {0, 3, 2}},
      {{3, 0}, {0, 2}, {3, 2}},
      {{40, 33, 20}, {40, 20, 9}, {40, 33, 9}}, // many small batches
  };
  uint32_t seed = 100;
  for (const Case &c : cases) {
    Tensor a = randomFloats(c.a, seed++), b = randomFloats(c.b, seed++);
    Shape refShape;
    std::vector<double> ref = naiveMatmul(a, b, &refShape);
    ASSERT_EQ(refShape, c.out);
    for (int threads : {1, 4}) {
      Tensor y = runOk(
          "matmul",
          [&](TestKernelContext &ctx) { ctx.addInput(a).addInput(b); },
          threads);
      ASSERT_EQ(y.shape(), c.out) << c.a.toString() << " x " << c.b.toString();
      expectClose(y, ref, 1e-5, c.a.toString() + " x " + c.b.toString());
    }
  }
}

TEST(Matmul, MismatchedShapesAreErrors) {
  expectError(runStatus("matmul",
                        [&](TestKernelContext &c) {
                          c.addInput(randomFloats({3, 4}, 1))
                              .addInput(randomFloats({5, 2}, 2));
                        }),
              {"test kernel", "inner dimensions differ", "[3, 4]", "[5, 2]"});
  expectError(runStatus("matmul",
                        [&](TestKernelContext &c) {
                          c.addInput(randomFloats({2, 3, 4}, 1))
                              .addInput(randomFloats({3, 4, 2}, 2));
                        }),
              {"batch dims", "not broadcastable"});
  expectError(
      runStatus(
          "matmul",
          [&](TestKernelContext &c) {
            c.addInput(floats({}, {1.f})).addInput(randomFloats({1, 2}, 2));
          }),
      {"rank >= 1"});
}

} // namespace

TEST(Gemm, OpenBlasRunsKernelsThatFitTheCpu) {
  // OpenBLAS falls back to its SSE3 "Prescott" core on CPU models newer
  // than the library; the first GEMM re-selects one from the CPU's flags.
  ember::cpu::ensureBlasCoreFitsCpu();
  std::string core = ember::cpu::blasCoreName();
  if (core.empty())
    GTEST_SKIP() << "the BLAS in this process is not OpenBLAS";
  __builtin_cpu_init();
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!std::getenv("OPENBLAS_CORETYPE") && avx2) {
    EXPECT_NE(core, "Prescott") << "OpenBLAS kept its generic core on a CPU "
                                   "with AVX2 and FMA";
  }
}
