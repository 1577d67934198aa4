//===- kjt_bucketize_test.cpp - kjt_bucketize vs FBGEMM's semantics -------===//
#include "kjt_test_support.h"
#include "support/test_kernel_context.h"

#include <gtest/gtest.h>

using namespace ember;
using namespace ember::testing;

namespace {

/// FBGEMM block_bucketize_sparse_features for one id (uniform blocks):
/// ids below block * buckets go to bucket id / block with local id
/// id % block; others (and negative ids, seen as unsigned) go to bucket
/// u % buckets with local id u / buckets.
template <typename U>
std::pair<int64_t, int64_t> fbgemmBucket(int64_t id, int64_t block,
                                         int64_t buckets) {
  U u = static_cast<U>(id);
  U ub = static_cast<U>(block) * static_cast<U>(buckets);
  if (block > 0 && u < ub)
    return {static_cast<int64_t>(u / block), static_cast<int64_t>(u % block)};
  return {static_cast<int64_t>(u % buckets), static_cast<int64_t>(u / buckets)};
}

struct Bucketized {
  std::vector<int64_t> values, lengths, permute;
  std::vector<float> weights;
};

/// Reference written bucket by bucket: for each (bucket, feature, sample),
/// scan the input segment in order and keep the ids of that bucket.
Bucketized reference(const TestKjt &in, const std::vector<int64_t> &blocks,
                     int64_t buckets, bool ids32) {
  Bucketized r;
  r.permute.assign(in.values.size(), -1);
  auto offsets = in.offsets();
  for (int64_t p = 0; p < buckets; ++p)
    for (int64_t f = 0; f < in.keys; ++f)
      for (int64_t b = 0; b < in.batch; ++b) {
        int64_t s = f * in.batch + b, count = 0;
        for (int64_t i = offsets[s]; i < offsets[s + 1]; ++i) {
          auto [bucket, local] =
              ids32 ? fbgemmBucket<uint32_t>(in.values[i], blocks[f], buckets)
                    : fbgemmBucket<uint64_t>(in.values[i], blocks[f], buckets);
          if (bucket != p)
            continue;
          r.permute[i] = static_cast<int64_t>(r.values.size());
          r.values.push_back(ids32 ? static_cast<int32_t>(local) : local);
          if (!in.weights.empty())
            r.weights.push_back(in.weights[i]);
          ++count;
        }
        r.lengths.push_back(count);
      }
  return r;
}

TEST(KjtBucketize, MatchesFbgemmSemantics) {
  std::mt19937 gen(11);
  for (bool weighted : {false, true})
    for (DType vt : {DType::kInt32, DType::kInt64})
      for (DType lt : {DType::kInt32, DType::kInt64})
        for (int64_t buckets : {1, 2, 4})
          for (int64_t B : {1, 3}) {
            const std::vector<int64_t> blocks = {10, 25, 0};
            TestKjt in = randomKjt(3, B, weighted, gen, 6, 120);
            // Ids past block * buckets and negative ids take the cyclic path.
            if (!in.values.empty())
              in.values[0] = -7;
            if (in.values.size() > 2)
              in.values[2] = 1000;
            TestKernelContext ctx;
            addKjtInputs(ctx, in, vt, lt);
            ctx.setNumOutputs(4);
            ctx.attrs().set("block_sizes", blocks).set("num_buckets", buckets);
            Status s = runKernel("kjt_bucketize", ctx);
            ASSERT_TRUE(s.isOk()) << s.toString();
            Bucketized want =
                reference(in, blocks, buckets, vt == DType::kInt32);
            std::string what = "buckets " + std::to_string(buckets) + " B " +
                               std::to_string(B) + " " +
                               std::string(dtypeName(vt));
            EXPECT_EQ(ctx.output(0).dtype(), vt);
            EXPECT_EQ(ctx.output(1).dtype(), lt);
            EXPECT_EQ(ctx.output(3).dtype(), DType::kInt64);
            EXPECT_EQ(toVector(ctx.output(0)), want.values) << what;
            EXPECT_EQ(toVector(ctx.output(1)), want.lengths) << what;
            EXPECT_EQ(toVector(ctx.output(3)), want.permute) << what;
            ASSERT_EQ(ctx.output(2).defined(), weighted);
            if (weighted) {
              EXPECT_EQ(toFloats(ctx.output(2)), want.weights) << what;
            }
          }
}

TEST(KjtBucketize, KnownExample) {
  // 2 features, batch 2, block sizes 4 and 3, 2 buckets.
  TestKjt in;
  in.keys = 2;
  in.batch = 2;
  in.lengths = {2, 1, 3, 0};
  in.values = {5, 1, 7, 2, 4, 9};
  // f0 b0: 5 -> (1, 1), 1 -> (0, 1); f0 b1: 7 -> (1, 3);
  // f1 b0: 2 -> (0, 2), 4 -> (1, 1), 9 (>= 6) -> (1, 4); f1 b1: empty.
  TestKernelContext ctx;
  addKjtInputs(ctx, in, DType::kInt64, DType::kInt64);
  ctx.setNumOutputs(4);
  ctx.attrs()
      .set("block_sizes", std::vector<int64_t>{4, 3})
      .set("num_buckets", int64_t{2});
  ASSERT_TRUE(runKernel("kjt_bucketize", ctx).isOk());
  EXPECT_EQ(toVector(ctx.output(1)),
            (std::vector<int64_t>{1, 0, 1, 0, 1, 1, 2, 0}));
  EXPECT_EQ(toVector(ctx.output(0)), (std::vector<int64_t>{1, 2, 1, 3, 1, 4}));
  EXPECT_EQ(toVector(ctx.output(3)), (std::vector<int64_t>{2, 0, 3, 1, 4, 5}));
  EXPECT_FALSE(ctx.output(2).defined());
}

TEST(KjtBucketize, EmptyAndErrors) {
  TestKjt empty;
  empty.keys = 2;
  empty.batch = 3;
  empty.lengths.assign(6, 0);
  TestKernelContext ctx;
  addKjtInputs(ctx, empty, DType::kInt64, DType::kInt32);
  ctx.setNumOutputs(4);
  ctx.attrs()
      .set("block_sizes", std::vector<int64_t>{4, 3})
      .set("num_buckets", int64_t{3});
  ASSERT_TRUE(runKernel("kjt_bucketize", ctx).isOk());
  EXPECT_EQ(ctx.output(1).numel(), 18);
  EXPECT_EQ(ctx.output(0).numel(), 0);

  auto error = [&](const std::function<void(TestKernelContext &)> &setUp) {
    TestKernelContext c;
    setUp(c);
    Status s = runKernel("kjt_bucketize", c);
    EXPECT_FALSE(s.isOk());
    return s.message();
  };
  std::mt19937 gen(1);
  TestKjt in = randomKjt(2, 4, false, gen); // 8 lengths
  EXPECT_NE(error([&](TestKernelContext &c) {
              addKjtInputs(c, in, DType::kInt64, DType::kInt64);
              c.setNumOutputs(4);
              c.attrs()
                  .set("block_sizes", std::vector<int64_t>{4, 3})
                  .set("num_buckets", int64_t{0});
            }).find("'num_buckets' must be >= 1"),
            std::string::npos);
  EXPECT_NE(error([&](TestKernelContext &c) {
              addKjtInputs(c, in, DType::kInt64, DType::kInt64);
              c.setNumOutputs(4);
              c.attrs()
                  .set("block_sizes", std::vector<int64_t>{4, 3, 2})
                  .set("num_buckets", int64_t{2});
            }).find("not a multiple of its 3 keys"),
            std::string::npos);
  EXPECT_NE(error([&](TestKernelContext &c) {
              c.addInput(
                   floatTensor(std::vector<float>(in.values.size(), 1.0f)))
                  .addInput(indexTensor(in.lengths, DType::kInt64))
                  .addAbsentInput();
              c.setNumOutputs(4);
              c.attrs()
                  .set("block_sizes", std::vector<int64_t>{4, 3})
                  .set("num_buckets", int64_t{2});
            }).find("must be int32 or int64 ids"),
            std::string::npos);
  EXPECT_NE(error([&](TestKernelContext &c) {
              addKjtInputs(c, in, DType::kInt64, DType::kInt64);
              c.setNumOutputs(4);
              c.attrs()
                  .set("block_sizes", std::vector<int64_t>{4, -3})
                  .set("num_buckets", int64_t{2});
            }).find("block_sizes[1] is negative"),
            std::string::npos);
}

} // namespace
