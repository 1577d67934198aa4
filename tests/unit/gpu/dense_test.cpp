//===- dense_test.cpp - The CUDA dense kernels against the CPU backend ----===//
//
// Every CUDA dense kernel through CudaKernelRunner on random data (fixed
// seeds) and the CPU kernels' edge cases, compared with the CPU kernel of
// the same name: float outputs within 1e-5 relative (of max(1, |ref|)),
// everything else exactly. Error cases must fail with the CPU's status code.
// Skips without a GPU.
//
//===----------------------------------------------------------------------===//
#include "../runtime/dense_test_support.h"
#include "cuda_kernel_runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace ember;
using namespace ember::testing;

namespace {

struct Case {
  std::string kernel;
  std::vector<Tensor> inputs;
  Attributes attrs;
};

Tensor toDType(const Tensor &t, DType dtype) {
  TestKernelContext ctx;
  ctx.addInput(t).setNumOutputs(1);
  ctx.attrs().set("to", std::string(dtypeName(dtype)));
  EXPECT_TRUE(runKernel("cast", ctx).isOk());
  // The CPU cast may alias: copy into a tensor of its own.
  Tensor out = *Tensor::allocate(dtype, t.shape());
  if (out.nbytes())
    std::memcpy(out.data(), ctx.output(0).data(), out.nbytes());
  return out;
}

/// Runs `c` on both backends and compares (float: tol relative).
void expectMatchesCpu(const Case &c, double tol = 1e-5) {
  SCOPED_TRACE(c.kernel);
  TestKernelContext cpu;
  for (const Tensor &t : c.inputs)
    cpu.addInput(t);
  cpu.setNumOutputs(1);
  cpu.attrs() = c.attrs;
  Status cs = runKernel(c.kernel, cpu);
  ASSERT_TRUE(cs.isOk()) << cs.toString();

  CudaKernelRunner gpu;
  for (const Tensor &t : c.inputs)
    gpu.addInput(t);
  gpu.setNumOutputs(1);
  gpu.attrs() = c.attrs;
  Status gs = gpu.run(c.kernel);
  ASSERT_TRUE(gs.isOk()) << gs.toString();

  const Tensor &ref = cpu.output(0), &got = gpu.output(0);
  ASSERT_EQ(got.dtype(), ref.dtype());
  ASSERT_EQ(got.shape(), ref.shape());
  if (ref.dtype() == DType::kFloat32) {
    for (int64_t i = 0; i < ref.numel(); ++i) {
      float r = ref.data<float>()[i], g = got.data<float>()[i];
      if (std::isnan(r)) {
        ASSERT_TRUE(std::isnan(g)) << "at " << i;
        continue;
      }
      if (std::isinf(r)) {
        ASSERT_EQ(g, r) << "at " << i;
        continue;
      }
      ASSERT_NEAR(g, r, tol * std::max(1.0, std::fabs(double(r))))
          << "at " << i;
    }
  } else {
    ASSERT_EQ(std::memcmp(got.data(), ref.data(), ref.nbytes()), 0);
  }
}

/// Both backends reject `c` with the same status code.
void expectSameError(const Case &c) {
  SCOPED_TRACE(c.kernel);
  TestKernelContext cpu;
  for (const Tensor &t : c.inputs)
    cpu.addInput(t);
  cpu.setNumOutputs(1);
  cpu.attrs() = c.attrs;
  Status cs = runKernel(c.kernel, cpu);
  ASSERT_FALSE(cs.isOk());
  CudaKernelRunner gpu;
  for (const Tensor &t : c.inputs)
    gpu.addInput(t);
  gpu.setNumOutputs(1);
  gpu.attrs() = c.attrs;
  Status gs = gpu.run(c.kernel);
  ASSERT_FALSE(gs.isOk());
  EXPECT_EQ(gs.code(), cs.code()) << gs.toString() << " vs " << cs.toString();
  EXPECT_FALSE(gs.message().empty());
}

//===----------------------------------------------------------------------===//
// GEMMs
//===----------------------------------------------------------------------===//

TEST(CudaDense, LinearMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  const struct {
    Shape x;
    int64_t n;
  } shapes[] = {{{1, 1}, 1}, {{64, 128}, 256}, {{7, 13}, 5}, {{2, 3, 33}, 17},
                {{3, 0}, 5}, {{0, 4}, 3},      {{5}, 4}};
  uint32_t seed = 1;
  for (const auto &s : shapes)
    for (const char *act : {"none", "relu", "sigmoid", "tanh"})
      for (bool bias : {false, true})
        for (int64_t transpose : {int64_t(1), int64_t(0)}) {
          int64_t k = s.x[s.x.rank() - 1];
          Case c{"linear", {randomFloats(s.x, seed++)}, {}};
          c.inputs.push_back(transpose ? randomFloats({s.n, k}, seed++)
                                       : randomFloats({k, s.n}, seed++));
          if (bias)
            c.inputs.push_back(randomFloats({s.n}, seed++));
          c.attrs.set("activation", std::string(act));
          c.attrs.set("transpose_weight", transpose);
          expectMatchesCpu(c);
        }
}

TEST(CudaDense, LinearHalfInputsAreConvertedOnTheDevice) {
  EMBER_SKIP_WITHOUT_GPU();
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    Case c{"linear",
           {toDType(randomFloats({9, 24}, 1), dtype),
            toDType(randomFloats({10, 24}, 2), dtype), randomFloats({10}, 3)},
           {}};
    c.attrs.set("activation", std::string("relu"));
    expectMatchesCpu(c);
  }
}

