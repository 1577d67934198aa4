//===- dense_emulation_test.cpp - CUDA dense kernels' device code on the CPU
//===//
//
// The per-element / per-lane bodies of the CUDA dense kernels
// (runtime/src/cuda/dense/*_device.cuh) compiled by the host compiler and
// run over an emulated grid (blocks x threads, grid-stride loops; warps with
// a faithful butterfly for the shuffle reductions; the interaction kernel's
// shared-memory tile), compared with the CPU kernels on random data.
//
//===----------------------------------------------------------------------===//
#include "../runtime/dense_test_support.h"

#include "cuda/cuda_kernels.h"
#include "cuda/dense/concat_device.cuh"
#include "cuda/dense/dense_host.h"
#include "cuda/dense/elementwise_device.cuh"
#include "cuda/dense/gather_device.cuh"
#include "cuda/dense/gemm_lt.h"
#include "cuda/dense/interaction_device.cuh"
#include "cuda/dense/norm_device.cuh"
#include "cuda/dense/reduce_device.cuh"
#include "kernels/shared/broadcast.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/elementwise_activation.h"
#include "kernels/shared/strided_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace ember;
using namespace ember::testing;
namespace dev = ember::cuda::dense;

namespace {

/// Runs body(i) for every i < n the way a grid-stride loop of `blocks` x
/// `threads` does (each emulated thread visits i = tid, tid + grid, ...).
template <typename F>
void emulateGrid(int64_t n, int blocks, int threads, const F &body) {
  int64_t grid = int64_t(blocks) * threads;
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t)
      for (int64_t i = int64_t(b) * threads + t; i < n; i += grid)
        body(i);
}

/// __shfl_xor_sync butterfly over 32 lanes: every lane ends with the
/// combination of all, in the device's order.
template <typename T, typename Op>
void butterfly(std::array<T, dev::kWarp> &v, const Op &op) {
  for (int o = dev::kWarp / 2; o > 0; o /= 2) {
    std::array<T, dev::kWarp> next;
    for (int l = 0; l < dev::kWarp; ++l)
      next[l] = op(v[l], v[l ^ o]);
    v = next;
  }
}

Tensor runCpu(const std::string &kernel, const std::vector<Tensor> &inputs,
              const Attributes &attrs = Attributes()) {
  TestKernelContext ctx;
  for (const Tensor &t : inputs)
    ctx.addInput(t);
  ctx.setNumOutputs(1);
  ctx.attrs() = attrs;
  Status s = runKernel(kernel, ctx);
  EXPECT_TRUE(s.isOk()) << kernel << ": " << s.toString();
  return ctx.output(0);
}

/// NaN == NaN; else within tol relative to max(1, |b|).
bool close(double a, double b, double tol) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b))
    return a == b;
  return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b));
}

void expectFloatsClose(const float *got, const Tensor &ref, double tol,
                       const std::string &what) {
  ASSERT_EQ(ref.dtype(), DType::kFloat32) << what;
  for (int64_t i = 0; i < ref.numel(); ++i)
    ASSERT_TRUE(close(got[i], ref.data<float>()[i], tol))
        << what << " at " << i << ": " << got[i] << " vs "
        << ref.data<float>()[i];
}

Shape randomBroadcastPartner(const Shape &out, std::mt19937 &rng) {
  // Drop some leading dims and set some dims to 1.
  int drop = std::uniform_int_distribution<int>(0, out.rank())(rng);
  int64_t dims[Shape::kMaxRank];
  int r = 0;
  for (int i = drop; i < out.rank(); ++i)
    dims[r++] = std::uniform_int_distribution<int>(0, 2)(rng) == 0 ? 1 : out[i];
  return *Shape::fromDims(dims, r);
}

Shape randomShape(std::mt19937 &rng, int maxRank = 4, int maxDim = 5) {
  int rank = std::uniform_int_distribution<int>(0, maxRank)(rng);
  int64_t dims[Shape::kMaxRank];
  for (int i = 0; i < rank; ++i)
    dims[i] = std::uniform_int_distribution<int>(1, maxDim)(rng);
  return *Shape::fromDims(dims, rank);
}

Tensor randomOf(DType dtype, const Shape &shape, uint32_t seed) {
  if (dtype == DType::kFloat32)
    return randomFloats(shape, seed, -3.f, 3.f);
  if (dtype == DType::kBool)
    return randomInts(shape, seed, 0, 1, DType::kBool);
  return randomInts(shape, seed, -50, 50, dtype);
}

//===----------------------------------------------------------------------===//
// Broadcasting: binary arithmetic, comparisons, where, expand
//===----------------------------------------------------------------------===//

TEST(DenseEmulation, BroadcastOffsetsMatchNaiveIndexMath) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 300; ++iter) {
    Shape out = randomShape(rng, 6, 4);
    Shape shapes[3] = {randomBroadcastPartner(out, rng),
                       randomBroadcastPartner(out, rng), out};
    Result<Shape> b = cpu::broadcastShapes(shapes, 3);
    ASSERT_TRUE(b.isOk());
    dev::BroadcastIndex ix =
        cuda::dense::toBroadcastIndex(cpu::makeBroadcastLayout(*b, shapes, 3));
    for (int64_t i = 0; i < b->numel(); ++i) {
      int64_t off[dev::kMaxOperands];
      ix.offsets(i, off);
      std::vector<int64_t> idx = unravel(i, *b);
      for (int k = 0; k < 3; ++k)
        ASSERT_EQ(off[k], broadcastSource(idx, shapes[k]))
            << "operand " << k << " " << shapes[k].toString() << " in "
            << b->toString() << " at " << i;
    }
  }
}

template <typename T>
void checkBinary(const char *kernel, int op, DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int iter = 0; iter < 40; ++iter) {
    Shape out = randomShape(rng);
    Shape sa = randomBroadcastPartner(out, rng), sb = out;
    if (iter % 2)
      std::swap(sa, sb);
    Tensor a = randomOf(dtype, sa, seed + iter),
           b = randomOf(dtype, sb, seed * 3 + iter);
    Tensor ref = runCpu(kernel, {a, b});
    Shape shapes[2] = {sa, sb};
    Result<Shape> os = cpu::broadcastShapes(shapes, 2);
    dev::BroadcastIndex ix =
        cuda::dense::toBroadcastIndex(cpu::makeBroadcastLayout(*os, shapes, 2));
    std::vector<T> got(static_cast<size_t>(os->numel()));
    emulateGrid(os->numel(), 3, 32, [&](int64_t i) {
      dev::binaryElement<T>(ix, op, a.data<T>(), b.data<T>(), got.data(), i);
    });
    ASSERT_EQ(ref.shape(), *os);
    for (int64_t i = 0; i < os->numel(); ++i) {
      if constexpr (std::is_same_v<T, float>)
        ASSERT_TRUE(close(got[i], ref.data<float>()[i], 1e-6))
            << kernel << " at " << i;
      else
        ASSERT_EQ(got[i], ref.data<T>()[i]) << kernel << " at " << i;
    }
  }
}

