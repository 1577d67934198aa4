//===- elementwise_test.cpp - binary, unary, comparison and where kernels -===//
#include "dense_test_support.h"

#include <cmath>
#include <limits>

using namespace ember;
using namespace ember::testing;

namespace {

double binaryRef(const std::string &op, double a, double b) {
  if (op == "add")
    return a + b;
  if (op == "sub")
    return a - b;
  if (op == "mul")
    return a * b;
  if (op == "div")
    return a / b;
  if (op == "max")
    return std::max(a, b);
  return std::min(a, b);
}

/// Naive broadcasting reference: computes the output shape itself.
std::vector<double> naiveBinary(const std::string &op, const Tensor &a,
                                const Tensor &b, Shape *outShape) {
  int r = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(r);
  for (int i = 0; i < r; ++i) {
    int ia = i - (r - a.rank()), ib = i - (r - b.rank());
    int64_t da = ia >= 0 ? a.dim(ia) : 1, db = ib >= 0 ? b.dim(ib) : 1;
    dims[i] = da == 1 ? db : da;
  }
  *outShape = *Shape::fromDims(dims.data(), dims.size());
  std::vector<double> out(static_cast<size_t>(outShape->numel()));
  for (int64_t i = 0; i < outShape->numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, *outShape);
    out[i] = binaryRef(op, a.data<float>()[broadcastSource(idx, a.shape())],
                       b.data<float>()[broadcastSource(idx, b.shape())]);
  }
  return out;
}

struct ShapePair {
  Shape a, b;
};

const ShapePair kShapePairs[] = {
    {{2, 3}, {2, 3}},    {{}, {}}, // scalars
    {{4, 5}, {}},                  // scalar b
    {{}, {3}},                     // scalar a
    {{3, 1}, {1, 4}},              // both stretch
    {{2, 3, 4}, {4}},              // rank mismatch
    {{4}, {2, 3, 4}},    {{2, 1, 4}, {3, 1}},
    {{1}, {5}},          {{1, 1, 1}, {2, 1, 3}},
    {{0, 3}, {1, 3}}, // size-0
    {{0}, {}},           {{5, 0, 2}, {2}},
    {{70000}, {70000}}, // long single row: split into spans
    {{300, 257}, {257}}, {{300, 1}, {300, 257}},
};

TEST(Binary, FloatOpsMatchNaiveBroadcasting) {
  uint32_t seed = 1;
  for (const char *op : {"add", "sub", "mul", "div", "max", "min"}) {
    for (const ShapePair &p : kShapePairs) {
      Tensor a = randomFloats(p.a, seed++, -2.f, 2.f);
      Tensor b = randomFloats(p.b, seed++, 0.5f, 2.f);
      Shape refShape;
      std::vector<double> ref = naiveBinary(op, a, b, &refShape);
      Tensor one = runOk(
          op, [&](TestKernelContext &c) { c.addInput(a).addInput(b); }, 1);
      Tensor four = runOk(
          op, [&](TestKernelContext &c) { c.addInput(a).addInput(b); }, 4);
      std::string what =
          std::string(op) + " " + p.a.toString() + " " + p.b.toString();
      ASSERT_EQ(one.shape(), refShape) << what;
      expectClose(one, ref, 1e-6, what);
      expectIdentical(one, four, what + " threads");
    }
  }
}

TEST(Binary, MaxMinPropagateNaN) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = floats({3}, {nan, 1.f, 2.f}), b = floats({3}, {0.f, nan, 1.f});
  for (const char *op : {"max", "min"}) {
    Tensor y =
        runOk(op, [&](TestKernelContext &c) { c.addInput(a).addInput(b); });
    EXPECT_TRUE(std::isnan(y.data<float>()[0])) << op;
    EXPECT_TRUE(std::isnan(y.data<float>()[1])) << op;
  }
}