TEST(CudaDense, MatmulMatchesCpuWithBroadcastBatches) {
  EMBER_SKIP_WITHOUT_GPU();
  const struct {
    Shape a, b;
  } cases[] = {{{4, 5}, {5, 6}},
               {{3, 4, 5}, {5, 6}}, // batches fold into M
               {{5}, {5, 6}},
               {{3, 4, 5}, {5}}, // vectors
               {{5}, {5}},
               {{2, 1, 4, 5}, {3, 5, 6}}, // broadcast both
               {{1, 4, 5}, {3, 5, 6}},
               {{3, 4, 5}, {3, 5, 6}}, // a shared / full
               {{2, 3, 4, 5}, {1, 3, 5, 2}},
               {{0, 4, 5}, {5, 6}},
               {{4, 0}, {0, 6}},
               {{2, 64, 128}, {2, 128, 96}}};
  uint32_t seed = 10;
  for (const auto &c : cases)
    expectMatchesCpu(
        {"matmul", {randomFloats(c.a, seed++), randomFloats(c.b, seed++)}, {}});
}

TEST(CudaDense, DcnCrossMatchesCpuFullAndLowRank) {
  EMBER_SKIP_WITHOUT_GPU();
  uint32_t seed = 30;
  for (auto [b, d, r] : {std::array<int64_t, 3>{1, 1, 1},
                         {16, 64, 8},
                         {5, 13, 3},
                         {0, 4, 2},
                         {3, 6, 0}})
    for (int64_t low : {int64_t(0), int64_t(1)})
      for (int biasKind : {0, 1, 2}) { // none, [D], [D, 1]
        if (!low && r == 0)
          continue;
        Case c{"dcn_cross",
               {randomFloats({b, d}, seed++), randomFloats({b, d}, seed++)},
               {}};
        if (low) {
          c.inputs.push_back(randomFloats({r, d}, seed++));
          c.inputs.push_back(randomFloats({d, r}, seed++));
        } else {
          c.inputs.push_back(randomFloats({d, d}, seed++));
        }
        if (biasKind == 1)
          c.inputs.push_back(randomFloats({d}, seed++));
        if (biasKind == 2)
          c.inputs.push_back(randomFloats({d, 1}, seed++));
        c.attrs.set("low_rank", low);
        expectMatchesCpu(c);
      }
}

TEST(CudaDense, GemmShapeErrorsMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  expectSameError(
      {"linear", {randomFloats({2, 3}, 1), randomFloats({4, 5}, 2)}, {}});
  expectSameError(
      {"linear",
       {randomFloats({2, 3}, 1), randomFloats({4, 3}, 2), randomFloats({5}, 3)},
       {}});
  expectSameError(
      {"matmul", {randomFloats({2, 3}, 1), randomFloats({4, 5}, 2)}, {}});
  expectSameError(
      {"matmul", {randomFloats({2, 2, 3}, 1), randomFloats({3, 3, 5}, 2)}, {}});
  expectSameError({"dcn_cross",
                   {randomFloats({2, 3}, 1), randomFloats({2, 3}, 2),
                    randomFloats({3, 4}, 3)},
                   {}});
  expectSameError(
      {"linear", {int64s({1, 1}, {1}), randomFloats({1, 1}, 2)}, {}});
}

