//===- session_test.cpp - ember::Session on a small DLRM ------------------===//
//
// The DLRM plan built by the test helper runs through Session and is checked
// against a plain-loop reference: dynamic batch sizes, concurrent runs from
// 8 threads, bounds-check modes, steady-state memory, and bad inputs.
//
//===----------------------------------------------------------------------===//
#include "embedding_test_support.h"
#include "ember/session.h"
#include "support/dlrm_inputs.h"
#include "support/dlrm_model.h"
#include "support/expect_status.h"
#include "support/plan_builder.h"
#include "support/temp_dir.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

using namespace ember;
using namespace ember::testing;

namespace {

class SessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    model_ = makeDlrmModel(11);
    auto path = writeDlrmPlan(model_, dir_.path(), "dlrm");
    ASSERT_TRUE(path.isOk()) << path.status().toString();
    planPath_ = *path;
  }
  std::unique_ptr<Session> load(SessionOptions options = {}) {
    auto session = Session::load(planPath_, options);
    EXPECT_TRUE(session.isOk()) << session.status().toString();
    return session.isOk() ? std::move(*session) : nullptr;
  }

  TempDir dir_;
  DlrmModel model_;
  std::string planPath_;
};

TEST_F(SessionTest, MatchesReferenceForDynamicBatch) {
  auto session = load();
  ASSERT_TRUE(session);
  for (int64_t b : {1, 7, 64, 7}) {
    DlrmBatch batch = makeDlrmBatch(model_, b, 100 + b);
    RunInputs in = dlrmInputs(model_, batch);
    auto out = session->run(in);
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ(out->name(0), "prob");
    expectMatchesReference(*out->find("prob"), referenceDlrm(model_, batch));
    EXPECT_EQ(out->invalidIds(), 0);
  }
}

TEST_F(SessionTest, TextPlanAndThreadsGiveTheSameResult) {
  auto text = writeDlrmPlan(model_, dir_.path(), "dlrm_text", /*text=*/true);
  ASSERT_TRUE(text.isOk());
  SessionOptions options;
  options.threads = 4;
  auto session = Session::load(*text, options);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  DlrmBatch batch = makeDlrmBatch(model_, 33, 5);
  auto out = (*session)->run(dlrmInputs(model_, batch));
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectMatchesReference(*out->find("prob"), referenceDlrm(model_, batch));
}

TEST_F(SessionTest, EmptyBagsAndAllEmptyBatch) {
  auto session = load();
  DlrmBatch batch = makeDlrmBatch(model_, 5, 9, /*maxLen=*/0); // no ids at all
  EXPECT_TRUE(batch.values.empty());
  auto out = session->run(dlrmInputs(model_, batch));
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectMatchesReference(*out->find("prob"), referenceDlrm(model_, batch));
}

TEST_F(SessionTest, KjtFromOffsets) {
  auto session = load();
  DlrmBatch batch = makeDlrmBatch(model_, 9, 21);
  std::vector<int32_t> offsets = {0};
  for (int64_t len : batch.lengths)
    offsets.push_back(offsets.back() + static_cast<int32_t>(len));
  RunInputs in = dlrmInputs(model_, batch);
  auto kjt = KeyedJaggedTensor::fromOffsets(
      model_.keys,
      Tensor::view(batch.values.data(), DType::kInt64,
                   {int64_t(batch.values.size())}),
      Tensor::view(offsets.data(), DType::kInt32, {int64_t(offsets.size())}));
  ASSERT_TRUE(kjt.isOk()) << kjt.status().toString();
  EXPECT_EQ(kjt->batchSize(), 9);
  in.set("sparse", *kjt);
  auto out = session->run(in);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectMatchesReference(*out->find("prob"), referenceDlrm(model_, batch));

  offsets[3] = offsets[2] - 1; // decreasing
  EXPECT_ERROR(session->run(in).status(), StatusCode::kInvalidArgument,
               "offsets decrease");
}

