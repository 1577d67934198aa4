//===- jagged_test.cpp - The CUDA jagged/KJT kernels vs the CPU backend ---===//
//
// Every CUDA jagged and KJT kernel through CudaKernelRunner against the CPU
// kernel of the same name on random data (the CPU tests' edge cases: empty
// KJTs, zero-length bags, batch 1, many keys; and sizes that take many
// blocks), and the error paths: bad lengths/offsets/ids found on the device
// come back as a Status naming them. Skips without a GPU.
//
//===----------------------------------------------------------------------===//
#include "cuda_kernel_runner.h"

#include "../runtime/kjt_test_support.h"
#include "../runtime/support/test_kernel_context.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

using namespace ember;
using namespace ember::testing;

namespace {

/// One kernel invocation: host inputs (undefined = absent), outputs, attrs.
struct Call {
  std::vector<Tensor> inputs;
  int numOutputs = 1;
  Attributes attrs;

  Call &add(Tensor t) {
    inputs.push_back(std::move(t));
    return *this;
  }
  Call &addKjt(const TestKjt &k, DType vt, DType lt) {
    add(indexTensor(k.values, vt)).add(indexTensor(k.lengths, lt));
    return add(k.isWeighted() ? floatTensor(k.weights) : Tensor());
  }
  Call &outputs(int n) {
    numOutputs = n;
    return *this;
  }
  Call &attr(const char *name, Attributes::Value value) {
    attrs.set(name, std::move(value));
    return *this;
  }
};

void expectSameTensor(const Tensor &got, const Tensor &want,
                      const std::string &what) {
  ASSERT_EQ(got.defined(), want.defined()) << what;
  if (!want.defined())
    return;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0) << what;
}

Status runCpu(const std::string &kernel, const Call &call,
              TestKernelContext &ctx) {
  for (const Tensor &t : call.inputs)
    ctx.addInput(t);
  ctx.setNumOutputs(call.numOutputs);
  ctx.attrs() = call.attrs;
  return runKernel(kernel, ctx);
}

Status runGpu(const std::string &kernel, const Call &call,
              CudaKernelRunner &gpu) {
  for (const Tensor &t : call.inputs)
    gpu.addInput(t);
  gpu.setNumOutputs(call.numOutputs);
  gpu.attrs() = call.attrs;
  return gpu.run(kernel);
}

/// Runs the kernel on both backends and compares every output byte.
void expectGpuMatchesCpu(const std::string &kernel, const Call &call,
                         const std::string &what) {
  TestKernelContext cpu;
  Status cs = runCpu(kernel, call, cpu);
  ASSERT_TRUE(cs.isOk()) << what << ": " << cs.toString();
  CudaKernelRunner gpu;
  Status gs = runGpu(kernel, call, gpu);
  ASSERT_TRUE(gs.isOk()) << what << ": " << gs.toString();
  for (int i = 0; i < call.numOutputs; ++i)
    expectSameTensor(gpu.output(i), cpu.output(i),
                     what + ", output " + std::to_string(i));
}

/// Runs the kernel on the GPU, expecting an error that contains `message`;
/// the CPU kernel must refuse the same input.
void expectGpuError(const std::string &kernel, const Call &call,
                    const std::string &message, StatusCode code) {
  CudaKernelRunner gpu;
  Status s = runGpu(kernel, call, gpu);
  ASSERT_FALSE(s.isOk()) << kernel << " accepted bad input (" << message << ")";
  EXPECT_EQ(s.code(), code) << s.toString();
  EXPECT_NE(s.message().find(message), std::string::npos) << s.toString();
  TestKernelContext cpu;
  EXPECT_FALSE(runCpu(kernel, call, cpu).isOk()) << message;
}

Tensor randomBytes(DType dtype, std::vector<int64_t> dims, std::mt19937 &gen) {
  Shape shape = *Shape::fromDims(dims.data(), dims.size());
  Tensor t = *Tensor::allocate(dtype, shape);
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t i = 0; i < t.nbytes(); ++i)
    t.data<uint8_t>()[i] = static_cast<uint8_t>(byte(gen));
  return t;
}

/// KJT shapes: (keys, batch, max length) incl. the edge cases.
struct KjtShape {
  int64_t keys, batch, maxLength;
};
const std::vector<KjtShape> &kjtShapes() {
  static const std::vector<KjtShape> shapes = {
      {1, 1, 4}, {3, 1, 5},  {4, 5, 6},     {2, 3, 0},
      {3, 0, 3}, {64, 3, 4}, {26, 2048, 3}, {2, 40000, 2}};
  return shapes;
}

