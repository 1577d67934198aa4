//===- ember_run_split_test.cpp - ember-run's split of a global batch ----===//
//
// splitGlobalBatch against a naive split of every input: dense rows, KJT
// bags given as lengths or offsets (int32 and int64), weights, inputs
// without a batch dimension. The multi-rank flags are ember_run_test's.
//
//===----------------------------------------------------------------------===//
#include "batch_split.h"
#include "support/expect_status.h"

#include <gtest/gtest.h>

#include <random>

using namespace ember;
using namespace ember::tools;

namespace {

TEST(BatchPart, CeilThenFloor) {
  int64_t begin, end;
  std::vector<std::pair<int64_t, int64_t>> parts;
  for (int r = 0; r < 4; ++r) {
    batchPart(10, r, 4, &begin, &end);
    parts.emplace_back(begin, end);
  }
  EXPECT_EQ(parts, (std::vector<std::pair<int64_t, int64_t>>{
                       {0, 3}, {3, 6}, {6, 8}, {8, 10}}));
  batchPart(2, 3, 4, &begin, &end);
  EXPECT_EQ(begin, 2);
  EXPECT_EQ(end, 2); // an empty rank
}

template <typename T> std::vector<T> values(const Tensor &t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

TEST(SplitGlobalBatch, MatchesANaiveSplit) {
  ModelSignature sig;
  sig.inputs.push_back({"dense", DType::kFloat32, {"B", "2"}, "", false});
  sig.inputs.push_back(
      {"table", DType::kFloat32, {"5"}, "", false}); // not split
  sig.kjtInputs.push_back(
      {"a", {"x", "y"}, DType::kInt64, DType::kInt32, true, "B"});
  sig.kjtInputs.push_back(
      {"b", {"z"}, DType::kInt32, DType::kInt64, false, "B"});
  const int64_t B = 7;
  std::mt19937 rng(5);
  std::vector<float> dense(B * 2), table(5, 1.f);
  for (float &x : dense)
    x = static_cast<float>(rng() % 100);
  // KJT a: lengths (int32), weights; KJT b: offsets (int64).
  std::vector<int32_t> aLengths(2 * B);
  std::vector<int64_t> aValues;
  std::vector<float> aWeights;
  for (int32_t &l : aLengths) {
    l = static_cast<int32_t>(rng() % 3);
    for (int j = 0; j < l; ++j) {
      aValues.push_back(static_cast<int64_t>(rng() % 50));
      aWeights.push_back(static_cast<float>(rng() % 7));
    }
  }
  std::vector<int64_t> bOffsets = {0};
  std::vector<int32_t> bValues;
  for (int64_t s = 0; s < B; ++s) {
    int64_t l = static_cast<int64_t>(rng() % 4);
    for (int64_t j = 0; j < l; ++j)
      bValues.push_back(static_cast<int32_t>(rng() % 50));
    bOffsets.push_back(bOffsets.back() + l);
  }
  for (int world : {1, 3, 4})
    for (int rank = 0; rank < world; ++rank) {
      std::map<std::string, Tensor> arrays = {
          {"dense", Tensor::view(dense.data(), DType::kFloat32, {B, 2})},
          {"table", Tensor::view(table.data(), DType::kFloat32, {5})},
          {"a.lengths", Tensor::view(aLengths.data(), DType::kInt32, {2 * B})},
          {"a.values", Tensor::view(aValues.data(), DType::kInt64,
                                    {static_cast<int64_t>(aValues.size())})},
          {"a.weights", Tensor::view(aWeights.data(), DType::kFloat32,
                                     {static_cast<int64_t>(aWeights.size())})},
          {"b.offsets", Tensor::view(bOffsets.data(), DType::kInt64, {B + 1})},
          {"b.values", Tensor::view(bValues.data(), DType::kInt32,
                                    {static_cast<int64_t>(bValues.size())})}};
      ASSERT_TRUE(splitGlobalBatch(sig, arrays, rank, world).isOk());
      int64_t begin, end;
      batchPart(B, rank, world, &begin, &end);
      EXPECT_EQ(values<float>(arrays["dense"]),
                std::vector<float>(dense.begin() + 2 * begin,
                                   dense.begin() + 2 * end));
      EXPECT_EQ(arrays["table"].numel(), 5);
      // Naive: walk every bag and keep those of my samples.
      std::vector<int32_t> wantLengths;
      std::vector<int64_t> wantValues;
      std::vector<float> wantWeights;
      int64_t pos = 0;
      for (int64_t f = 0; f < 2; ++f)
        for (int64_t s = 0; s < B; ++s) {
          int32_t l = aLengths[f * B + s];
          if (s >= begin && s < end) {
            wantLengths.push_back(l);
            for (int j = 0; j < l; ++j) {
              wantValues.push_back(aValues[pos + j]);
              wantWeights.push_back(aWeights[pos + j]);
            }
          }
          pos += l;
        }
      EXPECT_EQ(arrays["a.lengths"].dtype(), DType::kInt32);
      EXPECT_EQ(values<int32_t>(arrays["a.lengths"]), wantLengths);
      EXPECT_EQ(values<int64_t>(arrays["a.values"]), wantValues);
      EXPECT_EQ(values<float>(arrays["a.weights"]), wantWeights);
      EXPECT_EQ(arrays.count("b.offsets"), 0u);
      std::vector<int64_t> bLengths;
      std::vector<int32_t> bWant(bValues.begin() + bOffsets[begin],
                                 bValues.begin() + bOffsets[end]);
      for (int64_t s = begin; s < end; ++s)
        bLengths.push_back(bOffsets[s + 1] - bOffsets[s]);
      EXPECT_EQ(values<int64_t>(arrays["b.lengths"]), bLengths);
      EXPECT_EQ(values<int32_t>(arrays["b.values"]), bWant);
    }
}

TEST(SplitGlobalBatch, InconsistentBatchesAreAnError) {
  ModelSignature sig;
  sig.inputs.push_back({"dense", DType::kFloat32, {"B", "1"}, "", false});
  sig.kjtInputs.push_back(
      {"a", {"x"}, DType::kInt64, DType::kInt64, false, "B"});
  std::vector<float> dense(3);
  std::vector<int64_t> lengths(4, 0), none;
  std::map<std::string, Tensor> arrays = {
      {"dense", Tensor::view(dense.data(), DType::kFloat32, {3, 1})},
      {"a.lengths", Tensor::view(lengths.data(), DType::kInt64, {4})},
      {"a.values", Tensor::view(none.data(), DType::kInt64, {0})}};
  EXPECT_ERROR(splitGlobalBatch(sig, arrays, 0, 2),
               StatusCode::kInvalidArgument,
               "the global batch is 4 for KJT input 'a' but 3 for input "
               "'dense'");
}

/// nn.EmbeddingBag-style inputs: ids and per-sample weights split by the
/// bags of their offsets input (B or B + 1 entries), offsets rebased to 0;
/// a dense input with the signature's batch symbol split by rows.
TEST(SplitGlobalBatch, BagInputsSplitByBags) {
  const int64_t B = 7;
  std::mt19937 rng(11);
  for (bool includeLast : {false, true}) {
    ModelSignature sig;
    sig.batchSymbol = "batch";
    sig.inputs.push_back({"dense", DType::kFloat32, {"batch", "1"}, "", false});
    sig.inputs.push_back({"ids", DType::kInt64, {"n"}, "offsets", includeLast});
    sig.inputs.push_back(
        {"offsets", DType::kInt32, {includeLast ? "b1" : "batch"}, "", false});
    sig.inputs.push_back(
        {"psw", DType::kFloat32, {"n"}, "offsets", includeLast});
    std::vector<float> dense(B);
    std::vector<int32_t> offsets = {0};
    std::vector<int64_t> ids;
    std::vector<float> psw;
    for (int64_t s = 0; s < B; ++s) {
      dense[s] = static_cast<float>(s);
      int64_t l = s == 0 ? 0 : static_cast<int64_t>(rng() % 4); // empty bag
      for (int64_t j = 0; j < l; ++j) {
        ids.push_back(static_cast<int64_t>(rng() % 100));
        psw.push_back(static_cast<float>(rng() % 9));
      }
      offsets.push_back(offsets.back() + static_cast<int32_t>(l));
    }
    const int64_t n = static_cast<int64_t>(ids.size());
    std::vector<int32_t> given(offsets.begin(),
                               offsets.end() - (includeLast ? 0 : 1));
    for (int world : {1, 2, 3, 8}) // 8 > B: empty ranks
      for (int rank = 0; rank < world; ++rank) {
        std::map<std::string, Tensor> arrays = {
            {"dense", Tensor::view(dense.data(), DType::kFloat32, {B, 1})},
            {"ids", Tensor::view(ids.data(), DType::kInt64, {n})},
            {"offsets", Tensor::view(given.data(), DType::kInt32,
                                     {static_cast<int64_t>(given.size())})},
            {"psw", Tensor::view(psw.data(), DType::kFloat32, {n})}};
        Status st = splitGlobalBatch(sig, arrays, rank, world);
        ASSERT_TRUE(st.isOk()) << st.toString();
        int64_t begin, end;
        batchPart(B, rank, world, &begin, &end);
        EXPECT_EQ(
            values<float>(arrays["dense"]),
            std::vector<float>(dense.begin() + begin, dense.begin() + end));
        std::vector<int32_t> wantOffsets;
        for (int64_t s = begin; s < end + (includeLast ? 1 : 0); ++s)
          wantOffsets.push_back(offsets[s] - offsets[begin]);
        EXPECT_EQ(values<int32_t>(arrays["offsets"]), wantOffsets)
            << "rank " << rank << " of " << world;
        EXPECT_EQ(values<int64_t>(arrays["ids"]),
                  std::vector<int64_t>(ids.begin() + offsets[begin],
                                       ids.begin() + offsets[end]));
        EXPECT_EQ(values<float>(arrays["psw"]),
                  std::vector<float>(psw.begin() + offsets[begin],
                                     psw.begin() + offsets[end]));
      }
  }
}

TEST(SplitGlobalBatch, MalformedBagOffsetsAreAnError) {
  ModelSignature sig;
  sig.inputs.push_back({"ids", DType::kInt64, {"n"}, "offsets", false});
  sig.inputs.push_back({"offsets", DType::kInt64, {"B"}, "", false});
  std::vector<int64_t> ids = {1, 2, 3};
  std::vector<int64_t> past = {0, 2, 9, 3}; // bag 2 starts past the ids
  std::map<std::string, Tensor> arrays = {
      {"ids", Tensor::view(ids.data(), DType::kInt64, {3})},
      {"offsets", Tensor::view(past.data(), DType::kInt64, {4})}};
  EXPECT_ERROR(splitGlobalBatch(sig, arrays, 0, 2),
               StatusCode::kInvalidArgument,
               "input 'ids': its offsets ('offsets') select ids [0, 9) of 3");
  std::vector<float> wrong = {0.f, 1.f};
  arrays = {{"ids", Tensor::view(ids.data(), DType::kInt64, {3})},
            {"offsets", Tensor::view(wrong.data(), DType::kFloat32, {2})}};
  EXPECT_ERROR(splitGlobalBatch(sig, arrays, 0, 2),
               StatusCode::kInvalidArgument,
               "offsets input 'offsets' must be int32 or int64 of rank 1");
}

} // namespace