TEST(DenseEmulation, BinaryOpsMatchCpuWithBroadcasting) {
  const struct {
    const char *name;
    int op;
    bool ints;
  } ops[] = {{"add", dev::kBinaryAdd, true}, {"sub", dev::kBinarySub, true},
             {"mul", dev::kBinaryMul, true}, {"div", dev::kBinaryDiv, false},
             {"max", dev::kBinaryMax, true}, {"min", dev::kBinaryMin, true}};
  uint32_t seed = 100;
  for (const auto &o : ops) {
    checkBinary<float>(o.name, o.op, DType::kFloat32, seed++);
    if (o.ints) {
      checkBinary<int32_t>(o.name, o.op, DType::kInt32, seed++);
      checkBinary<int64_t>(o.name, o.op, DType::kInt64, seed++);
    }
  }
}

TEST(DenseEmulation, IntegerArithmeticWrapsAndFloatMaxPropagatesNaN) {
  EXPECT_EQ(dev::binaryValue<int32_t>(dev::kBinaryAdd,
                                      std::numeric_limits<int32_t>::max(), 1),
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ(dev::binaryValue<int64_t>(dev::kBinaryMul, int64_t(1) << 62, 4), 0);
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(dev::binaryValue<float>(dev::kBinaryMax, nan, 1.f)));
  EXPECT_TRUE(std::isnan(dev::binaryValue<float>(dev::kBinaryMax, 1.f, nan)));
  EXPECT_TRUE(std::isnan(dev::binaryValue<float>(dev::kBinaryMin, 1.f, nan)));
  EXPECT_TRUE(std::isnan(dev::reluOf(nan)));
  EXPECT_EQ(dev::reluOf(-2.f), 0.f);
}

template <typename T> void checkCompare(DType dtype, uint32_t seed) {
  const struct {
    const char *name;
    int op;
  } ops[] = {{"equal", dev::kCompareEqual},
             {"greater", dev::kCompareGreater},
             {"greater_equal", dev::kCompareGreaterEqual}};
  std::mt19937 rng(seed);
  for (const auto &o : ops) {
    for (int iter = 0; iter < 15; ++iter) {
      Shape out = randomShape(rng);
      Shape sa = out, sb = randomBroadcastPartner(out, rng);
      Tensor a = randomInts(sa, seed + iter, -2, 2, DType::kInt64);
      Tensor b = randomInts(sb, seed + 7 * iter, -2, 2, DType::kInt64);
      // Small value ranges so that equal happens; convert to T.
      Tensor ta = *Tensor::allocate(dtype, sa),
             tb = *Tensor::allocate(dtype, sb);
      for (int64_t i = 0; i < a.numel(); ++i)
        ta.data<T>()[i] = static_cast<T>(a.data<int64_t>()[i]);
      for (int64_t i = 0; i < b.numel(); ++i)
        tb.data<T>()[i] = static_cast<T>(b.data<int64_t>()[i]);
      Tensor ref = runCpu(o.name, {ta, tb});
      Shape shapes[2] = {sa, sb};
      dev::BroadcastIndex ix = cuda::dense::toBroadcastIndex(
          cpu::makeBroadcastLayout(ref.shape(), shapes, 2));
      std::vector<uint8_t> got(static_cast<size_t>(ref.numel()));
      emulateGrid(ref.numel(), 2, 64, [&](int64_t i) {
        dev::compareElement<T>(ix, o.op, ta.data<T>(), tb.data<T>(), got.data(),
                               i);
      });
      for (int64_t i = 0; i < ref.numel(); ++i)
        ASSERT_EQ(got[i], ref.data<uint8_t>()[i]) << o.name << " at " << i;
    }
  }
}

TEST(DenseEmulation, ComparisonsMatchCpuForEveryDtype) {
  checkCompare<float>(DType::kFloat32, 1);
  checkCompare<double>(DType::kFloat64, 2);
  checkCompare<int8_t>(DType::kInt8, 3);
  checkCompare<int32_t>(DType::kInt32, 4);
  checkCompare<int64_t>(DType::kInt64, 5);
}

TEST(DenseEmulation, WhereAndExpandMatchCpu) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 60; ++iter) {
    Shape out = randomShape(rng);
    Shape sc = randomBroadcastPartner(out, rng),
          sa = randomBroadcastPartner(out, rng);
    Shape sb = iter % 3 ? out : randomBroadcastPartner(out, rng);
    DType dtype = iter % 2 ? DType::kFloat32 : DType::kInt64;
    Tensor c = randomOf(DType::kBool, sc, iter),
           a = randomOf(dtype, sa, 100 + iter),
           b = randomOf(dtype, sb, 200 + iter);
    Tensor ref = runCpu("where", {c, a, b});
    Shape shapes[3] = {sc, sa, sb};
    dev::BroadcastIndex ix = cuda::dense::toBroadcastIndex(
        cpu::makeBroadcastLayout(ref.shape(), shapes, 3));
    std::vector<uint8_t> got(ref.nbytes());
    if (dtype == DType::kFloat32)
      emulateGrid(ref.numel(), 4, 32, [&](int64_t i) {
        dev::whereElement<uint32_t>(
            ix, c.data<uint8_t>(), a.data<uint32_t>(), b.data<uint32_t>(),
            reinterpret_cast<uint32_t *>(got.data()), i);
      });
    else
      emulateGrid(ref.numel(), 4, 32, [&](int64_t i) {
        dev::whereElement<uint64_t>(
            ix, c.data<uint8_t>(), a.data<uint64_t>(), b.data<uint64_t>(),
            reinterpret_cast<uint64_t *>(got.data()), i);
      });
    ASSERT_EQ(std::memcmp(got.data(), ref.data(), ref.nbytes()), 0) << iter;

    // expand x = a to out's shape.
    Attributes attrs;
    std::vector<int64_t> target(out.begin(), out.end());
    attrs.set("shape", target);
    Tensor eref = runCpu("expand", {a}, attrs);
    Shape operand[1] = {sa};
    dev::BroadcastIndex ex = cuda::dense::toBroadcastIndex(
        cpu::makeBroadcastLayout(eref.shape(), operand, 1));
    std::vector<uint8_t> egot(eref.nbytes());
    emulateGrid(eref.numel(), 2, 32, [&](int64_t i) {
      if (dtype == DType::kFloat32)
        dev::expandElement<uint32_t>(ex, a.data<uint32_t>(),
                                     reinterpret_cast<uint32_t *>(egot.data()),
                                     i);
      else
        dev::expandElement<uint64_t>(ex, a.data<uint64_t>(),
                                     reinterpret_cast<uint64_t *>(egot.data()),
                                     i);
    });
    ASSERT_EQ(std::memcmp(egot.data(), eref.data(), eref.nbytes()), 0) << iter;
  }
}