std::string shapeName(const KjtShape &s) {
  return "keys " + std::to_string(s.keys) + " batch " +
         std::to_string(s.batch) + " max length " + std::to_string(s.maxLength);
}

//===----------------------------------------------------------------------===//
// lengths_to_offsets, jagged_to_padded, padded_to_jagged
//===----------------------------------------------------------------------===//

TEST(CudaJagged, LengthsToOffsetsMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 gen(1);
  for (DType dt : {DType::kInt32, DType::kInt64})
    for (int64_t k : {0, 1, 17, 1000, 300000}) {
      Call call;
      call.add(indexTensor(randomLengths(k, 9, gen), dt));
      expectGpuMatchesCpu("lengths_to_offsets", call, "k " + std::to_string(k));
    }
}

TEST(CudaJagged, LengthsToOffsetsErrors) {
  EMBER_SKIP_WITHOUT_GPU();
  expectGpuError("lengths_to_offsets",
                 Call().add(indexTensor({1, 2, -1, 3}, DType::kInt32)),
                 "length -1 at position 2 is negative",
                 StatusCode::kInvalidArgument);
  expectGpuError("lengths_to_offsets", Call().add(floatTensor({1, 2})),
                 "must be int32 or int64", StatusCode::kInvalidArgument);
}

TEST(CudaJagged, JaggedToPaddedMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 gen(2);
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                      DType::kInt64, DType::kInt8})
    for (std::vector<int64_t> trailing :
         {std::vector<int64_t>{}, std::vector<int64_t>{3},
          std::vector<int64_t>{2, 5}})
      for (int64_t B : {0, 1, 6, 3000})
        for (int64_t L : {0, 3, 9})
          for (DType ot : {DType::kInt32, DType::kInt64}) {
            std::vector<int64_t> offsets = offsetsOf(randomLengths(B, 6, gen));
            std::vector<int64_t> dims = {offsets.back()};
            dims.insert(dims.end(), trailing.begin(), trailing.end());
            Call call;
            call.add(randomBytes(dtype, dims, gen))
                .add(indexTensor(offsets, ot));
            call.attrs.set("max_length", L).set("padding_value", -1.5);
            expectGpuMatchesCpu("jagged_to_padded", call,
                                std::string(dtypeName(dtype)) + " B " +
                                    std::to_string(B) + " L " +
                                    std::to_string(L));
          }
}

TEST(CudaJagged, PaddedToJaggedMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 gen(3);
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt32})
    for (std::vector<int64_t> trailing :
         {std::vector<int64_t>{}, std::vector<int64_t>{4}})
      for (int64_t B : {0, 1, 7, 3000})
        for (int64_t L : {0, 1, 5}) {
          std::vector<int64_t> dims = {B, L};
          dims.insert(dims.end(), trailing.begin(), trailing.end());
          Call call;
          call.add(randomBytes(dtype, dims, gen))
              .add(indexTensor(offsetsOf(randomLengths(B, L, gen)),
                               DType::kInt64));
          expectGpuMatchesCpu("padded_to_jagged", call,
                              "B " + std::to_string(B) + " L " +
                                  std::to_string(L));
        }
}

TEST(CudaJagged, PaddingErrors) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 gen(4);
  auto toPadded = [&](std::vector<int64_t> offsets) {
    return Call()
        .add(randomBytes(DType::kFloat32, {6, 2}, gen))
        .add(indexTensor(offsets, DType::kInt64))
        .attr("max_length", int64_t{4});
  };
  expectGpuError("jagged_to_padded", toPadded({1, 2, 6}),
                 "offsets[0] must be 0, got 1", StatusCode::kInvalidArgument);
  expectGpuError("jagged_to_padded", toPadded({0, 4, 2, 6}),
                 "offsets[2] = 2 is below offsets[1] = 4",
                 StatusCode::kInvalidArgument);
  expectGpuError("jagged_to_padded", toPadded({0, 3, 9}),
                 "offsets[2] = 9 is outside [0, 6]", StatusCode::kOutOfRange);
  auto toJagged = [&](std::vector<int64_t> offsets) {
    return Call()
        .add(randomBytes(DType::kFloat32, {2, 3}, gen))
        .add(indexTensor(offsets, DType::kInt32));
  };
  expectGpuError("padded_to_jagged", toJagged({0, 2, 6}),
                 "segment 1 has length 4, more than the limit 3",
                 StatusCode::kInvalidArgument);
  expectGpuError("padded_to_jagged", toJagged({0, 2}), "expected B + 1",
                 StatusCode::kInvalidArgument);
}