TEST_F(SessionTest, ConcurrentRunsFromEightThreads) {
  SessionOptions options;
  options.threads = 2;
  auto session = load(options);
  ASSERT_TRUE(session);
  constexpr int kThreads = 8, kRuns = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      RunOutputs out;
      for (int r = 0; r < kRuns; ++r) {
        int64_t b = 1 + (t * 7 + r * 3) % 40;
        DlrmBatch batch = makeDlrmBatch(model_, b, 1000 * t + r);
        std::vector<float> expected = referenceDlrm(model_, batch);
        Status s = session->run(dlrmInputs(model_, batch), &out);
        const Tensor *prob = out.find("prob");
        bool ok = s.isOk() && prob && prob->dim(0) == b;
        for (int64_t i = 0; ok && i < b; ++i)
          ok = std::fabs(prob->data<float>()[i] - expected[i]) <=
               1e-5f + 1e-4f * expected[i];
        if (!ok)
          failures.fetch_add(1);
      }
    });
  for (auto &th : threads)
    th.join();
  EXPECT_EQ(failures.load(), 0);
  SessionStats stats = session->stats();
  EXPECT_EQ(stats.runs, kThreads * kRuns);
  EXPECT_GE(stats.runContexts, 1);
  EXPECT_LE(stats.runContexts, kThreads);
}

TEST_F(SessionTest, SteadyStateRunsDoNotGrowTheArena) {
  auto session = load();
  DlrmBatch batch = makeDlrmBatch(model_, 32, 3);
  RunInputs in = dlrmInputs(model_, batch);
  RunOutputs out;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(session->run(in, &out).isOk());
  const void *outputBuffer = out.find("prob")->data();
  int64_t growths = session->stats().arenaGrowths;
  EXPECT_GT(growths, 0);
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(session->run(in, &out).isOk());
  EXPECT_EQ(session->stats().arenaGrowths, growths);
  EXPECT_EQ(session->stats().runContexts, 1);
  // The output buffer is reused too.
  EXPECT_EQ(out.find("prob")->data(), outputBuffer);
  expectMatchesReference(*out.find("prob"), referenceDlrm(model_, batch));
}

TEST_F(SessionTest, BoundsCheckModes) {
  DlrmBatch batch = makeDlrmBatch(model_, 6, 17, /*maxLen=*/3);
  // Two ids past the end of table 0 (feature f0 uses sum pooling).
  int bad = 0;
  std::vector<int64_t> badPositions;
  for (size_t i = 0; i < batch.values.size() && bad < 2; ++i) {
    batch.values[i] =
        model_.tableRows[0] + bad; // rows, rows + 1: first feature
    badPositions.push_back(static_cast<int64_t>(i));
    ++bad;
  }
  ASSERT_EQ(bad, 2);
  ASSERT_GE(batch.lengths[0] + batch.lengths[1] + batch.lengths[2], 2)
      << "the seed must give feature f0 at least two ids in its first bags";

  auto fatal = load();
  auto result = fatal->run(dlrmInputs(model_, batch));
  ASSERT_FALSE(result.isOk());
  EXPECT_EQ(result.status().code(), StatusCode::kOutOfRange)
      << result.status().toString();
  EXPECT_NE(result.status().message().find(std::to_string(model_.tableRows[0])),
            std::string::npos)
      << result.status().message();

  SessionOptions warn;
  warn.boundsCheck = BoundsCheckMode::kWarning;
  auto warning = load(warn);
  auto out = warning->run(dlrmInputs(model_, batch));
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(out->invalidIds(), 2);
  // The reference with the invalid ids contributing zero rows: drop them.
  expectMatchesReference(
      *out->find("prob"),
      referenceDlrm(model_, withoutIds(batch, badPositions)));
}