//===----------------------------------------------------------------------===//
// Unary, cast
//===----------------------------------------------------------------------===//

TEST(DenseEmulation, UnaryOpsMatchCpu) {
  const struct {
    const char *name;
    int op;
  } ops[] = {{"relu", dev::kUnaryRelu}, {"sigmoid", dev::kUnarySigmoid},
             {"tanh", dev::kUnaryTanh}, {"neg", dev::kUnaryNeg},
             {"exp", dev::kUnaryExp},   {"log", dev::kUnaryLog},
             {"sqrt", dev::kUnarySqrt}, {"abs", dev::kUnaryAbs}};
  Tensor x = randomFloats({7, 33}, 5, -20.f, 20.f);
  float specials[] = {0.f,
                      -0.f,
                      std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity(),
                      std::numeric_limits<float>::quiet_NaN(),
                      1e-30f,
                      -1e30f};
  for (size_t i = 0; i < std::size(specials); ++i)
    x.data<float>()[i] = specials[i];
  for (const auto &o : ops) {
    Tensor ref = runCpu(o.name, {x});
    std::vector<float> got(static_cast<size_t>(x.numel()));
    emulateGrid(x.numel(), 2, 64, [&](int64_t i) {
      got[i] = dev::unaryValue(o.op, x.data<float>()[i]);
    });
    expectFloatsClose(got.data(), ref, 1e-6, o.name);
  }
}