//===----------------------------------------------------------------------===//
// dot_interaction
//===----------------------------------------------------------------------===//

TEST(CudaDense, DotInteractionMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  const struct {
    int64_t b, f, d;
  } shapes[] = {{2048, 26, 128}, // DLRM: tiled in shared memory
                {3, 26, 512},    // rows too large for the tile: global path
                {1, 0, 4},       {1, 1, 1}, {5, 3, 8},
                {0, 3, 4},       {3, 2, 0}, {300, 7, 33}};
  uint32_t seed = 40;
  for (const auto &s : shapes)
    for (int64_t self : {int64_t(0), int64_t(1)})
      for (const char *order : {"dlrm", "torchrec"}) {
        Case c{"dot_interaction",
               {randomFloats({s.b, s.d}, seed++),
                randomFloats({s.b, s.f * s.d}, seed++)},
               {}};
        c.attrs.set("num_features", s.f);
        c.attrs.set("self_interaction", self);
        c.attrs.set("pair_order", std::string(order));
        expectMatchesCpu(c);
      }
  Case bad{"dot_interaction",
           {randomFloats({2, 4}, 1), randomFloats({2, 9}, 2)},
           {}};
  bad.attrs.set("num_features", int64_t(2));
  expectSameError(bad);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST(CudaDense, UnaryOpsMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor x = randomFloats({17, 65}, 3, -10.f, 10.f);
  float specials[] = {0.f,
                      -0.f,
                      std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity(),
                      std::numeric_limits<float>::quiet_NaN(),
                      -1.f};
  for (size_t i = 0; i < std::size(specials); ++i)
    x.data<float>()[i] = specials[i];
  for (const char *op :
       {"relu", "sigmoid", "tanh", "neg", "exp", "log", "sqrt", "abs"}) {
    expectMatchesCpu({op, {x}, {}});
    expectMatchesCpu({op, {toDType(x, DType::kFloat16)}, {}});
    expectMatchesCpu({op, {randomFloats({0, 3}, 1)}, {}});
  }
}

TEST(CudaDense, BinaryOpsMatchCpuWithBroadcasting) {
  EMBER_SKIP_WITHOUT_GPU();
  const struct {
    Shape a, b;
  } shapes[] = {{{4, 5}, {4, 5}},    {{4, 5}, {5}},
                {{4, 1}, {1, 5}},    {{}, {3, 2}},
                {{2, 1, 3}, {4, 1}}, {{0, 3}, {3}},
                {{1000}, {1}},       {{2, 3, 4, 5}, {3, 1, 5}}};
  uint32_t seed = 50;
  for (const char *op : {"add", "sub", "mul", "div", "max", "min"})
    for (const auto &s : shapes) {
      Tensor a = randomFloats(s.a, seed++, 0.1f, 3.f);
      Tensor b = randomFloats(s.b, seed++, -2.f, 2.f);
      expectMatchesCpu({op, {a, b}, {}});
      std::string name(op);
      if (name != "div") {
        expectMatchesCpu({op,
                          {randomInts(s.a, seed++, -1000, 1000),
                           randomInts(s.b, seed++, -1000, 1000)},
                          {}});
        expectMatchesCpu({op,
                          {randomInts(s.a, seed++, -1000, 1000, DType::kInt32),
                           randomInts(s.b, seed++, -1000, 1000, DType::kInt32)},
                          {}});
      }
    }
  // Mixed float dtypes convert; int32 + int64 is an error.
  expectMatchesCpu({"add",
                    {toDType(randomFloats({3, 4}, 1), DType::kBFloat16),
                     randomFloats({4}, 2)},
                    {}});
  expectSameError(
      {"add",
       {randomInts({3}, 1, 0, 5, DType::kInt32), randomInts({3}, 2, 0, 5)},
       {}});
  expectSameError({"add", {randomFloats({3}, 1), randomFloats({4}, 2)}, {}});
  expectSameError(
      {"div", {randomInts({3}, 1, 1, 5), randomInts({3}, 2, 1, 5)}, {}});
}

TEST(CudaDense, ComparisonsAndWhereMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  uint32_t seed = 60;
  for (const char *op : {"equal", "greater", "greater_equal"}) {
    expectMatchesCpu(
        {op,
         {randomInts({4, 5}, seed++, -2, 2), randomInts({5}, seed++, -2, 2)},
         {}});
    expectMatchesCpu({op,
                      {randomInts({3, 1}, seed++, -2, 2, DType::kInt32),
                       randomInts({1, 4}, seed++, -2, 2, DType::kInt32)},
                      {}});
    expectMatchesCpu(
        {op, {randomFloats({6, 7}, seed++), randomFloats({7}, seed++)}, {}});
    expectMatchesCpu({op,
                      {randomInts({6}, seed++, 0, 1, DType::kBool),
                       randomInts({6}, seed++, 0, 1, DType::kBool)},
                      {}});
  }
  for (DType dtype :
       {DType::kFloat32, DType::kInt64, DType::kInt32, DType::kUInt8}) {
    Tensor a = toDType(randomFloats({3, 4}, seed++, -50.f, 50.f), dtype);
    Tensor b = toDType(randomFloats({4}, seed++, -50.f, 50.f), dtype);
    expectMatchesCpu(
        {"where", {randomInts({3, 1}, seed++, 0, 1, DType::kBool), a, b}, {}});
  }
  expectMatchesCpu({"where",
                    {randomInts({2, 3}, seed++, 0, 1, DType::kBool),
                     toDType(randomFloats({2, 3}, 1), DType::kFloat16),
                     toDType(randomFloats({1}, 2), DType::kFloat16)},
                    {}});
  expectSameError(
      {"where",
       {randomFloats({2}, 1), randomFloats({2}, 2), randomFloats({2}, 3)},
       {}});
}

TEST(CudaDense, CastMatchesCpuForEveryDtypePair) {
  EMBER_SKIP_WITHOUT_GPU();
  const DType dtypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                          DType::kInt8,    DType::kUInt8,   DType::kInt32,
                          DType::kInt64,   DType::kBool,    DType::kFloat64};
  std::vector<float> values = {0.f,    -0.f,    0.5f,  -1.5f,  2.5f,     127.f,
                               128.f,  255.f,   256.f, -129.f, 65504.f,  1e-8f,
                               3.0e9f, -3.0e9f, 1e20f, -1e20f, 1.f / 3.f};
  Tensor base = floats({int64_t(values.size())}, values);
  for (DType from : dtypes)
    for (DType to : dtypes) {
      Case c{"cast", {toDType(base, from)}, {}};
      c.attrs.set("to", std::string(dtypeName(to)));
      expectMatchesCpu(c, 0.0);
    }
  Case bad{"cast", {base}, {}};
  bad.attrs.set("to", std::string("complex64"));
  CudaKernelRunner gpu;
  gpu.addInput(base);
  gpu.attrs() = bad.attrs;
  EXPECT_FALSE(gpu.run("cast").isOk());
}