TEST_F(SessionTest, BadInputs) {
  auto session = load();
  DlrmBatch batch = makeDlrmBatch(model_, 4, 1);
  RunInputs good = dlrmInputs(model_, batch);
  ASSERT_TRUE(session->run(good).isOk());

  RunInputs in = good;
  in.set("dens", Tensor::view(batch.dense.data(), DType::kFloat32, {4, 4}));
  EXPECT_ERROR(session->run(in).status(), StatusCode::kNotFound,
               "unknown input 'dens'; the plan's inputs are: dense (float32[B, "
               "4]), sparse (KJT)");

  RunInputs missing;
  missing.set("sparse", good.kjt(1));
  EXPECT_ERROR(session->run(missing).status(), StatusCode::kInvalidArgument,
               "missing input 'dense' (float32[B, 4])");

  std::vector<double> dense64(16);
  in = good;
  in.set("dense", Tensor::view(dense64.data(), DType::kFloat64, {4, 4}));
  EXPECT_ERROR(
      session->run(in).status(), StatusCode::kInvalidArgument,
      "input 'dense' is float64[4, 4] but the plan expects float32[B, 4]");

  in = good;
  in.set("dense", Tensor::view(batch.dense.data(), DType::kFloat32, {4, 2}));
  EXPECT_ERROR(session->run(in).status(), StatusCode::kInvalidArgument,
               "(dimension 1)");

  in = good;
  in.set("dense", Tensor::view(batch.dense.data(), DType::kFloat32, {1, 4}));
  EXPECT_ERROR(session->run(in).status(), StatusCode::kInvalidArgument,
               "'B' is 1 for dense but 4 for sparse");

  in = good;
  in.set("dense", good.kjt(1));
  EXPECT_ERROR(session->run(in).status(), StatusCode::kInvalidArgument,
               "is a dense tensor, but a KeyedJaggedTensor was given");

  // Lengths that do not sum to the number of values, and a negative length.
  std::vector<int64_t> lengths = batch.lengths;
  lengths[0] += 1;
  auto makeKjt = [&](std::vector<std::string> keys,
                     std::vector<int64_t> &lens) {
    return *KeyedJaggedTensor::fromLengths(
        std::move(keys),
        Tensor::view(batch.values.data(), DType::kInt64,
                     {int64_t(batch.values.size())}),
        Tensor::view(lens.data(), DType::kInt64, {int64_t(lens.size())}));
  };
  in = good;
  in.set("sparse", makeKjt(model_.keys, lengths));
  EXPECT_ERROR(session->run(in).status(), StatusCode::kInvalidArgument,
               "KJT input 'sparse': the lengths sum to");
  lengths = batch.lengths;
  lengths[2] = -1;
  in.set("sparse", makeKjt(model_.keys, lengths));
  EXPECT_ERROR(session->run(in).status(), StatusCode::kInvalidArgument,
               "lengths[2] is -1 (negative)");
  lengths = batch.lengths;
  in.set("sparse", makeKjt({"f0", "f2", "f1"}, lengths));
  EXPECT_ERROR(session->run(in).status(), StatusCode::kInvalidArgument,
               "has keys [f0, f2, f1] but the plan expects [f0, f1, f2]");

  // int32 ids where the plan takes int64.
  std::vector<int32_t> ids32(batch.values.begin(), batch.values.end());
  in.set("sparse",
         *KeyedJaggedTensor::fromLengths(
             model_.keys,
             Tensor::view(ids32.data(), DType::kInt32, {int64_t(ids32.size())}),
             Tensor::view(lengths.data(), DType::kInt64,
                          {int64_t(lengths.size())})));
  EXPECT_ERROR(session->run(in).status(), StatusCode::kInvalidArgument,
               "has int32 values but the plan expects int64");

  // A failed run leaves no outputs behind, and the session still works.
  RunOutputs out;
  ASSERT_TRUE(session->run(good, &out).isOk());
  EXPECT_FALSE(session->run(in, &out).isOk());
  EXPECT_EQ(out.size(), 0u);
  EXPECT_TRUE(session->run(good, &out).isOk());
  EXPECT_EQ(out.size(), 1u);
}

