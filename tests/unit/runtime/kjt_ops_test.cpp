//===- kjt_ops_test.cpp - kjt_permute, kjt_split, kjt_concat --------------===//
#include "kjt_test_support.h"
#include "support/test_kernel_context.h"

#include <gtest/gtest.h>

using namespace ember;
using namespace ember::testing;

namespace {

/// Naive permute: output key i = input key perm[i].
TestKjt referencePermute(const TestKjt &in, const std::vector<int64_t> &perm) {
  TestKjt out;
  out.keys = static_cast<int64_t>(perm.size());
  out.batch = in.batch;
  for (int64_t k : perm)
    for (int64_t b = 0; b < in.batch; ++b) {
      auto seg = in.segment(k, b);
      out.lengths.push_back(static_cast<int64_t>(seg.size()));
      out.values.insert(out.values.end(), seg.begin(), seg.end());
      if (!in.weights.empty()) {
        auto w = in.weightSegment(k, b);
        out.weights.insert(out.weights.end(), w.begin(), w.end());
      }
    }
  return out;
}

void expectKjtEq(const TestKjt &got, const TestKjt &want,
                 const std::string &what) {
  EXPECT_EQ(got.lengths, want.lengths) << what;
  EXPECT_EQ(got.values, want.values) << what;
  EXPECT_EQ(got.weights, want.weights) << what;
}

TEST(KjtPermute, MatchesReference) {
  std::mt19937 gen(1);
  const std::vector<std::vector<int64_t>> perms = {
      {2, 0, 1, 3}, {3, 3, 0}, {1}, {}, {0, 1, 2, 3, 0, 1, 2, 3}};
  for (bool weighted : {false, true})
    for (DType vt : {DType::kInt32, DType::kInt64})
      for (DType lt : {DType::kInt32, DType::kInt64})
        for (int64_t B : {1, 5})
          for (const auto &perm : perms)
            for (bool byBatch : {false, true}) {
              TestKjt in = randomKjt(4, B, weighted, gen); // has empty bags
              TestKernelContext ctx;
              addKjtInputs(ctx, in, vt, lt);
              ctx.setNumOutputs(3);
              ctx.attrs().set("permutation", perm);
              if (byBatch)
                ctx.attrs().set("batch_size", B);
              else
                ctx.attrs().set("num_keys", int64_t{4});
              Status s = runKernel("kjt_permute", ctx);
              ASSERT_TRUE(s.isOk()) << s.toString();
              EXPECT_EQ(ctx.output(0).dtype(), vt);
              EXPECT_EQ(ctx.output(1).dtype(), lt);
              EXPECT_EQ(ctx.output(2).defined(), weighted);
              expectKjtEq(outputKjt(ctx, 0, perm.size()),
                          referencePermute(in, perm),
                          "perm size " + std::to_string(perm.size()));
            }
}

TEST(KjtPermute, EmptyFeatureAndEmptyKjt) {
  std::mt19937 gen(2);
  TestKjt in = randomKjt(3, 4, true, gen);
  for (int64_t b = 0; b < 4; ++b)
    in.lengths[4 + b] = 0; // feature 1 empty
  in.values.resize(offsetsOf(in.lengths).back());
  in.weights.resize(in.values.size());
  TestKernelContext ctx;
  addKjtInputs(ctx, in, DType::kInt64, DType::kInt64);
  ctx.setNumOutputs(3);
  ctx.attrs()
      .set("permutation", std::vector<int64_t>{1, 2, 1})
      .set("num_keys", int64_t{3});
  ASSERT_TRUE(runKernel("kjt_permute", ctx).isOk());
  expectKjtEq(outputKjt(ctx, 0, 3), referencePermute(in, {1, 2, 1}),
              "empty feature");

  TestKjt empty;
  empty.keys = 2;
  TestKernelContext ctx2;
  addKjtInputs(ctx2, empty, DType::kInt64, DType::kInt32);
  ctx2.setNumOutputs(3);
  ctx2.attrs()
      .set("permutation", std::vector<int64_t>{1, 0})
      .set("num_keys", int64_t{2});
  ASSERT_TRUE(runKernel("kjt_permute", ctx2).isOk());
  EXPECT_EQ(ctx2.output(0).numel(), 0);
  EXPECT_EQ(ctx2.output(1).numel(), 0);
}

Status runPermute(const TestKjt &in, const std::vector<int64_t> &perm,
                  const std::function<void(Attributes &)> &attrs) {
  TestKernelContext ctx;
  addKjtInputs(ctx, in, DType::kInt64, DType::kInt64);
  ctx.setNumOutputs(3);
  ctx.attrs().set("permutation", perm);
  attrs(ctx.attrs());
  return runKernel("kjt_permute", ctx);
}

TEST(KjtPermute, Errors) {
  std::mt19937 gen(3);
  TestKjt in = randomKjt(3, 2, false, gen);
  Status s = runPermute(in, {0}, [](Attributes &) {});
  EXPECT_NE(s.message().find("needs the attribute 'num_keys'"),
            std::string::npos)
      << s.toString();
  s = runPermute(in, {3}, [](Attributes &a) { a.set("num_keys", int64_t{3}); });
  EXPECT_NE(s.message().find("permutation[0] = 3 is not a key"),
            std::string::npos)
      << s.toString();
  s = runPermute(in, {5},
                 [](Attributes &a) { a.set("batch_size", int64_t{2}); });
  EXPECT_NE(s.message().find("but the input has 3 keys"), std::string::npos)
      << s.toString();
  s = runPermute(in, {0}, [](Attributes &a) { a.set("num_keys", int64_t{4}); });
  EXPECT_NE(s.message().find("not a multiple of its 4 keys"), std::string::npos)
      << s.toString();
  TestKjt bad = in;
  bad.values.push_back(1);
  s = runPermute(bad, {0},
                 [](Attributes &a) { a.set("num_keys", int64_t{3}); });
  EXPECT_NE(s.message().find("lengths sum to"), std::string::npos)
      << s.toString();
  bad = in;
  bad.lengths[0] = -1;
  s = runPermute(bad, {0},
                 [](Attributes &a) { a.set("num_keys", int64_t{3}); });
  EXPECT_NE(s.message().find("is negative"), std::string::npos) << s.toString();
}

TEST(KjtSplit, SplitsConsecutiveKeysAndConcatRestores) {
  std::mt19937 gen(4);
  for (bool weighted : {false, true})
    for (DType vt : {DType::kInt32, DType::kInt64})
      for (const std::vector<int64_t> &counts :
           {std::vector<int64_t>{2, 3, 1}, std::vector<int64_t>{6},
            std::vector<int64_t>{0, 6, 0},
            std::vector<int64_t>{1, 1, 1, 1, 1, 1}}) {
        TestKjt in = randomKjt(6, 3, weighted, gen);
        TestKernelContext split;
        addKjtInputs(split, in, vt, DType::kInt32);
        split.setNumOutputs(3 * static_cast<int>(counts.size()));
        split.attrs().set("key_counts", counts);
        Status s = runKernel("kjt_split", split);
        ASSERT_TRUE(s.isOk()) << s.toString();
        int64_t first = 0;
        for (size_t p = 0; p < counts.size(); ++p) {
          std::vector<int64_t> keys;
          for (int64_t k = first; k < first + counts[p]; ++k)
            keys.push_back(k);
          TestKjt part = outputKjt(split, 3 * p, counts[p]);
          expectKjtEq(part, referencePermute(in, keys),
                      "part " + std::to_string(p));
          EXPECT_EQ(split.output(3 * p + 2).defined(), weighted);
          first += counts[p];
        }
        // Concatenating the parts gives the input back.
        TestKernelContext concat;
        for (size_t p = 0; p < counts.size(); ++p) {
          concat.addInput(split.output(3 * p))
              .addInput(split.output(3 * p + 1));
          concat.addInput(split.output(3 * p + 2));
        }
        concat.setNumOutputs(3);
        concat.attrs().set("num_inputs", static_cast<int64_t>(counts.size()));
        concat.attrs().set("key_counts", counts);
        s = runKernel("kjt_concat", concat);
        ASSERT_TRUE(s.isOk()) << s.toString();
        expectKjtEq(outputKjt(concat, 0, 6), in, "concat of the split");
      }
}

TEST(KjtConcat, WithBatchSizeAndErrors) {
  std::mt19937 gen(5);
  TestKjt a = randomKjt(2, 4, true, gen), b = randomKjt(3, 4, true, gen);
  TestKernelContext ctx;
  addKjtInputs(ctx, a, DType::kInt64, DType::kInt64);
  addKjtInputs(ctx, b, DType::kInt64, DType::kInt64);
  ctx.setNumOutputs(3);
  ctx.attrs().set("num_inputs", int64_t{2}).set("batch_size", int64_t{4});
  ASSERT_TRUE(runKernel("kjt_concat", ctx).isOk());
  TestKjt want = a;
  want.lengths.insert(want.lengths.end(), b.lengths.begin(), b.lengths.end());
  want.values.insert(want.values.end(), b.values.begin(), b.values.end());
  want.weights.insert(want.weights.end(), b.weights.begin(), b.weights.end());
  expectKjtEq(outputKjt(ctx, 0, 5), want, "batch_size");

  auto concatError = [&](const TestKjt &x, const TestKjt &y, DType yValues,
                         const std::function<void(Attributes &)> &attrs) {
    TestKernelContext c;
    addKjtInputs(c, x, DType::kInt64, DType::kInt64);
    addKjtInputs(c, y, yValues, DType::kInt64);
    c.setNumOutputs(3);
    c.attrs().set("num_inputs", int64_t{2});
    attrs(c.attrs());
    Status s = runKernel("kjt_concat", c);
    EXPECT_FALSE(s.isOk());
    return s.message();
  };
  TestKjt unweighted = b;
  unweighted.weights.clear();
  unweighted.weighted = false;
  EXPECT_NE(
      concatError(a, unweighted, DType::kInt64,
                  [](Attributes &at) { at.set("batch_size", int64_t{4}); })
          .find("cannot concatenate weighted and unweighted"),
      std::string::npos);
  TestKjt otherBatch = randomKjt(3, 5, true, gen);
  EXPECT_NE(concatError(a, otherBatch, DType::kInt64,
                        [](Attributes &at) {
                          at.set("key_counts", std::vector<int64_t>{2, 3});
                        })
                .find("KJT 1 has batch size 5 but KJT 0 has 4"),
            std::string::npos);
  EXPECT_NE(
      concatError(a, otherBatch, DType::kInt64,
                  [](Attributes &at) { at.set("batch_size", int64_t{4}); })
          .find("not a multiple of the batch size 4"),
      std::string::npos);
  EXPECT_NE(
      concatError(a, b, DType::kInt32,
                  [](Attributes &at) { at.set("batch_size", int64_t{4}); })
          .find("differ from KJT 0"),
      std::string::npos);
  EXPECT_NE(concatError(a, b, DType::kInt64, [](Attributes &) {})
                .find("needs the attribute 'batch_size' or 'key_counts'"),
            std::string::npos);
}

TEST(KjtSplit, Errors) {
  std::mt19937 gen(6);
  TestKjt in = randomKjt(4, 2, false, gen);
  TestKernelContext ctx;
  addKjtInputs(ctx, in, DType::kInt64, DType::kInt64);
  ctx.setNumOutputs(6);
  ctx.attrs().set("key_counts", std::vector<int64_t>{2, 3});
  Status s = runKernel("kjt_split", ctx);
  EXPECT_NE(s.message().find("not a multiple of its 5 keys"), std::string::npos)
      << s.toString();
  TestKernelContext ctx2;
  addKjtInputs(ctx2, in, DType::kInt64, DType::kInt64);
  ctx2.setNumOutputs(3);
  ctx2.attrs().set("key_counts", std::vector<int64_t>{2, 2});
  s = runKernel("kjt_split", ctx2);
  EXPECT_NE(s.message().find("has 3 outputs, expected 6"), std::string::npos)
      << s.toString();
}

} // namespace