//===----------------------------------------------------------------------===//
// KJT kernels
//===----------------------------------------------------------------------===//

TEST(CudaKjt, PermuteMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 gen(5);
  for (const KjtShape &sh : kjtShapes())
    for (bool weighted : {false, true})
      for (DType lt : {DType::kInt32, DType::kInt64}) {
        TestKjt in = randomKjt(sh.keys, sh.batch, weighted, gen, sh.maxLength);
        std::vector<int64_t> full(sh.keys);
        std::iota(full.begin(), full.end(), 0);
        std::shuffle(full.begin(), full.end(), gen);
        std::uniform_int_distribution<int64_t> key(0, sh.keys - 1);
        std::vector<int64_t> mixed;
        for (int64_t i = 0; i < sh.keys + 2; ++i)
          mixed.push_back(key(gen));
        for (const auto &perm : {full, mixed, std::vector<int64_t>{}}) {
          Call call = Call()
                          .addKjt(in, DType::kInt64, lt)
                          .outputs(3)
                          .attr("permutation", perm)
                          .attr("num_keys", sh.keys);
          expectGpuMatchesCpu("kjt_permute", call,
                              shapeName(sh) + " P " +
                                  std::to_string(perm.size()));
        }
      }
}

TEST(CudaKjt, PermuteErrors) {
  EMBER_SKIP_WITHOUT_GPU();
  TestKjt bad;
  bad.keys = 2;
  bad.batch = 2;
  bad.lengths = {1, 2, 0, 1};
  bad.values = {1, 2, 3};
  for (std::vector<int64_t> perm :
       {std::vector<int64_t>{1, 0}, std::vector<int64_t>{1, 1, 0}}) {
    expectGpuError("kjt_permute",
                   Call()
                       .addKjt(bad, DType::kInt64, DType::kInt64)
                       .outputs(3)
                       .attr("permutation", perm)
                       .attr("num_keys", int64_t{2}),
                   "the lengths sum to 4 but there are 3 values",
                   StatusCode::kInvalidArgument);
  }
  bad.values.push_back(4);
  bad.lengths[1] = -2;
  bad.lengths[3] = 5;
  expectGpuError("kjt_permute",
                 Call()
                     .addKjt(bad, DType::kInt64, DType::kInt32)
                     .outputs(3)
                     .attr("permutation", std::vector<int64_t>{1, 0})
                     .attr("num_keys", int64_t{2}),
                 "length -2 at position 1 is negative",
                 StatusCode::kInvalidArgument);
  std::mt19937 gen(1);
  expectGpuError(
      "kjt_permute",
      Call()
          .addKjt(randomKjt(2, 3, false, gen), DType::kInt64, DType::kInt64)
          .outputs(3)
          .attr("permutation", std::vector<int64_t>{0, 2})
          .attr("batch_size", int64_t{3}),
      "permutation[1] = 2 but the input has 2 keys",
      StatusCode::kInvalidArgument);
}

TEST(CudaKjt, SplitMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 gen(6);
  for (const KjtShape &sh : kjtShapes())
    for (bool weighted : {false, true}) {
      TestKjt in = randomKjt(sh.keys, sh.batch, weighted, gen, sh.maxLength);
      std::vector<std::vector<int64_t>> splits = {{sh.keys}};
      if (sh.keys >= 3)
        splits.push_back({1, 0, sh.keys - 1});
      if (sh.keys >= 2)
        splits.push_back({sh.keys - 1, 1});
      for (const auto &counts : splits) {
        Call call = Call()
                        .addKjt(in, DType::kInt32, DType::kInt64)
                        .outputs(3 * static_cast<int>(counts.size()))
                        .attr("key_counts", counts);
        expectGpuMatchesCpu("kjt_split", call,
                            shapeName(sh) + " parts " +
                                std::to_string(counts.size()));
      }
    }
}

TEST(CudaKjt, SplitErrors) {
  EMBER_SKIP_WITHOUT_GPU();
  TestKjt bad;
  bad.keys = 2;
  bad.batch = 1;
  bad.lengths = {3, 2};
  bad.values = {1, 2, 3, 4};
  // One part (no read-back: the error comes with the run's record) and two
  // parts (the read-back of the part sizes returns it).
  for (std::vector<int64_t> counts :
       {std::vector<int64_t>{2}, std::vector<int64_t>{1, 1}}) {
    expectGpuError("kjt_split",
                   Call()
                       .addKjt(bad, DType::kInt64, DType::kInt64)
                       .outputs(3 * static_cast<int>(counts.size()))
                       .attr("key_counts", counts),
                   "the lengths sum to 5 but there are 4 values",
                   StatusCode::kInvalidArgument);
  }
}