TEST(DenseEmulation, CastMatchesCpuForEveryDtypePair) {
  const DType dtypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                          DType::kInt8,    DType::kUInt8,   DType::kInt32,
                          DType::kInt64,   DType::kBool,    DType::kFloat64};
  // Source values: specials and a spread of magnitudes, made in float64 and
  // cast to each source dtype by the CPU kernel itself.
  std::vector<double> values = {0.0,
                                -0.0,
                                0.5,
                                -0.5,
                                1.5,
                                -1.5,
                                2.5,
                                127.0,
                                128.0,
                                255.0,
                                256.0,
                                -129.0,
                                65504.0,
                                65520.0,
                                1e-8,
                                3.0e9,
                                -3.0e9,
                                1e20,
                                -1e20,
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN(),
                                9.3e18,
                                -9.3e18,
                                1.0 / 3.0,
                                1e-40};
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> dist(-1e6, 1e6);
  for (int i = 0; i < 50; ++i)
    values.push_back(dist(rng));
  Tensor base = tensorOf(DType::kFloat64, {int64_t(values.size())}, values);
  for (DType from : dtypes) {
    Attributes toFrom;
    toFrom.set("to", std::string(dtypeName(from)));
    Tensor src =
        from == DType::kFloat64 ? base : runCpu("cast", {base}, toFrom);
    for (DType to : dtypes) {
      if (to == from)
        continue;
      Attributes attrs;
      attrs.set("to", std::string(dtypeName(to)));
      Tensor ref = runCpu("cast", {src}, attrs);
      std::vector<uint8_t> got(ref.nbytes());
      emulateGrid(src.numel(), 1, 32, [&](int64_t i) {
        dev::castElement(src.data(), static_cast<int>(from), got.data(),
                         static_cast<int>(to), i);
      });
      for (int64_t i = 0; i < src.numel(); ++i) {
        size_t es = dtypeSize(to);
        if (std::memcmp(got.data() + i * es, ref.data<uint8_t>() + i * es,
                        es) == 0)
          continue;
        // Only NaN payloads may differ.
        Tensor g = Tensor::view(got.data() + i * es, to, {1});
        Tensor r = Tensor::view(ref.data<uint8_t>() + i * es, to, {1});
        Attributes f64;
        f64.set("to", std::string("float64"));
        double gv = runCpu("cast", {g}, f64).data<double>()[0];
        double rv = runCpu("cast", {r}, f64).data<double>()[0];
        ASSERT_TRUE(std::isnan(gv) && std::isnan(rv))
            << dtypeName(from) << " -> " << dtypeName(to) << " value "
            << values[i] << ": " << gv << " vs " << rv;
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// GEMM epilogues (linear, dcn_cross): the GEMM itself is cuBLASLt's; a naive
// product stands in for it and the device epilogue code runs on top.
//===----------------------------------------------------------------------===//

std::vector<float> naiveGemm(const float *a, const float *b, int64_t m,
                             int64_t n, int64_t k, bool transB,
                             const float *bias) {
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = bias ? bias[j] : 0.0;
      for (int64_t p = 0; p < k; ++p)
        s += double(a[i * k + p]) * (transB ? b[j * k + p] : b[p * n + j]);
      c[i * n + j] = static_cast<float>(s);
    }
  return c;
}

TEST(DenseEmulation, LinearEpiloguesMatchCpu) {
  for (const char *act : {"none", "relu", "sigmoid", "tanh"})
    for (int64_t k : {int64_t(0), int64_t(1), int64_t(37)})
      for (bool withBias : {false, true}) {
        int64_t m = 5, n = 11;
        Tensor x = randomFloats({m, k}, 1), w = randomFloats({n, k}, 2);
        Tensor bias = randomFloats({n}, 3);
        Attributes attrs;
        attrs.set("activation", std::string(act));
        std::vector<Tensor> in = {x, w};
        if (withBias)
          in.push_back(bias);
        Tensor ref = runCpu("linear", in, attrs);
        int code = static_cast<int>(*cpu::parseActivation(act));
        // cuBLASLt epilogue BIAS/RELU_BIAS (= naive product + bias, relu),
        // or for sigmoid/tanh: BIAS then biasActivationElement; K = 0: zeros
        // then biasActivationElement with the bias.
        const float *pb = withBias ? bias.data<float>() : nullptr;
        std::vector<float> c;
        if (k == 0) {
          c.assign(static_cast<size_t>(m * n), 0.f);
          emulateGrid(m * n, 2, 32, [&](int64_t i) {
            dev::biasActivationElement(c.data(), pb, n, code, i);
          });
        } else {
          c = naiveGemm(x.data<float>(), w.data<float>(), m, n, k, true, pb);
          if (code == dev::kActRelu)
            for (float &v : c)
              v = std::max(v, 0.f);
          else
            emulateGrid(m * n, 2, 32, [&](int64_t i) {
              dev::biasActivationElement(c.data(), nullptr, n, code, i);
            });
        }
        expectFloatsClose(c.data(), ref, 1e-5,
                          std::string("linear ") + act +
                              " k=" + std::to_string(k));
      }
}

TEST(DenseEmulation, CrossCombineMatchesCpuFullAndLowRank) {
  int64_t b = 6, d = 9, r = 3;
  Tensor x0 = randomFloats({b, d}, 1), xl = randomFloats({b, d}, 2);
  Tensor w = randomFloats({d, d}, 3), bias = randomFloats({d, 1}, 4);
  Tensor v = randomFloats({r, d}, 5), wl = randomFloats({d, r}, 6);
  for (bool lowRank : {false, true}) {
    Attributes attrs;
    attrs.set("low_rank", int64_t(lowRank));
    Tensor ref = lowRank ? runCpu("dcn_cross", {x0, xl, v, wl, bias}, attrs)
                         : runCpu("dcn_cross", {x0, xl, w, bias}, attrs);
    std::vector<float> c;
    if (lowRank) {
      std::vector<float> t =
          naiveGemm(xl.data<float>(), v.data<float>(), b, r, d, true, nullptr);
      c = naiveGemm(t.data(), wl.data<float>(), b, d, r, true,
                    bias.data<float>());
    } else {
      c = naiveGemm(xl.data<float>(), w.data<float>(), b, d, d, true,
                    bias.data<float>());
    }
    emulateGrid(b * d, 2, 16, [&](int64_t i) {
      dev::crossCombineElement(x0.data<float>(), xl.data<float>(), c.data(), i);
    });
    expectFloatsClose(c.data(), ref, 1e-5, lowRank ? "low rank" : "full rank");
  }
}

//===----------------------------------------------------------------------===//
// cuBLASLt calls: how runLtGemm describes each GEMM (describeLtCall) and how
// matmul/linear/dcn_cross split into GEMMs (planBroadcastGemm,
// linearGemm), executed here with cuBLASLt's documented column-major
// semantics, D = op(A) · B (+ bias per row of D, epilogue activation).
//===----------------------------------------------------------------------===//

void emulateLt(const dev::LtGemm &g) {
  if (g.m <= 0 || g.n <= 0 || g.batch <= 0)
    return;
  dev::LtCallShape s = dev::describeLtCall(g);
  uint64_t opRows = s.transA ? s.a.cols : s.a.rows;
  uint64_t opCols = s.transA ? s.a.rows : s.a.cols;
  ASSERT_EQ(opRows, s.d.rows);
  ASSERT_EQ(opCols, s.b.rows);
  ASSERT_EQ(s.b.cols, s.d.cols);
  ASSERT_GE(s.a.ld, int64_t(s.a.rows));
  ASSERT_GE(s.b.ld, int64_t(s.b.rows));
  ASSERT_GE(s.d.ld, int64_t(s.d.rows));
  for (int64_t bi = 0; bi < g.batch; ++bi) {
    const float *A = g.b + bi * s.a.stride, *B = g.a + bi * s.b.stride;
    float *D = g.c + bi * s.d.stride;
    for (uint64_t r = 0; r < s.d.rows; ++r)
      for (uint64_t c = 0; c < s.d.cols; ++c) {
        double sum = 0;
        for (uint64_t p = 0; p < opCols; ++p) {
          float av = s.transA ? A[r * s.a.ld + p] : A[p * s.a.ld + r];
          sum += double(av) * B[c * s.b.ld + p];
        }
        float v = static_cast<float>(sum);
        if (g.bias)
          v += g.bias[r];
        D[c * s.d.ld + r] = dev::activationValue(g.activation, v);
      }
  }
}

Shape dropLast(const Tensor &t, int n) {
  int64_t dims[Shape::kMaxRank];
  int r = std::max(0, t.rank() - n);
  for (int i = 0; i < r; ++i)
    dims[i] = t.dim(i);
  return *Shape::fromDims(dims, r);
}

TEST(DenseEmulation, MatmulBatchesAndCublasLtLayoutsMatchCpu) {
  const struct {
    Shape a, b;
  } cases[] = {{{4, 5}, {5, 6}},
               {{3, 4, 5}, {5, 6}},
               {{5}, {5, 6}},
               {{3, 4, 5}, {5}},
               {{5}, {5}},
               {{2, 1, 4, 5}, {3, 5, 6}},
               {{1, 4, 5}, {3, 5, 6}},
               {{3, 4, 5}, {3, 5, 6}},
               {{2, 3, 4, 5}, {1, 3, 5, 2}},
               {{3, 1, 2, 3}, {2, 3, 4}},
               {{2, 3, 5}, {4, 1, 5, 2}}};
  uint32_t seed = 3;
  for (const auto &c : cases) {
    Tensor a = randomFloats(c.a, seed++), b = randomFloats(c.b, seed++);
    Tensor ref = runCpu("matmul", {a, b});
    bool aVector = a.rank() == 1, bVector = b.rank() == 1;
    int64_t m = aVector ? 1 : a.dim(a.rank() - 2), k = a.dim(a.rank() - 1);
    int64_t n = bVector ? 1 : b.dim(b.rank() - 1);
    Shape shapes[2] = {aVector ? Shape{} : dropLast(a, 2),
                       bVector ? Shape{} : dropLast(b, 2)};
    Shape batch = *cpu::broadcastShapes(shapes, 2);
    cpu::BroadcastLayout layout = cpu::makeBroadcastLayout(batch, shapes, 2);
    std::vector<float> got(static_cast<size_t>(ref.numel()), -99.f);
    std::vector<dev::LtGemm> calls =
        dev::planBroadcastGemm(layout, batch.numel(), a.data<float>(),
                               b.data<float>(), got.data(), m, n, k);
    for (const dev::LtGemm &g : calls)
      emulateLt(g);
    expectFloatsClose(got.data(), ref, 1e-5,
                      c.a.toString() + " x " + c.b.toString());
  }
}

TEST(DenseEmulation, LinearAndCrossGemmsMatchCpu) {
  uint32_t seed = 50;
  for (bool transposeWeight : {false, true})
    for (const char *act : {"none", "relu", "sigmoid", "tanh"}) {
      int64_t m = 7, k = 9, n = 4;
      Tensor x = randomFloats({m, k}, seed++), bias = randomFloats({n}, seed++);
      Tensor w = transposeWeight ? randomFloats({n, k}, seed++)
                                 : randomFloats({k, n}, seed++);
      Attributes attrs;
      attrs.set("transpose_weight", int64_t(transposeWeight));
      attrs.set("activation", std::string(act));
      Tensor ref = runCpu("linear", {x, w, bias}, attrs);
      std::vector<float> got(static_cast<size_t>(m * n));
      emulateLt(dev::linearGemm(m, n, k, transposeWeight, x.data<float>(),
                                w.data<float>(), bias.data<float>(), got.data(),
                                static_cast<int>(*cpu::parseActivation(act))));
      expectFloatsClose(got.data(), ref, 1e-5, act);
    }
  // dcn_cross, low rank: t = xl · Vᵀ, o = t · Wᵀ + bias, x0 * o + xl.
  int64_t b = 5, d = 8, r = 3;
  Tensor x0 = randomFloats({b, d}, 1), xl = randomFloats({b, d}, 2);
  Tensor v = randomFloats({r, d}, 3), w = randomFloats({d, r}, 4);
  Tensor bias = randomFloats({d}, 5);
  Attributes attrs;
  attrs.set("low_rank", int64_t(1));
  Tensor ref = runCpu("dcn_cross", {x0, xl, v, w, bias}, attrs);
  std::vector<float> t(static_cast<size_t>(b * r)),
      o(static_cast<size_t>(b * d));
  emulateLt(dev::linearGemm(b, r, d, true, xl.data<float>(), v.data<float>(),
                            nullptr, t.data(), 0));
  emulateLt(dev::linearGemm(b, d, r, true, t.data(), w.data<float>(),
                            bias.data<float>(), o.data(), 0));
  for (int64_t i = 0; i < b * d; ++i)
    dev::crossCombineElement(x0.data<float>(), xl.data<float>(), o.data(), i);
  expectFloatsClose(o.data(), ref, 1e-5, "dcn_cross low rank");
}

//===----------------------------------------------------------------------===//
// dot_interaction
//===----------------------------------------------------------------------===//

TEST(DenseEmulation, InteractionPairOrderIsTheCpuOrder) {
  for (int64_t n = 1; n <= 60; ++n)
    for (bool self : {false, true})
      for (bool torchrec : {false, true}) {
        // The CPU kernel's loops.
        std::vector<std::pair<int64_t, int64_t>> expected;
        int64_t diag = self ? 0 : 1;
        for (int64_t i = 0; i < n; ++i) {
          int64_t jb = torchrec ? i + diag : 0,
                  je = torchrec ? n : i - diag + 1;
          for (int64_t j = jb; j < je; ++j)
            expected.push_back({i, j});
        }
        ASSERT_EQ(int64_t(expected.size()), dev::interactionPairs(n, self));
        for (int64_t p = 0; p < int64_t(expected.size()); ++p) {
          int64_t i, j;
          dev::interactionPair(p, n, self, torchrec, i, j);
          ASSERT_EQ(i, expected[p].first)
              << "n " << n << " self " << self << " torchrec " << torchrec
              << " p " << p;
          ASSERT_EQ(j, expected[p].second)
              << "n " << n << " self " << self << " torchrec " << torchrec
              << " p " << p;
        }
      }
  // Large n: the float estimate must still land on the right row.
  int64_t n = 5000;
  for (int64_t p : {int64_t(0), int64_t(12497499), int64_t(777777)}) {
    int64_t i, j;
    dev::interactionPair(p, n, false, false, i, j);
    EXPECT_EQ(dev::dlrmRowStart(i, false) + j, p);
    EXPECT_LT(j, i);
    dev::interactionPair(p, n, false, true, i, j);
    EXPECT_EQ(dev::torchrecRowStart(i, n - 1) + (j - i - 1), p);
    EXPECT_GT(j, i);
    EXPECT_LT(j, n);
  }
}

/// The fused kernel over an emulated grid: block per sample, the tile in
/// "shared memory" (tiled = true) or rows read from global memory.
std::vector<float> emulateInteraction(const Tensor &dense, const Tensor &sparse,
                                      int64_t f, bool self, bool torchrec,
                                      bool tiled) {
  int64_t b = dense.dim(0), d = dense.dim(1), n = f + 1;
  int64_t width = d + dev::interactionPairs(n, self);
  std::vector<float> out(static_cast<size_t>(b * width), -7.f);
  const int blocks = 3, threads = 64;
  std::vector<float> tile(static_cast<size_t>(n * (d + 1)));
  for (int blk = 0; blk < blocks; ++blk)
    for (int64_t s = blk; s < b; s += blocks) {
      const float *ds = dense.data<float>() + s * d;
      const float *ss = sparse.data<float>() + s * (n - 1) * d;
      if (tiled)
        for (int t = 0; t < threads; ++t)
          for (int64_t e = t; e < n * d; e += threads)
            dev::interactionLoadTile(ds, ss, n, d, tile.data(), e);
      for (int t = 0; t < threads; ++t)
        for (int64_t col = t; col < width; col += threads)
          out[s * width + col] =
              tiled
                  ? dev::interactionValue(tile.data(), tile.data() + d + 1,
                                          d + 1, n, d, self, torchrec, col)
                  : dev::interactionValue(ds, ss, d, n, d, self, torchrec, col);
    }
  return out;
}

TEST(DenseEmulation, DotInteractionMatchesCpu) {
  const struct {
    int64_t b, f, d;
  } shapes[] = {{1, 0, 4},  {1, 1, 1}, {5, 3, 8}, {9, 26, 16},
                {4, 7, 33}, {0, 3, 4}, {3, 2, 0}};
  uint32_t seed = 1;
  for (const auto &sh : shapes)
    for (bool self : {false, true})
      for (bool torchrec : {false, true})
        for (bool tiled : {false, true}) {
          Tensor dense = randomFloats({sh.b, sh.d}, seed++);
          Tensor sparse = randomFloats({sh.b, sh.f * sh.d}, seed++);
          Attributes attrs;
          attrs.set("num_features", sh.f);
          attrs.set("self_interaction", int64_t(self));
          attrs.set("pair_order", std::string(torchrec ? "torchrec" : "dlrm"));
          Tensor ref = runCpu("dot_interaction", {dense, sparse}, attrs);
          std::vector<float> got =
              emulateInteraction(dense, sparse, sh.f, self, torchrec, tiled);
          ASSERT_EQ(int64_t(got.size()), ref.numel());
          expectFloatsClose(got.data(), ref, 1e-5,
                            "b " + std::to_string(sh.b) + " f " +
                                std::to_string(sh.f) + " d " +
                                std::to_string(sh.d));
        }
}

//===----------------------------------------------------------------------===//
// softmax, layer_norm (warp per row with the shuffle butterfly)
//===----------------------------------------------------------------------===//

std::vector<float> emulateSoftmaxRows(const float *x, int64_t rows,
                                      int64_t len) {
  std::vector<float> y(static_cast<size_t>(rows * len));
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * len;
    float *yr = y.data() + r * len;
    std::array<float, dev::kWarp> v;
    for (int l = 0; l < dev::kWarp; ++l)
      v[l] = dev::softmaxLaneMax(xr, len, l);
    butterfly(v, [](float a, float b) { return dev::maxOf(a, b); });
    std::array<float, dev::kWarp> sums;
    for (int l = 0; l < dev::kWarp; ++l) // every lane holds the same max
      sums[l] = dev::softmaxLaneExp(xr, yr, len, l, dev::softmaxShift(v[l]));
    butterfly(sums, [](float a, float b) { return a + b; });
    for (int l = 0; l < dev::kWarp; ++l)
      dev::softmaxLaneScale(yr, len, l, 1.f / sums[l]);
  }
  return y;
}

TEST(DenseEmulation, SoftmaxMatchesCpuAlongEveryAxis) {
  const Shape shapes[] = {{1, 1}, {3, 7}, {2, 100}, {4, 3, 5}, {2, 1, 40}};
  uint32_t seed = 3;
  for (const Shape &shape : shapes)
    for (int axis = -shape.rank(); axis < shape.rank(); ++axis) {
      Tensor x = randomFloats(shape, seed++, -30.f, 30.f);
      if (shape.numel() > 3) {
        x.data<float>()[1] = -std::numeric_limits<float>::infinity();
      }
      Attributes attrs;
      attrs.set("axis", int64_t(axis));
      Tensor ref = runCpu("softmax", {x}, attrs);
      int a = axis < 0 ? axis + shape.rank() : axis;
      int64_t outer = 1, inner = 1, len = shape[a];
      for (int i = 0; i < a; ++i)
        outer *= shape[i];
      for (int i = a + 1; i < shape.rank(); ++i)
        inner *= shape[i];
      std::vector<float> got;
      if (inner == 1) {
        got = emulateSoftmaxRows(x.data<float>(), outer, len);
      } else {
        got.assign(static_cast<size_t>(shape.numel()), 0.f);
        emulateGrid(outer * inner, 2, 32, [&](int64_t c) {
          int64_t o = c / inner, l = c % inner, base = o * len * inner + l;
          dev::softmaxColumn(x.data<float>() + base, got.data() + base, len,
                             inner);
        });
      }
      expectFloatsClose(got.data(), ref, 1e-5,
                        shape.toString() + " axis " + std::to_string(axis));
    }
  // A row of -inf: NaN like the CPU (and torch).
  float inf = std::numeric_limits<float>::infinity();
  Tensor x = floats({1, 3}, {-inf, -inf, -inf});
  Tensor ref = runCpu("softmax", {x});
  std::vector<float> got = emulateSoftmaxRows(x.data<float>(), 1, 3);
  expectFloatsClose(got.data(), ref, 1e-5, "all -inf");
}

TEST(DenseEmulation, LayerNormMatchesCpu) {
  const struct {
    Shape shape;
    int axis;
    bool gamma, beta;
  } cases[] = {{{3, 8}, -1, true, true},    {{2, 3, 70}, -1, false, true},
               {{2, 3, 5}, 1, true, false}, {{1, 1}, -1, true, true},
               {{4, 33}, 0, false, false},  {{5, 1000}, -1, true, true}};
  uint32_t seed = 9;
  for (const auto &c : cases) {
    Tensor x = randomFloats(c.shape, seed++, -5.f, 5.f);
    for (int64_t i = 0; i < x.numel(); ++i) // a large common offset
      x.data<float>()[i] += 100.f;
    int axis = c.axis < 0 ? c.axis + c.shape.rank() : c.axis;
    int64_t rows = 1, d = 1;
    for (int i = 0; i < axis; ++i)
      rows *= c.shape[i];
    for (int i = axis; i < c.shape.rank(); ++i)
      d *= c.shape[i];
    Tensor gamma = randomFloats({d}, seed++), beta = randomFloats({d}, seed++);
    Attributes attrs;
    attrs.set("axis", int64_t(c.axis));
    attrs.set("epsilon", 1e-3);
    TestKernelContext ctx;
    ctx.addInput(x);
    if (c.gamma || c.beta)
      ctx.addInput(c.gamma ? gamma : Tensor());
    if (c.beta)
      ctx.addInput(beta);
    ctx.setNumOutputs(1);
    ctx.attrs() = attrs;
    ASSERT_TRUE(runKernel("layer_norm", ctx).isOk());
    const Tensor &ref = ctx.output(0);
    std::vector<float> got(static_cast<size_t>(x.numel()));
    const float *pg = c.gamma ? gamma.data<float>() : nullptr;
    const float *pbeta = c.beta ? beta.data<float>() : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      const float *xr = x.data<float>() + r * d;
      std::array<double, dev::kWarp> s;
      for (int l = 0; l < dev::kWarp; ++l)
        s[l] = dev::layerNormLaneSum(xr, d, l);
      butterfly(s, [](double a, double b) { return a + b; });
      float mean = dev::layerNormMean(s[0], d);
      std::array<double, dev::kWarp> q;
      for (int l = 0; l < dev::kWarp; ++l)
        q[l] = dev::layerNormLaneSquares(xr, d, l, mean);
      butterfly(q, [](double a, double b) { return a + b; });
      float rstd = dev::layerNormRstd(q[0], d, 1e-3f);
      for (int l = 0; l < dev::kWarp; ++l)
        dev::layerNormLaneWrite(xr, got.data() + r * d, d, l, mean, rstd, pg,
                                pbeta);
    }
    expectFloatsClose(got.data(), ref, 1e-5, c.shape.toString());
  }
}