TEST(Binary, IntegerShapeArithmetic) {
  Tensor a = int64s({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = int64s({3}, {10, 20, 30});
  auto run = [&](const char *op) {
    return valuesOf<int64_t>(
        runOk(op, [&](TestKernelContext &c) { c.addInput(a).addInput(b); }));
  };
  EXPECT_EQ(run("add"), (std::vector<int64_t>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(run("sub"), (std::vector<int64_t>{-9, -18, -27, -6, -15, -24}));
  EXPECT_EQ(run("mul"), (std::vector<int64_t>{10, 40, 90, 40, 100, 180}));
  EXPECT_EQ(run("max"), (std::vector<int64_t>{10, 20, 30, 10, 20, 30}));
  EXPECT_EQ(run("min"), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  Tensor y =
      runOk("add", [&](TestKernelContext &c) { c.addInput(a).addInput(b); });
  EXPECT_EQ(y.dtype(), DType::kInt64);
  // Overflow wraps instead of being undefined.
  Tensor big = int64s({1}, {std::numeric_limits<int64_t>::max()});
  Tensor one = int64s({1}, {1});
  Tensor w = runOk(
      "add", [&](TestKernelContext &c) { c.addInput(big).addInput(one); });
  EXPECT_EQ(w.data<int64_t>()[0], std::numeric_limits<int64_t>::min());
  // int32 too.
  Tensor a32 = tensorOf<int32_t>(DType::kInt32, {2}, {7, -3});
  Tensor m = runOk(
      "mul", [&](TestKernelContext &c) { c.addInput(a32).addInput(a32); });
  EXPECT_EQ(valuesOf<int32_t>(m), (std::vector<int32_t>{49, 9}));
}

TEST(Binary, HalfInputsConvertToFloat) {
  Tensor a = *Tensor::allocate(DType::kBFloat16, {2});
  a.data<uint16_t>()[0] = floatToBFloat16(1.5f);
  a.data<uint16_t>()[1] = floatToBFloat16(-2.f);
  Tensor b = floats({2}, {0.25f, 4.f});
  Tensor y =
      runOk("mul", [&](TestKernelContext &c) { c.addInput(a).addInput(b); });
  expectClose(y, {0.375, -8});
}

TEST(Binary, MalformedInputsAreClearErrors) {
  expectError(
      runStatus(
          "add",
          [](TestKernelContext &c) {
            c.addInput(randomFloats({2, 3}, 1)).addInput(randomFloats({4}, 2));
          }),
      {"test kernel", "[2, 3]", "[4]", "not broadcastable"});
  expectError(
      runStatus(
          "add",
          [](TestKernelContext &c) {
            c.addInput(randomFloats({2}, 1)).addInput(int64s({2}, {1, 2}));
          }),
      {"add", "float32[2]", "int64[2]"});
  expectError(
      runStatus("div",
                [](TestKernelContext &c) {
                  c.addInput(int64s({2}, {1, 2})).addInput(int64s({2}, {1, 2}));
                }),
      {"div", "float32"});
  expectError(
      runStatus("add",
                [](TestKernelContext &c) { c.addInput(randomFloats({2}, 1)); }),
      {"wrong number of inputs"});
}

double unaryRef(const std::string &op, double x) {
  if (op == "relu")
    return x > 0 ? x : 0;
  if (op == "sigmoid")
    return 1 / (1 + std::exp(-x));
  if (op == "tanh")
    return std::tanh(x);
  if (op == "neg")
    return -x;
  if (op == "exp")
    return std::exp(x);
  if (op == "log")
    return std::log(x);
  if (op == "sqrt")
    return std::sqrt(x);
  return std::fabs(x);
}

TEST(Unary, MatchNaive) {
  uint32_t seed = 500;
  for (const char *op :
       {"relu", "sigmoid", "tanh", "neg", "exp", "log", "sqrt", "abs"}) {
    bool positive = std::string(op) == "log" || std::string(op) == "sqrt";
    for (Shape s : {Shape{}, Shape{0}, Shape{1}, Shape{7, 3}, Shape{40000}}) {
      Tensor x = randomFloats(s, seed++, positive ? 0.01f : -5.f, 5.f);
      std::vector<double> ref(static_cast<size_t>(x.numel()));
      for (int64_t i = 0; i < x.numel(); ++i)
        ref[i] = unaryRef(op, x.data<float>()[i]);
      Tensor one = runOk(
          op, [&](TestKernelContext &c) { c.addInput(x); }, 1);
      Tensor four = runOk(
          op, [&](TestKernelContext &c) { c.addInput(x); }, 4);
      ASSERT_EQ(one.shape(), s);
      expectClose(one, ref, 2e-6, std::string(op) + " " + s.toString());
      expectIdentical(one, four, op);
    }
  }
  // sigmoid saturates without NaN.
  Tensor extreme = floats({2}, {-1000.f, 1000.f});
  Tensor y =
      runOk("sigmoid", [&](TestKernelContext &c) { c.addInput(extreme); });
  expectClose(y, {0, 1});
}

TEST(Unary, IdentityAliasesAnyDtype) {
  Tensor x = int64s({3}, {1, 2, 3});
  Tensor y = runOk("identity", [&](TestKernelContext &c) { c.addInput(x); });
  EXPECT_EQ(y.data(), x.data());
  EXPECT_EQ(y.dtype(), DType::kInt64);
  expectError(
      runStatus("relu",
                [](TestKernelContext &c) { c.addInput(int64s({1}, {1})); }),
      {"test kernel", "x must be float32", "int64[1]"});
}

TEST(Compare, MatchNaiveAndBroadcast) {
  Tensor a = randomInts({4, 5}, 7, -3, 3), b = randomInts({5}, 8, -3, 3);
  Tensor af = *Tensor::allocate(DType::kFloat32, a.shape());
  Tensor bf = *Tensor::allocate(DType::kFloat32, b.shape());
  for (int64_t i = 0; i < a.numel(); ++i)
    af.data<float>()[i] = float(a.data<int64_t>()[i]);
  for (int64_t i = 0; i < b.numel(); ++i)
    bf.data<float>()[i] = float(b.data<int64_t>()[i]);
  for (const char *op : {"equal", "greater", "greater_equal"}) {
    for (bool useFloat : {false, true}) {
      Tensor y = runOk(op, [&](TestKernelContext &c) {
        c.addInput(useFloat ? af : a).addInput(useFloat ? bf : b);
      });
      ASSERT_EQ(y.dtype(), DType::kBool);
      ASSERT_EQ(y.shape(), Shape({4, 5}));
      for (int64_t i = 0; i < 20; ++i) {
        int64_t x = a.data<int64_t>()[i], z = b.data<int64_t>()[i % 5];
        std::string name = op;
        bool ref = name == "equal"     ? x == z
                   : name == "greater" ? x > z
                                       : x >= z;
        ASSERT_EQ(y.data<uint8_t>()[i], ref ? 1 : 0) << op << " " << i;
      }
    }
  }
  expectError(
      runStatus("greater",
                [&](TestKernelContext &c) { c.addInput(a).addInput(bf); }),
      {"same dtype", "int64[4, 5]", "float32[5]"});
}

TEST(Where, SelectsWithThreeWayBroadcast) {
  Tensor cond = randomInts({3, 1}, 9, 0, 1, DType::kBool);
  Tensor a = randomFloats({1, 4}, 10), b = randomFloats({2, 3, 4}, 11);
  for (int threads : {1, 4}) {
    Tensor y = runOk(
        "where",
        [&](TestKernelContext &c) { c.addInput(cond).addInput(a).addInput(b); },
        threads);
    ASSERT_EQ(y.shape(), Shape({2, 3, 4}));
    for (int64_t i = 0; i < y.numel(); ++i) {
      std::vector<int64_t> idx = unravel(i, y.shape());
      bool c = cond.data<uint8_t>()[broadcastSource(idx, cond.shape())];
      float ref = c ? a.data<float>()[broadcastSource(idx, a.shape())]
                    : b.data<float>()[broadcastSource(idx, b.shape())];
      ASSERT_EQ(y.data<float>()[i], ref) << i;
    }
  }
  // Any dtype: int64 values, scalar condition.
  Tensor t = tensorOf<uint8_t>(DType::kBool, {}, {0});
  Tensor yi = runOk("where", [&](TestKernelContext &c) {
    c.addInput(t).addInput(int64s({2}, {1, 2})).addInput(int64s({2}, {3, 4}));
  });
  EXPECT_EQ(valuesOf<int64_t>(yi), (std::vector<int64_t>{3, 4}));
  expectError(
      runStatus("where",
                [&](TestKernelContext &c) {
                  c.addInput(randomFloats({2}, 1)).addInput(a).addInput(a);
                }),
      {"condition must be bool"});
  expectError(runStatus("where",
                        [&](TestKernelContext &c) {
                          c.addInput(cond).addInput(a).addInput(
                              int64s({1}, {1}));
                        }),
              {"same dtype"});
  expectError(
      runStatus("where",
                [&](TestKernelContext &c) {
                  c.addInput(cond).addInput(randomFloats({5}, 1)).addInput(a);
                }),
      {"not broadcastable"});
}

} // namespace