//===----------------------------------------------------------------------===//
// Data movement and views
//===----------------------------------------------------------------------===//

TEST(CudaDense, ConcatMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  uint32_t seed = 70;
  // DLRM: the dense output and 26 pooled embeddings along axis 1.
  Case dlrm{"concat", {}, {}};
  dlrm.inputs.push_back(randomFloats({512, 128}, seed++));
  for (int i = 0; i < 26; ++i)
    dlrm.inputs.push_back(randomFloats({512, 128}, seed++));
  dlrm.attrs.set("axis", int64_t(1));
  expectMatchesCpu(dlrm);
  // Many inputs (several launches), odd byte widths, empty inputs, axis 0.
  Case many{"concat", {}, {}};
  for (int i = 0; i < 150; ++i)
    many.inputs.push_back(
        randomInts({3, i % 4, 3}, seed++, 0, 200, DType::kUInt8));
  many.attrs.set("axis", int64_t(-2));
  expectMatchesCpu(many);
  for (int64_t axis : {int64_t(0), int64_t(1), int64_t(2)}) {
    Shape a{2, 3, 4}, b{2, 3, 4};
    a[axis] = 1;
    b[axis] = 5;
    Case c{"concat",
           {randomInts(a, seed++, -9, 9), randomInts(b, seed++, -9, 9)},
           {}};
    c.attrs.set("axis", axis);
    expectMatchesCpu(c);
  }
  Case bad{"concat", {randomFloats({2, 3}, 1), randomFloats({3, 3}, 2)}, {}};
  bad.attrs.set("axis", int64_t(1));
  expectSameError(bad);
}