//===----------------------------------------------------------------------===//
// concat
//===----------------------------------------------------------------------===//

TEST(DenseEmulation, ConcatMatchesCpuWithUnitsAndChunks) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 40; ++iter) {
    int count =
        iter % 5 == 4 ? 150 : std::uniform_int_distribution<int>(1, 6)(rng);
    DType dtype = iter % 3 == 0
                      ? DType::kUInt8
                      : (iter % 3 == 1 ? DType::kFloat32 : DType::kInt64);
    int rank = std::uniform_int_distribution<int>(1, 3)(rng);
    int axis = std::uniform_int_distribution<int>(0, rank - 1)(rng);
    int64_t dims[3];
    for (int i = 0; i < rank; ++i)
      dims[i] = std::uniform_int_distribution<int>(1, 4)(rng);
    std::vector<Tensor> inputs;
    for (int i = 0; i < count; ++i) {
      dims[axis] =
          std::uniform_int_distribution<int>(0, 5)(rng) * (iter % 2 ? 4 : 1);
      Shape s = *Shape::fromDims(dims, rank);
      inputs.push_back(
          randomInts(s, iter * 1000 + i, 0, 100,
                     dtype == DType::kUInt8 ? DType::kUInt8 : DType::kInt64));
      if (dtype == DType::kFloat32)
        inputs.back() = randomFloats(s, iter * 1000 + i);
    }
    Attributes attrs;
    attrs.set("axis", int64_t(axis));
    Tensor ref = runCpu("concat", inputs, attrs);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; ++k)
      outer *= ref.dim(k);
    for (int k = axis + 1; k < rank; ++k)
      inner *= ref.dim(k);
    int64_t es = static_cast<int64_t>(dtypeSize(dtype));
    std::vector<const void *> src(count);
    std::vector<int64_t> rowBytes(count);
    std::unique_ptr<bool[]> empty(new bool[count]);
    for (int i = 0; i < count; ++i) {
      src[i] = inputs[i].data();
      rowBytes[i] = inputs[i].dim(axis) * inner * es;
      empty[i] = inputs[i].numel() == 0;
    }
    // Device memory is 256-byte aligned: use an aligned output.
    std::vector<uint4> out((ref.nbytes() + 15) / 16 + 1);
    int unit = dev::concatUnitBytes(out.data(), src.data(), rowBytes.data(),
                                    empty.get(), count);
    int64_t rowUnits = ref.dim(axis) * inner * es / unit;
    int64_t colBase = 0;
    for (int begin = 0; begin < count; begin += dev::kConcatChunk) {
      int end = std::min(count, begin + dev::kConcatChunk);
      dev::ConcatChunk chunk = dev::makeConcatChunk(
          src.data(), rowBytes.data(), begin, end, unit, colBase, rowUnits);
      int64_t total = outer * chunk.colStart[chunk.count];
      emulateGrid(total, 3, 32, [&](int64_t u) {
        switch (unit) {
        case 1:
          dev::concatElement<uint8_t>(
              chunk, reinterpret_cast<uint8_t *>(out.data()), u);
          break;
        case 2:
          dev::concatElement<uint16_t>(
              chunk, reinterpret_cast<uint16_t *>(out.data()), u);
          break;
        case 4:
          dev::concatElement<uint32_t>(
              chunk, reinterpret_cast<uint32_t *>(out.data()), u);
          break;
        case 8:
          dev::concatElement<uint64_t>(
              chunk, reinterpret_cast<uint64_t *>(out.data()), u);
          break;
        default:
          dev::concatElement<uint4>(chunk, out.data(), u);
        }
      });
      colBase += chunk.colStart[chunk.count];
    }
    ASSERT_EQ(std::memcmp(out.data(), ref.data(), ref.nbytes()), 0)
        << "iter " << iter << " unit " << unit;
  }
}