/// A weighted KJT with int32 ids and lengths: one table, weighted sum pooling.
TEST(SessionWeightedKjt, MatchesWeightedSums) {
  TempDir dir;
  PlanBuilder b;
  KjtSlotIds kjt = b.kjtInput("ids", {"a", "b"}, DType::kInt32, DType::kInt32,
                              /*weights=*/true);
  const int64_t rows = 6, dim = 3;
  std::vector<float> table(rows * dim);
  for (size_t i = 0; i < table.size(); ++i)
    table[i] = 0.25f * static_cast<float>(i) - 1.0f;
  int t = b.constant("table", DType::kFloat32, {rows, dim}, table.data());
  int out = b.slot("pooled", DType::kFloat32, {"B", Dim(2 * dim)});
  b.instruction("grouped_embedding_bag",
                {kjt.values, kjt.lengths, kjt.weights, t}, {out}, "tbe")
      .attr("feature_tables", std::vector<int64_t>{0, 0})
      .attr("pooling", std::vector<std::string>{"sum", "sum"})
      .attr("table_formats", std::vector<std::string>{"float32"})
      .attr("table_dims", std::vector<int64_t>{dim})
      .attr("output_offsets", std::vector<int64_t>{0, dim})
      .attr("output_width", 2 * dim);
  b.output("pooled", out);
  auto path = b.write(dir.path(), "weighted");
  ASSERT_TRUE(path.isOk()) << path.status().toString();
  auto session = Session::load(*path);
  ASSERT_TRUE(session.isOk()) << session.status().toString();

  // B = 3; key a: bags {0, 5}, {}, {2}; key b: {1}, {3, 3, 4}, {}.
  std::vector<int32_t> lengths = {2, 0, 1, 1, 3, 0};
  std::vector<int32_t> ids = {0, 5, 2, 1, 3, 3, 4};
  std::vector<float> weights = {0.5f, 2.0f, -1.0f, 3.0f, 1.0f, 0.25f, 4.0f};
  auto input = KeyedJaggedTensor::fromLengths(
      {"a", "b"}, Tensor::view(ids.data(), DType::kInt32, {7}),
      Tensor::view(lengths.data(), DType::kInt32, {6}),
      Tensor::view(weights.data(), DType::kFloat32, {7}));
  ASSERT_TRUE(input.isOk());
  RunInputs in;
  in.set("ids", *input);
  auto result = (*session)->run(in);
  ASSERT_TRUE(result.isOk()) << result.status().toString();
  const Tensor &pooled = *result->find("pooled");
  ASSERT_EQ(pooled.shape(), Shape({3, 2 * dim}));
  int64_t pos = 0;
  for (int64_t f = 0; f < 2; ++f)
    for (int64_t s = 0; s < 3; ++s) {
      std::vector<float> expected(dim, 0.0f);
      for (int32_t k = 0; k < lengths[f * 3 + s]; ++k, ++pos)
        for (int64_t d = 0; d < dim; ++d)
          expected[d] += weights[pos] * table[ids[pos] * dim + d];
      for (int64_t d = 0; d < dim; ++d)
        EXPECT_NEAR(pooled.data<float>()[s * 2 * dim + f * dim + d],
                    expected[d], 1e-5f)
            << "feature " << f << " sample " << s;
    }

  // Weights are required by this plan, and must match the values.
  RunInputs noWeights;
  noWeights.set("ids",
                *KeyedJaggedTensor::fromLengths(
                    {"a", "b"}, Tensor::view(ids.data(), DType::kInt32, {7}),
                    Tensor::view(lengths.data(), DType::kInt32, {6})));
  EXPECT_ERROR((*session)->run(noWeights).status(),
               StatusCode::kInvalidArgument,
               "has no weights but the plan needs them");
  std::vector<int64_t> lengths64(lengths.begin(), lengths.end());
  RunInputs wrongLengths;
  wrongLengths.set("ids",
                   *KeyedJaggedTensor::fromLengths(
                       {"a", "b"}, Tensor::view(ids.data(), DType::kInt32, {7}),
                       Tensor::view(lengths64.data(), DType::kInt64, {6}),
                       Tensor::view(weights.data(), DType::kFloat32, {7})));
  EXPECT_ERROR((*session)->run(wrongLengths).status(),
               StatusCode::kInvalidArgument,
               "has int64 lengths but the plan expects int32");
}