TEST(CudaKjt, ConcatMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 gen(7);
  for (int64_t B : {0, 1, 4, 5000})
    for (bool weighted : {false, true})
      for (bool byKeyCounts : {false, true}) {
        std::vector<int64_t> keys = {2, 0, 3};
        if (!byKeyCounts)
          keys = {2, 1, 3};
        Call call;
        for (int64_t k : keys)
          call.addKjt(randomKjt(k, B, weighted, gen), DType::kInt64,
                      DType::kInt32);
        call.outputs(3).attr("num_inputs", int64_t{3});
        if (byKeyCounts)
          call.attr("key_counts", keys);
        else
          call.attr("batch_size", B);
        expectGpuMatchesCpu("kjt_concat", call,
                            "B " + std::to_string(B) +
                                (byKeyCounts ? " key_counts" : ""));
      }
}

TEST(CudaKjt, ConcatErrors) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 gen(8);
  TestKjt good = randomKjt(2, 3, false, gen);
  TestKjt bad = randomKjt(1, 3, false, gen);
  bad.values.push_back(1);
  auto concat = [&](const TestKjt &second) {
    return Call()
        .addKjt(good, DType::kInt64, DType::kInt64)
        .addKjt(second, DType::kInt64, DType::kInt64)
        .outputs(3)
        .attr("num_inputs", int64_t{2})
        .attr("batch_size", int64_t{3});
  };
  expectGpuError("kjt_concat", concat(bad),
                 "but there are " + std::to_string(bad.values.size()) +
                     " values",
                 StatusCode::kInvalidArgument);
  expectGpuError("kjt_concat", concat(randomKjt(1, 3, true, gen)),
                 "cannot concatenate weighted and unweighted KJTs",
                 StatusCode::kInvalidArgument);
}

TEST(CudaKjt, BucketizeMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 gen(9);
  for (const KjtShape &sh : kjtShapes())
    for (bool weighted : {false, true})
      for (DType vt : {DType::kInt32, DType::kInt64})
        for (int64_t buckets : {1, 2, 7}) {
          TestKjt in =
              randomKjt(sh.keys, sh.batch, weighted, gen, sh.maxLength, 150);
          std::uniform_int_distribution<int> pick(0, 9);
          for (auto &id : in.values) { // negative and past block * buckets
            int p = pick(gen);
            if (p == 0)
              id = -id - 1;
            else if (p == 1)
              id += 100000;
          }
          std::vector<int64_t> blocks(sh.keys);
          std::uniform_int_distribution<int64_t> block(0, 40);
          for (auto &b : blocks)
            b = block(gen);
          Call call = Call()
                          .addKjt(in, vt, DType::kInt32)
                          .outputs(4)
                          .attr("block_sizes", blocks)
                          .attr("num_buckets", buckets);
          expectGpuMatchesCpu("kjt_bucketize", call,
                              shapeName(sh) + " buckets " +
                                  std::to_string(buckets));
        }
}

TEST(CudaKjt, BucketizeErrors) {
  EMBER_SKIP_WITHOUT_GPU();
  TestKjt bad;
  bad.keys = 2;
  bad.batch = 1;
  bad.lengths = {2, 5};
  bad.values = {1, 2, 3};
  expectGpuError("kjt_bucketize",
                 Call()
                     .addKjt(bad, DType::kInt64, DType::kInt64)
                     .outputs(4)
                     .attr("block_sizes", std::vector<int64_t>{2, 2})
                     .attr("num_buckets", int64_t{2}),
                 "the lengths sum to 7 but there are 3 values",
                 StatusCode::kInvalidArgument);
}

/// nn.EmbeddingBag (ids, offsets) of one feature.
void addBags(Call &call, int64_t B, bool includeLast, bool weighted,
             DType offsetsType, int64_t rows, std::mt19937 &gen) {
  std::vector<int64_t> offsets = offsetsOf(randomLengths(B, 4, gen));
  const int64_t n = offsets.back();
  const int64_t extra =
      includeLast ? std::uniform_int_distribution<int64_t>(0, 2)(gen) : 0;
  if (!includeLast)
    offsets.pop_back();
  call.add(indexTensor(randomIds(n + extra, rows, gen), DType::kInt64))
      .add(indexTensor(offsets, offsetsType))
      .add(weighted ? floatTensor(randomWeights(n + extra, gen)) : Tensor());
}