//===----------------------------------------------------------------------===//
// reduce_sum / reduce_max (warp per output)
//===----------------------------------------------------------------------===//

TEST(DenseEmulation, ReductionsMatchCpu) {
  std::mt19937 rng(21);
  const struct {
    const char *name;
    int op;
  } ops[] = {{"reduce_sum", dev::kReduceSum}, {"reduce_max", dev::kReduceMax}};
  for (int iter = 0; iter < 60; ++iter) {
    Shape shape = randomShape(rng, 4, 6);
    if (shape.rank() == 0)
      continue;
    std::vector<int64_t> axes;
    bool reduced[Shape::kMaxRank] = {};
    for (int i = 0; i < shape.rank(); ++i)
      if (std::uniform_int_distribution<int>(0, 1)(rng)) {
        axes.push_back(i - (iter % 2) * shape.rank()); // negative half the time
        reduced[i] = true;
      }
    if (axes.empty())
      for (int i = 0; i < shape.rank(); ++i)
        reduced[i] = true;
    Tensor x = randomFloats(shape, iter, -4.f, 4.f);
    if (iter % 7 == 0)
      x.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
    int64_t dims[Shape::kMaxRank];
    for (int i = 0; i < shape.rank(); ++i)
      dims[i] = shape[i];
    dev::ReduceIndex ix = dev::makeReduceIndex(dims, shape.rank(), reduced);
    for (const auto &o : ops) {
      Attributes attrs;
      attrs.set("axes", axes);
      attrs.set("keepdims", int64_t(iter % 3 != 0));
      Tensor ref = runCpu(o.name, {x}, attrs);
      ASSERT_EQ(ref.numel(), ix.keptCount);
      std::vector<float> got(static_cast<size_t>(ix.keptCount));
      for (int64_t i = 0; i < ix.keptCount; ++i) { // a warp per output
        std::array<double, dev::kWarp> lanes;
        for (int l = 0; l < dev::kWarp; ++l)
          lanes[l] = dev::reduceLanePartial(x.data<float>(), ix, o.op, i, l,
                                            dev::kWarp);
        butterfly(lanes, [&](double a, double b) {
          return dev::reduceCombine(o.op, a, b);
        });
        got[i] = static_cast<float>(lanes[0]);
      }
      expectFloatsClose(got.data(), ref, 1e-6,
                        std::string(o.name) + " " + shape.toString());
    }
  }
}