TEST(SessionQuantizedSums, EachSessionAddsInItsOrder) {
  // An int8 row-wise table behind a grouped_embedding_bag (the lookup of
  // TorchRec KJT models): a session with quantizedSums "fast" gives the fast
  // order's bits, one with "fbgemm" FBGEMM's bits, in the same process;
  // "auto" the process default (EMBER_QUANTIZED_SUMS, else fast).
  TempDir dir;
  const int64_t rows = 500, dim = 64, batch = 16;
  TestTable table = makeTable(rows, dim, TableFormat::kInt8RowWise, 77);
  PlanBuilder b;
  KjtSlotIds kjt = b.kjtInput("ids", {"a", "b"}, DType::kInt64, DType::kInt64);
  int t =
      b.constant("table", DType::kUInt8, {rows, dim + 8}, table.tensor.data());
  int out = b.slot("pooled", DType::kFloat32, {"B", Dim(2 * dim)});
  b.instruction("grouped_embedding_bag", {kjt.values, kjt.lengths, -1, t},
                {out}, "tbe")
      .attr("feature_tables", std::vector<int64_t>{0, 0})
      .attr("pooling", std::vector<std::string>{"sum", "mean"})
      .attr("table_formats", std::vector<std::string>{"int8_rowwise"})
      .attr("table_dims", std::vector<int64_t>{dim})
      .attr("output_offsets", std::vector<int64_t>{0, dim})
      .attr("output_width", 2 * dim);
  b.output("pooled", out);
  auto path = b.write(dir.path(), "int8");
  ASSERT_TRUE(path.isOk()) << path.status().toString();

  std::mt19937 gen(5);
  std::vector<int64_t> lengths = randomLengths(2 * batch, 40, gen);
  int64_t n = 0;
  for (int64_t l : lengths)
    n += l;
  std::vector<int64_t> ids = randomIds(n, rows, gen);
  auto input = KeyedJaggedTensor::fromLengths(
      {"a", "b"}, Tensor::view(ids.data(), DType::kInt64, {n}),
      Tensor::view(lengths.data(), DType::kInt64, {2 * batch}));
  ASSERT_TRUE(input.isOk()) << input.status().toString();
  RunInputs in;
  in.set("ids", *input);
  // The expected output of an order: feature f's bags (lengths[f * B ..])
  // pooled by the reference, at columns [f * dim, (f + 1) * dim).
  auto expected = [&](embedding::QuantizedSums order) {
    std::vector<float> want(batch * 2 * dim);
    int64_t first = 0;
    for (int64_t f = 0; f < 2; ++f) {
      std::vector<int64_t> fl(lengths.begin() + f * batch,
                              lengths.begin() + (f + 1) * batch);
      int64_t count = 0;
      for (int64_t l : fl)
        count += l;
      std::vector<int64_t> fids(ids.begin() + first,
                                ids.begin() + first + count);
      first += count;
      std::vector<float> pooled = quantizedPoolReference(
          table, fids, fl, {},
          f == 0 ? embedding::Pooling::kSum : embedding::Pooling::kMean, -1,
          order);
      for (int64_t s = 0; s < batch; ++s)
        std::copy_n(pooled.begin() + s * dim, dim,
                    want.begin() + s * 2 * dim + f * dim);
    }
    return want;
  };
  const std::vector<float> fast = expected(embedding::QuantizedSums::kFast);
  const std::vector<float> fbgemm = expected(embedding::QuantizedSums::kFbgemm);
  ASSERT_NE(fast, fbgemm) << "the two orders should differ on this data";
  for (const char *order : {"fbgemm", "fast", "auto", "fbgemm"}) {
    SessionOptions options;
    options.quantizedSums = order;
    auto session = Session::load(*path, options);
    ASSERT_TRUE(session.isOk()) << order << ": " << session.status().toString();
    auto result = (*session)->run(in);
    ASSERT_TRUE(result.isOk()) << order << ": " << result.status().toString();
    const Tensor &pooled = *result->find("pooled");
    ASSERT_EQ(pooled.shape(), Shape({batch, 2 * dim}));
    const std::vector<float> &want =
        std::string(order) == "fbgemm" ? fbgemm
        : std::string(order) == "fast" ||
                embedding::quantizedSums() == embedding::QuantizedSums::kFast
            ? fast
            : fbgemm;
    for (int64_t e = 0; e < batch * 2 * dim; ++e)
      ASSERT_EQ(pooled.data<float>()[e], want[e])
          << order << ": sample " << e / (2 * dim) << " column "
          << e % (2 * dim);
  }
  SessionOptions bad;
  bad.quantizedSums = "exact";
  EXPECT_ERROR(Session::load(*path, bad).status(), StatusCode::kInvalidArgument,
               "SessionOptions.quantizedSums 'exact': expected auto, fast or "
               "fbgemm");
}

TEST(KeyedJaggedTensor, RejectsMalformedParts) {
  std::vector<int64_t> values = {1, 2, 3}, lengths = {1, 2, 0};
  auto v = Tensor::view(values.data(), DType::kInt64, {3});
  auto l = Tensor::view(lengths.data(), DType::kInt64, {3});
  EXPECT_ERROR(KeyedJaggedTensor::fromLengths({}, v, l).status(),
               StatusCode::kInvalidArgument, "no keys");
  EXPECT_ERROR(KeyedJaggedTensor::fromLengths({"a", "b"}, v, l).status(),
               StatusCode::kInvalidArgument, "not a multiple of the 2 keys");
  std::vector<float> f(3);
  EXPECT_ERROR(KeyedJaggedTensor::fromLengths(
                   {"a"}, Tensor::view(f.data(), DType::kFloat32, {3}), l)
                   .status(),
               StatusCode::kInvalidArgument, "values must be int32 or int64");
  EXPECT_ERROR(KeyedJaggedTensor::fromLengths(
                   {"a"}, v, l, Tensor::view(f.data(), DType::kFloat32, {2}))
                   .status(),
               StatusCode::kInvalidArgument, "weights must be float32[3]");
  auto ok = KeyedJaggedTensor::fromLengths({"a", "b", "c"}, v, l);
  ASSERT_TRUE(ok.isOk());
  EXPECT_EQ(ok->batchSize(), 1);
  EXPECT_EQ(ok->values().data(), values.data()); // zero copy
}

} // namespace
