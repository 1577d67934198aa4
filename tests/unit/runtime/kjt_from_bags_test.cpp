//===- kjt_from_bags_test.cpp - kjt_from_bags vs a naive reference --------===//
#include "kjt_test_support.h"
#include "support/test_kernel_context.h"

#include <gtest/gtest.h>

using namespace ember;
using namespace ember::testing;

namespace {

/// One nn.EmbeddingBag input: ids, offsets (B or B + 1 entries), weights.
struct Bags {
  std::vector<int64_t> ids, offsets;
  std::vector<float> weights;
  bool includeLast = false;
  bool weighted = false; // weights given (possibly empty)
};

Bags randomBags(int64_t B, bool includeLast, bool weighted, std::mt19937 &gen) {
  Bags bags;
  bags.includeLast = includeLast;
  std::vector<int64_t> lengths = randomLengths(B, 4, gen); // has empty bags
  std::vector<int64_t> offsets = offsetsOf(lengths);
  bags.ids = randomIds(offsets.back(), 100, gen);
  bags.weighted = weighted;
  if (weighted)
    bags.weights = randomWeights(bags.ids.size(), gen);
  bags.offsets.assign(offsets.begin(), offsets.end() - (includeLast ? 0 : 1));
  if (B == 0 && !includeLast)
    bags.offsets.clear();
  return bags;
}

/// The naive KJT: lengths from the offsets, values and weights concatenated.
TestKjt reference(const std::vector<Bags> &features, int64_t B) {
  TestKjt kjt;
  kjt.keys = static_cast<int64_t>(features.size());
  kjt.batch = B;
  for (const Bags &f : features) {
    for (int64_t b = 0; b < B; ++b) {
      int64_t end = b + 1 < static_cast<int64_t>(f.offsets.size())
                        ? f.offsets[b + 1]
                        : static_cast<int64_t>(f.ids.size());
      kjt.lengths.push_back(end - f.offsets[b]);
    }
    kjt.values.insert(kjt.values.end(), f.ids.begin(), f.ids.end());
    kjt.weights.insert(kjt.weights.end(), f.weights.begin(), f.weights.end());
  }
  return kjt;
}

void addBags(TestKernelContext &ctx, const std::vector<Bags> &features,
             DType idType, DType offsetType) {
  std::vector<int64_t> includeLast;
  for (const Bags &f : features) {
    ctx.addInput(indexTensor(f.ids, idType))
        .addInput(indexTensor(f.offsets, offsetType));
    if (f.weighted)
      ctx.addInput(floatTensor(f.weights));
    else
      ctx.addAbsentInput();
    includeLast.push_back(f.includeLast ? 1 : 0);
  }
  ctx.attrs().set("include_last_offset", includeLast);
  ctx.setNumOutputs(3);
}

TEST(KjtFromBags, MatchesReference) {
  std::mt19937 gen(7);
  for (int64_t F : {1, 3})
    for (int64_t B : {0, 1, 6})
      for (bool weighted : {false, true})
        for (DType idType : {DType::kInt32, DType::kInt64})
          for (DType lengthType : {DType::kInt32, DType::kInt64}) {
            std::vector<Bags> features;
            for (int64_t f = 0; f < F; ++f)
              features.push_back(randomBags(B, f % 2 == 1, weighted, gen));
            TestKernelContext ctx;
            addBags(ctx, features, idType, DType::kInt64);
            ctx.attrs().set(
                "lengths_dtype",
                std::string(lengthType == DType::kInt32 ? "int32" : "int64"));
            Status s = runKernel("kjt_from_bags", ctx);
            ASSERT_TRUE(s.isOk()) << s.toString();
            EXPECT_EQ(ctx.output(0).dtype(), idType);
            EXPECT_EQ(ctx.output(1).dtype(), lengthType);
            EXPECT_EQ(ctx.output(2).defined(), weighted);
            TestKjt got = outputKjt(ctx, 0, F);
            TestKjt want = reference(features, B);
            EXPECT_EQ(got.lengths, want.lengths) << "F=" << F << " B=" << B;
            EXPECT_EQ(got.values, want.values) << "F=" << F << " B=" << B;
            EXPECT_EQ(got.weights, want.weights) << "F=" << F << " B=" << B;
          }
}

TEST(KjtFromBags, DropsIdsPastTheLastOffset) {
  // include_last_offset: offsets [0, 2] cover only 2 of the 3 ids.
  TestKernelContext ctx;
  ctx.addInput(indexTensor({5, 6, 7}, DType::kInt64))
      .addInput(indexTensor({0, 2}, DType::kInt64))
      .addAbsentInput();
  ctx.attrs().set("include_last_offset", std::vector<int64_t>{1});
  ctx.setNumOutputs(3);
  ASSERT_TRUE(runKernel("kjt_from_bags", ctx).isOk());
  EXPECT_EQ(toVector(ctx.output(0)), (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(toVector(ctx.output(1)), (std::vector<int64_t>{2}));
}

Status runOn(const std::vector<Bags> &features, DType idType0 = DType::kInt64,
             DType idType1 = DType::kInt64) {
  TestKernelContext ctx;
  std::vector<int64_t> includeLast;
  for (size_t f = 0; f < features.size(); ++f) {
    ctx.addInput(indexTensor(features[f].ids, f == 0 ? idType0 : idType1))
        .addInput(indexTensor(features[f].offsets, DType::kInt64));
    if (features[f].weighted)
      ctx.addInput(floatTensor(features[f].weights));
    else
      ctx.addAbsentInput();
    includeLast.push_back(features[f].includeLast);
  }
  ctx.attrs().set("include_last_offset", includeLast);
  ctx.setNumOutputs(3);
  return runKernel("kjt_from_bags", ctx);
}

TEST(KjtFromBags, Errors) {
  Bags a{{1, 2, 3}, {0, 1}, {}, false, false};
  Bags b{{4}, {0, 1, 1}, {}, false, false}; // 3 bags
  Status s = runOn({a, b});
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("feature 1 has 3 bags but feature 0 has 2"),
            std::string::npos)
      << s.toString();

  Bags decreasing{{1, 2, 3}, {0, 2, 1}, {}, false, false};
  s = runOn({b, decreasing});
  EXPECT_NE(s.message().find("feature 1"), std::string::npos) << s.toString();
  EXPECT_NE(s.message().find("offsets decrease"), std::string::npos)
      << s.toString();

  Bags past{{1}, {0, 5}, {}, false, false};
  s = runOn({past});
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.toString();

  s = runOn({a, a}, DType::kInt64, DType::kInt32);
  EXPECT_NE(s.message().find("feature 1 ids"), std::string::npos)
      << s.toString();

  Bags weighted{{1, 2, 3}, {0, 1}, {0.5f, 1.f, 2.f}, false, true};
  s = runOn({a, weighted});
  EXPECT_NE(s.message().find("feature 1 has weights but feature 0 has none"),
            std::string::npos)
      << s.toString();

  Bags shortWeights{{1, 2, 3}, {0, 1}, {0.5f}, false, true};
  s = runOn({shortWeights});
  EXPECT_FALSE(s.isOk());

  Bags emptyLast{{}, {}, {}, true, false};
  s = runOn({emptyLast});
  EXPECT_NE(s.message().find("include_last_offset needs at least one entry"),
            std::string::npos)
      << s.toString();
}

TEST(KjtFromBags, ChecksIdsAgainstNumRows) {
  auto run = [](std::vector<int64_t> ids, int64_t rows) {
    TestKernelContext ctx;
    ctx.addInput(indexTensor({0, 1}, DType::kInt64))
        .addInput(indexTensor({0, 1}, DType::kInt64))
        .addAbsentInput()
        .addInput(indexTensor(ids, DType::kInt64))
        .addInput(indexTensor({0, 1}, DType::kInt64))
        .addAbsentInput();
    ctx.attrs().set("include_last_offset", std::vector<int64_t>{0, 0});
    ctx.attrs().set("num_rows", std::vector<int64_t>{2, rows});
    ctx.setNumOutputs(3);
    return runKernel("kjt_from_bags", ctx);
  };
  EXPECT_TRUE(run({0, 9}, 10).isOk()); // ids at the table edge
  {
    TestKernelContext ctx;
    ctx.addInput(indexTensor({0, 7}, DType::kInt64))
        .addInput(indexTensor({0}, DType::kInt64))
        .addAbsentInput();
    ctx.attrs().set("include_last_offset", std::vector<int64_t>{0});
    ctx.attrs().set("num_rows", std::vector<int64_t>{5});
    ctx.attrs().set("feature_names",
                    std::vector<std::string>{"/tables.1/Loop"});
    ctx.setNumOutputs(3);
    Status named = runKernel("kjt_from_bags", ctx);
    EXPECT_NE(named.message().find("feature 0 ('/tables.1/Loop'): id 7"),
              std::string::npos)
        << named.toString();
  }
  Status s = run({0, 10}, 10);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.toString();
  EXPECT_NE(s.message().find("feature 1: id 10 at position 1 (sample 1) is "
                             "outside the table's 10 rows"),
            std::string::npos)
      << s.toString();
  s = run({-1, 3}, 10);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.toString();
  EXPECT_NE(s.message().find("id -1 at position 0 (sample 0)"),
            std::string::npos)
      << s.toString();
}

TEST(KjtFromBags, ValidateRejectsBadAttributes) {
  const KernelDef *def = cpuKernels().find("kjt_from_bags");
  ASSERT_NE(def, nullptr);
  // As the plan loader checks them: the contract, then the validate hook.
  auto validate = [def](Attributes attrs, int numInputs, int numOutputs) {
    return prepareKernelAttributes(*def, attrs, numInputs, numOutputs);
  };
  Attributes attrs;
  attrs.set("include_last_offset", std::vector<int64_t>{0, 1});
  EXPECT_FALSE(validate(attrs, 3, 2).isOk()); // 1 feature, 2 flags
  EXPECT_FALSE(validate(attrs, 4, 2).isOk()); // not triples
  EXPECT_TRUE(validate(attrs, 6, 2).isOk());
  attrs.set("include_last_offset", std::vector<int64_t>{0, 2});
  EXPECT_FALSE(validate(attrs, 6, 2).isOk());
  attrs.set("include_last_offset", std::vector<int64_t>{0, 1});
  attrs.set("lengths_dtype", std::string("float32"));
  EXPECT_FALSE(validate(attrs, 6, 2).isOk());
  attrs.set("lengths_dtype", std::string("int32"));
  attrs.set("num_rows", std::vector<int64_t>{5});
  EXPECT_FALSE(validate(attrs, 6, 2).isOk()); // 2 features, 1 entry
  attrs.set("num_rows", std::vector<int64_t>{5, -1});
  EXPECT_FALSE(validate(attrs, 6, 2).isOk());
  attrs.set("num_rows", std::vector<int64_t>{5, 0});
  EXPECT_TRUE(validate(attrs, 6, 2).isOk());
}

} // namespace