//===----------------------------------------------------------------------===//
// slice / transpose: the shared strided view, copied by the device's
// expandElement
//===----------------------------------------------------------------------===//

void checkStridedCopy(const char *kernel, const Tensor &x,
                      const Attributes &attrs,
                      Result<cpu::StridedView> (*makeView)(KernelContext &)) {
  Tensor ref = runCpu(kernel, {x}, attrs);
  TestKernelContext ctx;
  ctx.addInput(x).setNumOutputs(1);
  ctx.attrs() = attrs;
  Result<cpu::StridedView> view = makeView(ctx);
  ASSERT_TRUE(view.isOk()) << view.status().toString();
  ASSERT_EQ(view->shape, ref.shape());
  dev::BroadcastIndex ix = cuda::dense::stridedIndex(*view);
  std::vector<float> got(static_cast<size_t>(ref.numel()));
  const float *base = x.data<float>() + view->base;
  emulateGrid(ref.numel(), 2, 32, [&](int64_t i) {
    dev::expandElement<uint32_t>(ix, reinterpret_cast<const uint32_t *>(base),
                                 reinterpret_cast<uint32_t *>(got.data()), i);
  });
  ASSERT_EQ(std::memcmp(got.data(), ref.data(), ref.nbytes()), 0) << kernel;
}

TEST(DenseEmulation, SliceAndTransposeMatchCpu) {
  std::mt19937 rng(31);
  for (int iter = 0; iter < 80; ++iter) {
    Shape shape = randomShape(rng, 4, 6);
    Tensor x = randomFloats(shape, iter);
    // transpose by a random permutation (or the default reversal)
    std::vector<int64_t> perm(static_cast<size_t>(shape.rank()));
    for (int i = 0; i < shape.rank(); ++i)
      perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    Attributes tattrs;
    if (iter % 3)
      tattrs.set("perm", perm);
    checkStridedCopy("transpose", x, tattrs, cpu::transposeView);
    if (shape.rank() == 0)
      continue;
    // slice a random subset of axes with random starts/ends/steps
    std::vector<int64_t> starts, ends, axes, steps;
    for (int i = 0; i < shape.rank(); ++i) {
      if (std::uniform_int_distribution<int>(0, 2)(rng) == 0)
        continue;
      int64_t d = shape[i];
      axes.push_back(iter % 2 ? i : i - shape.rank());
      starts.push_back(
          std::uniform_int_distribution<int64_t>(-d - 1, d + 1)(rng));
      ends.push_back(
          std::uniform_int_distribution<int64_t>(-d - 1, d + 1)(rng));
      int64_t step = std::uniform_int_distribution<int64_t>(1, 3)(rng);
      steps.push_back(std::uniform_int_distribution<int>(0, 1)(rng) ? step
                                                                    : -step);
    }
    if (axes.empty())
      continue;
    Attributes sattrs;
    sattrs.set("starts", starts);
    sattrs.set("ends", ends);
    sattrs.set("axes", axes);
    sattrs.set("steps", steps);
    checkStridedCopy("slice", x, sattrs, cpu::sliceView);
  }
}

//===----------------------------------------------------------------------===//
// gather / gather_elements
//===----------------------------------------------------------------------===//