TEST(CudaKjt, FromBagsMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 gen(10);
  for (int64_t F : {1, 3, 40})
    for (int64_t B : {0, 1, 5, 3000})
      for (bool weighted : {false, true})
        for (int mode : {0, 1, 2}) { // include_last: none, all, mixed
          Call call;
          std::vector<int64_t> includeLast;
          for (int64_t f = 0; f < F; ++f) {
            bool il = mode == 1 || (mode == 2 && f % 2 == 1);
            addBags(call, B, il, weighted,
                    f % 2 ? DType::kInt32 : DType::kInt64, 50, gen);
            includeLast.push_back(il);
          }
          call.outputs(3)
              .attr("include_last_offset", includeLast)
              .attr("num_rows", std::vector<int64_t>(F, 50))
              .attr("lengths_dtype", std::string(B % 2 ? "int32" : "int64"));
          expectGpuMatchesCpu("kjt_from_bags", call,
                              "F " + std::to_string(F) + " B " +
                                  std::to_string(B) + " mode " +
                                  std::to_string(mode));
        }
}

TEST(CudaKjt, FromBagsChecksOnlyIdsInBags) {
  EMBER_SKIP_WITHOUT_GPU();
  // No bags, and ids past the last offset: not part of the KJT, not checked.
  for (bool includeLast : {false, true}) {
    Call call =
        Call()
            .add(indexTensor({3, 99}, DType::kInt64))
            .add(indexTensor(includeLast ? std::vector<int64_t>{0, 1}
                                         : std::vector<int64_t>{},
                             DType::kInt32))
            .add(Tensor())
            .outputs(3)
            .attr("include_last_offset", std::vector<int64_t>{includeLast})
            .attr("num_rows", std::vector<int64_t>{10});
    expectGpuMatchesCpu("kjt_from_bags", call,
                        includeLast ? "past the last offset" : "no bags");
  }
}

TEST(CudaKjt, FromBagsErrors) {
  EMBER_SKIP_WITHOUT_GPU();
  Call badId = Call()
                   .add(indexTensor({1, 2, 3}, DType::kInt64))
                   .add(indexTensor({0, 1}, DType::kInt64))
                   .add(Tensor())
                   .add(indexTensor({4, 9, 5}, DType::kInt64))
                   .add(indexTensor({0, 1}, DType::kInt32))
                   .add(Tensor())
                   .outputs(3)
                   .attr("include_last_offset", std::vector<int64_t>{0, 0})
                   .attr("num_rows", std::vector<int64_t>{10, 8});
  expectGpuError("kjt_from_bags", badId,
                 "feature 1: id 9 at position 1 (sample 1) is outside the "
                 "table's 8 rows",
                 StatusCode::kOutOfRange);
  // The same with include_last_offset: found before the read-back.
  Call badIdLast = Call()
                       .add(indexTensor({0, -3, 77}, DType::kInt32))
                       .add(indexTensor({0, 1, 2}, DType::kInt64))
                       .add(Tensor())
                       .outputs(3)
                       .attr("include_last_offset", std::vector<int64_t>{1})
                       .attr("num_rows", std::vector<int64_t>{10});
  expectGpuError("kjt_from_bags", badIdLast,
                 "feature 0: id -3 at position 1 (sample 1)",
                 StatusCode::kOutOfRange);
  struct Case {
    std::vector<int64_t> offsets;
    int64_t includeLast;
    std::string message;
  };
  for (const Case &c :
       {Case{{1, 2}, 0, "feature 0: offsets[0] must be 0, got 1"},
        Case{{0, 3, 2}, 0, "feature 0: offsets decrease at bag 1"},
        Case{{0, 2, 9},
             1,
             "feature 0: offsets[2] = 9 (end of bag 1) is past the 4 indices"},
        Case{{0, 5},
             0,
             "feature 0: offsets[1] = 5 (end of bag 0) is past the 4 "
             "indices"}}) {
    Call call =
        Call()
            .add(indexTensor({1, 2, 3, 4}, DType::kInt64))
            .add(indexTensor(c.offsets, DType::kInt64))
            .add(Tensor())
            .outputs(3)
            .attr("include_last_offset", std::vector<int64_t>{c.includeLast});
    expectGpuError("kjt_from_bags", call, c.message,
                   StatusCode::kInvalidArgument);
  }
}

} // namespace