TEST(CudaDense, ViewsAndExpandMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor x = randomFloats({2, 3, 4}, 1);
  Case reshape{"reshape", {x}, {}};
  reshape.attrs.set("shape", std::vector<int64_t>{4, -1});
  expectMatchesCpu(reshape);
  // The target shape as a (device) input.
  expectMatchesCpu({"reshape", {x, int64s({3}, {0, 12, -1})}, {}});
  expectSameError({"reshape", {x, int64s({2}, {5, -1})}, {}});
  expectMatchesCpu({"flatten", {x}, {}});
  Case squeeze{"squeeze", {randomFloats({1, 3, 1}, 2)}, {}};
  expectMatchesCpu(squeeze);
  Case unsqueeze{"unsqueeze", {x}, {}};
  unsqueeze.attrs.set("axes", std::vector<int64_t>{0, -1});
  expectMatchesCpu(unsqueeze);
  expectMatchesCpu({"identity", {randomInts({5}, 3, 0, 9)}, {}});

  Case expand{"expand", {randomFloats({3, 1}, 4)}, {}};
  expand.attrs.set("shape", std::vector<int64_t>{2, 3, 5});
  expectMatchesCpu(expand);
  expectMatchesCpu(
      {"expand", {randomInts({1, 4}, 5, 0, 9), int64s({2}, {3, 1})}, {}});
  expectSameError({"expand", {randomFloats({3, 2}, 6), int64s({1}, {4})}, {}});
}

TEST(CudaDense, SliceTransposeAndShapeMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor x = randomFloats({4, 5, 6}, 1);
  Case slice{"slice", {x}, {}};
  slice.attrs.set("starts", std::vector<int64_t>{1, -1, 0});
  slice.attrs.set("ends", std::vector<int64_t>{3, -6, 100});
  slice.attrs.set("axes", std::vector<int64_t>{0, 1, 2});
  slice.attrs.set("steps", std::vector<int64_t>{1, -2, 2});
  expectMatchesCpu(slice);
  Case empty{"slice", {randomInts({3, 4}, 2, 0, 9)}, {}};
  empty.attrs.set("starts", std::vector<int64_t>{2});
  empty.attrs.set("ends", std::vector<int64_t>{1});
  expectMatchesCpu(empty);
  Case bad{"slice", {x}, {}};
  bad.attrs.set("starts", std::vector<int64_t>{0});
  bad.attrs.set("ends", std::vector<int64_t>{1});
  bad.attrs.set("axes", std::vector<int64_t>{5});
  expectSameError(bad);
  Case transpose{"transpose", {x}, {}};
  transpose.attrs.set("perm", std::vector<int64_t>{2, 0, 1});
  expectMatchesCpu(transpose);
  expectMatchesCpu({"transpose", {randomInts({3, 1, 2}, 3, 0, 9)}, {}});
  expectMatchesCpu({"transpose", {toDType(x, DType::kFloat16)}, {}});
  Case shape{"shape", {x}, {}};
  expectMatchesCpu(shape);
  shape.attrs.set("start", int64_t(-2));
  expectMatchesCpu(shape);
  expectMatchesCpu({"shape", {floats({}, {1.f})}, {}});
}