TEST(DenseEmulation, GatherMatchesCpuAndFlagsBadIndices) {
  std::mt19937 rng(41);
  for (int iter = 0; iter < 60; ++iter) {
    Shape shape = randomShape(rng, 3, 5);
    if (shape.rank() == 0)
      continue;
    int axis = std::uniform_int_distribution<int>(0, shape.rank() - 1)(rng);
    int64_t dim = shape[axis];
    Tensor data = randomFloats(shape, iter);
    DType idt = iter % 2 ? DType::kInt32 : DType::kInt64;
    Shape ishape = randomShape(rng, 2, 4);
    Tensor idx = randomInts(ishape, iter + 500, -dim, dim - 1, idt);
    Attributes attrs;
    attrs.set("axis", int64_t(axis - (iter % 3 == 0 ? shape.rank() : 0)));
    Tensor ref = runCpu("gather", {data, idx}, attrs);
    int64_t inner = 1;
    for (int i = axis + 1; i < shape.rank(); ++i)
      inner *= shape[i];
    std::vector<float> got(static_cast<size_t>(ref.numel()));
    emulateGrid(ref.numel(), 2, 32, [&](int64_t u) {
      int64_t bad, pos;
      ASSERT_TRUE(dev::gatherElement<uint32_t>(
          data.data<uint32_t>(), idx.data(), idt == DType::kInt64, idx.numel(),
          inner, dim, reinterpret_cast<uint32_t *>(got.data()), u, bad, pos));
    });
    ASSERT_EQ(std::memcmp(got.data(), ref.data(), ref.nbytes()), 0) << iter;

    // gather_elements with indices no larger than data.
    int64_t idims[Shape::kMaxRank];
    for (int k = 0; k < shape.rank(); ++k)
      idims[k] = k == axis
                     ? std::uniform_int_distribution<int64_t>(0, 4)(rng)
                     : std::uniform_int_distribution<int64_t>(1, shape[k])(rng);
    Shape eshape = *Shape::fromDims(idims, shape.rank());
    Tensor eidx = randomInts(eshape, iter + 900, -dim, dim - 1, idt);
    Tensor eref = runCpu("gather_elements", {data, eidx}, attrs);
    int64_t strides[Shape::kMaxRank];
    cpu::contiguousStrides(shape, strides);
    std::vector<float> egot(static_cast<size_t>(eref.numel()));
    emulateGrid(eref.numel(), 2, 32, [&](int64_t u) {
      int64_t bad;
      ASSERT_TRUE(dev::gatherElementsElement<uint32_t>(
          data.data<uint32_t>(), eidx.data(), idt == DType::kInt64, idims,
          strides, shape.rank(), axis, dim,
          reinterpret_cast<uint32_t *>(egot.data()), u, bad));
    });
    ASSERT_EQ(std::memcmp(egot.data(), eref.data(), eref.nbytes()), 0) << iter;
  }
  // Out of range: a zero element, the index and its position reported.
  float data[4] = {1, 2, 3, 4};
  int64_t indices[3] = {1, 4, -5};
  float out[3] = {9, 9, 9};
  int64_t bad = 0, pos = 0;
  EXPECT_TRUE(dev::gatherElement<float>(data, indices, true, 3, 1, 4, out, 0,
                                        bad, pos));
  EXPECT_EQ(out[0], 2.f);
  EXPECT_FALSE(dev::gatherElement<float>(data, indices, true, 3, 1, 4, out, 1,
                                         bad, pos));
  EXPECT_EQ(out[1], 0.f);
  EXPECT_EQ(bad, 4);
  EXPECT_EQ(pos, 1);
  EXPECT_FALSE(dev::gatherElement<float>(data, indices, true, 3, 1, 4, out, 2,
                                         bad, pos));
  EXPECT_EQ(bad, -5);
  int64_t dims[1] = {3}, strides[1] = {1};
  EXPECT_FALSE(dev::gatherElementsElement<float>(
      data, indices, true, dims, strides, 1, 0, 4, out, 2, bad));
  EXPECT_EQ(out[2], 0.f);
  EXPECT_EQ(bad, -5);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

const char *const kCudaDenseKernels[] = {
    "linear",        "matmul",     "dcn_cross", "dot_interaction",
    "relu",          "sigmoid",    "tanh",      "neg",
    "exp",           "log",        "sqrt",      "abs",
    "add",           "sub",        "mul",       "div",
    "max",           "min",        "equal",     "greater",
    "greater_equal", "where",      "cast",      "concat",
    "softmax",       "layer_norm", "identity",  "reshape",
    "flatten",       "squeeze",    "unsqueeze", "expand"};

TEST(DenseEmulation, CudaKernelsShareTheCpuContracts) {
  for (const char *name : kCudaDenseKernels) {
    const KernelDef *gpu = cuda::cudaKernels().find(name);
    const KernelDef *cpu = cpuKernels().find(name);
    ASSERT_NE(gpu, nullptr) << name;
    ASSERT_NE(cpu, nullptr) << name;
    EXPECT_EQ(gpu->minInputs, cpu->minInputs) << name;
    EXPECT_EQ(gpu->maxInputs, cpu->maxInputs) << name;
    EXPECT_EQ(gpu->minOutputs, cpu->minOutputs) << name;
    EXPECT_EQ(gpu->maxOutputs, cpu->maxOutputs) << name;
    EXPECT_EQ(gpu->validate, cpu->validate) << name;
    EXPECT_EQ(gpu->outputsAliasInputs, cpu->outputsAliasInputs) << name;
    EXPECT_EQ(gpu->elementwiseInPlace, cpu->elementwiseInPlace) << name;
    EXPECT_NE(gpu->summary.find("[CUDA: "), std::string::npos) << name;
  }
}

TEST(DenseEmulation, CudaKernelsWithoutADeviceContextFailCleanly) {
  // A CUDA kernel handed a host context (a bug in the caller) must return
  // an error, not touch the memory as device memory.
  for (const char *name : {"linear", "add", "dot_interaction", "concat",
                           "softmax", "layer_norm", "cast", "expand"}) {
    TestKernelContext ctx;
    ctx.addInput(randomFloats({2, 2}, 1)).addInput(randomFloats({2, 2}, 2));
    if (std::string(name) == "concat" || std::string(name) == "softmax" ||
        std::string(name) == "layer_norm" || std::string(name) == "cast" ||
        std::string(name) == "expand") {
      ctx = TestKernelContext();
      ctx.addInput(randomFloats({2, 2}, 1));
    }
    ctx.setNumOutputs(1);
    ctx.attrs().set("axis", int64_t(0));
    ctx.attrs().set("to", std::string("float16"));
    ctx.attrs().set("num_features", int64_t(0));
    ctx.attrs().set("shape", std::vector<int64_t>{2, 2});
    Status s = cuda::cudaKernels().find(name)->run(ctx);
    EXPECT_EQ(s.code(), StatusCode::kInternal) << name << ": " << s.toString();
  }
}

} // namespace