TEST(CudaDense, GatherMatchesCpuAndRejectsBadIndices) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor data = randomFloats({5, 4, 3}, 1);
  for (int64_t axis : {int64_t(0), int64_t(1), int64_t(-1)})
    for (DType idt : {DType::kInt32, DType::kInt64}) {
      int64_t dim = data.dim(int(axis < 0 ? axis + 3 : axis));
      Case g{"gather", {data, randomInts({2, 3}, 2, -dim, dim - 1, idt)}, {}};
      g.attrs.set("axis", axis);
      expectMatchesCpu(g);
      Case e{"gather_elements",
             {data, randomInts({3, 2, 2}, 3, -dim, dim - 1, idt)},
             {}};
      e.attrs.set("axis", axis);
      expectMatchesCpu(e);
    }
  expectMatchesCpu({"gather", {data, int64s({0}, {})}, {}});
  expectMatchesCpu(
      {"gather", {randomInts({6}, 4, 0, 100), int64s({}, {-1})}, {}});
  // Out of range: OutOfRange naming the index, like the CPU.
  CudaKernelRunner gpu;
  gpu.addInput(data).addInput(int64s({3}, {0, 5, 1}));
  Status s = gpu.run("gather");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.toString();
  EXPECT_NE(s.message().find("5"), std::string::npos) << s.toString();
  expectSameError({"gather_elements", {data, int64s({1, 1, 1}, {-6})}, {}});
  expectSameError({"gather", {data, floats({1}, {0.f})}, {}});
}

//===----------------------------------------------------------------------===//
// softmax, layer_norm
//===----------------------------------------------------------------------===//

TEST(CudaDense, SoftmaxMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  uint32_t seed = 80;
  for (const Shape &shape : {Shape{1, 1}, Shape{64, 27}, Shape{3, 1000},
                             Shape{4, 3, 5}, Shape{2, 0, 3}, Shape{7}})
    for (int axis = -shape.rank(); axis < shape.rank(); ++axis) {
      Tensor x = randomFloats(shape, seed++, -40.f, 40.f);
      if (x.numel() > 2)
        x.data<float>()[1] = -std::numeric_limits<float>::infinity();
      Case c{"softmax", {x}, {}};
      c.attrs.set("axis", int64_t(axis));
      expectMatchesCpu(c);
    }
  float inf = std::numeric_limits<float>::infinity();
  expectMatchesCpu({"softmax", {floats({2, 2}, {-inf, -inf, 1.f, 2.f})}, {}});
}

TEST(CudaDense, LayerNormMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  uint32_t seed = 90;
  const struct {
    Shape shape;
    int64_t axis;
  } cases[] = {{{8, 64}, -1},   {{2, 3, 70}, -1}, {{2, 3, 5}, 1}, {{1, 1}, -1},
               {{4, 4096}, -1}, {{0, 8}, -1},     {{5, 0}, -1}};
  for (const auto &c : cases) {
    int axis = int(c.axis < 0 ? c.axis + c.shape.rank() : c.axis);
    int64_t d = 1;
    for (int i = axis; i < c.shape.rank(); ++i)
      d *= c.shape[i];
    Tensor x = randomFloats(c.shape, seed++, 95.f, 105.f);
    Case plain{"layer_norm", {x}, {}};
    plain.attrs.set("axis", c.axis);
    expectMatchesCpu(plain);
    Case affine{"layer_norm",
                {x, randomFloats({d}, seed++), randomFloats({d}, seed++)},
                {}};
    affine.attrs.set("axis", c.axis);
    affine.attrs.set("epsilon", 1e-3);
    expectMatchesCpu(affine);
  }
  expectSameError(
      {"layer_norm", {randomFloats({2, 4}, 1), randomFloats({3}, 2)}, {}});
}

TEST(CudaDense, ReductionsMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  uint32_t seed = 100;
  const struct {
    Shape shape;
    std::vector<int64_t> axes;
  } cases[] = {{{4, 5}, {1}},   {{4, 5}, {0}},    {{2, 3, 4}, {0, 2}},
               {{2, 3, 4}, {}}, {{1000, 3}, {0}}, {{3, 1, 7}, {-1, 1}},
               {{0, 3}, {1}},   {{3, 0}, {1}},    {{100000}, {}}};
  for (const auto &c : cases)
    for (const char *op : {"reduce_sum", "reduce_max"})
      for (int64_t keep : {int64_t(0), int64_t(1)}) {
        Case k{op, {randomFloats(c.shape, seed++)}, {}};
        k.attrs.set("axes", c.axes);
        k.attrs.set("keepdims", keep);
        bool emptyExtent = false;
        for (int64_t a : c.axes)
          emptyExtent =
              emptyExtent || c.shape[int(a < 0 ? a + c.shape.rank() : a)] == 0;
        if (std::string(op) == "reduce_max" && emptyExtent)
          expectSameError(k);
        else
          expectMatchesCpu(k);
      }
}

} // namespace
