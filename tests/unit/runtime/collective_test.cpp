//===- collective_test.cpp - Collective kernels on 1, 2 and 4 ranks -------===//
//
// Each rank is a thread with its own Gloo communicator (TCP on loopback,
// rendezvous through a file store in a fresh directory). Every kernel is
// compared with a naive reference over all ranks' inputs, on random data
// with fixed seeds: uneven batches per rank, empty peers (batch 0, no keys,
// no values), and a single rank (no communicator at all).
//
//===----------------------------------------------------------------------===//
#include "comm/collective_info.h"
#include "comm/comm_options.h"
#include "ember/dtype.h"
#include "support/collective_cases.h"
#include "support/collective_ranks.h"
#include "support/temp_dir.h"
#include "support/test_kernel_context.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <random>
#include <thread>
#include <tuple>

using namespace ember;
using namespace ember::testing;

namespace {

/// What the collectives' errors call the group.
constexpr const char *kGroup = "emb_dist";

/// Payloads are drawn from [-kBound, kBound).
constexpr float kBound = 2.f;

class CollectiveTest : public RankCountTest {};

// --- kjt_all_to_all ---------------------------------------------------------

struct LocalKjt {
  int64_t batch;
  std::vector<int64_t> lengths; // [K * batch] key-major
  std::vector<int32_t> values;
  std::vector<float> weights;
};

TEST_P(CollectiveTest, KjtAllToAllMatchesReference) {
  const int w = world();
  const std::vector<int64_t> batches = batchesFor(w);
  std::vector<int64_t> splits =
      w == 1 ? std::vector<int64_t>{3}
             : (w == 2 ? std::vector<int64_t>{1, 2}
                       : std::vector<int64_t>{2, 0, 1, 2});
  int64_t numKeys = 0;
  for (int64_t s : splits)
    numKeys += s;
  std::mt19937 rng(11 + w);
  std::vector<LocalKjt> in(w);
  for (int r = 0; r < w; ++r) {
    in[r].batch = batches[r];
    for (int64_t i = 0; i < numKeys * batches[r]; ++i) {
      int64_t len = rng() % 4; // includes empty bags
      in[r].lengths.push_back(len);
      for (int64_t j = 0; j < len; ++j) {
        in[r].values.push_back(static_cast<int32_t>(rng() % 1000));
        in[r].weights.push_back(static_cast<float>(rng() % 100) / 10.f);
      }
    }
  }
  // Reference: destination p gets, per key of its range, every source's bags.
  auto reference = [&](int p, std::vector<int64_t> &lengths,
                       std::vector<int32_t> &values,
                       std::vector<float> &weights) {
    int64_t first = 0;
    for (int i = 0; i < p; ++i)
      first += splits[i];
    for (int64_t f = first; f < first + splits[p]; ++f)
      for (int q = 0; q < w; ++q) {
        int64_t start = 0;
        for (int64_t i = 0; i < f * in[q].batch; ++i)
          start += in[q].lengths[i];
        for (int64_t b = 0; b < in[q].batch; ++b) {
          int64_t len = in[q].lengths[f * in[q].batch + b];
          lengths.push_back(len);
          for (int64_t j = 0; j < len; ++j) {
            values.push_back(in[q].values[start + j]);
            weights.push_back(in[q].weights[start + j]);
          }
          start += len;
        }
      }
  };
  for (bool withWeights : {false, true}) {
    runRanks(w, 30, [&](int r, Communicator *comm) {
      CollectiveContext ctx(
          worldCollective(CollectiveInfo::Kind::kKjtAllToAll, w, r, kGroup),
          comm);
      LocalKjt &mine = in[r];
      ctx.addInput(Tensor::view(mine.lengths.data(), DType::kInt64,
                                {static_cast<int64_t>(mine.lengths.size())}));
      ctx.addInput(Tensor::view(mine.values.data(), DType::kInt32,
                                {static_cast<int64_t>(mine.values.size())}));
      if (withWeights)
        ctx.addInput(Tensor::view(mine.weights.data(), DType::kFloat32,
                                  {static_cast<int64_t>(mine.weights.size())}));
      else
        ctx.addAbsentInput();
      ctx.setNumOutputs(withWeights ? 3 : 2);
      ctx.attrs().set("key_splits", splits);
      Status s = runKernel("kjt_all_to_all", ctx);
      ASSERT_TRUE(s.isOk()) << "rank " << r << ": " << s.toString();
      std::vector<int64_t> lengths;
      std::vector<int32_t> values;
      std::vector<float> weights;
      reference(r, lengths, values, weights);
      const Tensor &ol = ctx.output(0), &ov = ctx.output(1);
      ASSERT_EQ(ol.dtype(), DType::kInt64);
      ASSERT_EQ(ov.dtype(), DType::kInt32);
      EXPECT_EQ(std::vector<int64_t>(ol.data<int64_t>(),
                                     ol.data<int64_t>() + ol.numel()),
                lengths)
          << "rank " << r;
      EXPECT_EQ(std::vector<int32_t>(ov.data<int32_t>(),
                                     ov.data<int32_t>() + ov.numel()),
                values)
          << "rank " << r;
      if (withWeights) {
        EXPECT_EQ(floatsOf(ctx.output(2)), weights) << "rank " << r;
      }
    });
  }
}

// --- pooled_all_to_all -------------------------------------------------------

TEST_P(CollectiveTest, PooledAllToAllMatchesReference) {
  const int w = world();
  const std::vector<int64_t> batches = batchesFor(w);
  const std::vector<int64_t> dims = pooledDimsFor(w);
  const std::vector<int64_t> rowOff = prefixSums(batches);
  const int64_t total = rowOff[w], dSum = prefixSums(dims)[w];
  std::mt19937 rng(21 + w);
  std::vector<std::vector<float>> x(w); // rank q: [total, dims[q]]
  for (int q = 0; q < w; ++q)
    x[q] = randomFloats(rng, total * dims[q], kBound);
  // The row-count reference may have more dims: [batches[r], 2] here.
  std::vector<std::vector<float>> refs(w);
  for (int r = 0; r < w; ++r)
    refs[r].resize(batches[r] * 2);
  Attributes attrs;
  attrs.set("dim_per_rank", dims);
  runCollectiveRanks(
      kGroup, CollectiveInfo::Kind::kAllToAll, "pooled_all_to_all", w, attrs,
      [&](int r, CollectiveContext &ctx) {
        ctx.addInput(
            Tensor::view(x[r].data(), DType::kFloat32, {total, dims[r]}));
        ctx.addInput(
            Tensor::view(refs[r].data(), DType::kFloat32, {batches[r], 2}));
      },
      [&](int r, const Tensor &out) {
        std::vector<float> expected;
        for (int64_t b = 0; b < batches[r]; ++b)
          for (int q = 0; q < w; ++q)
            for (int64_t d = 0; d < dims[q]; ++d)
              expected.push_back(x[q][(rowOff[r] + b) * dims[q] + d]);
        EXPECT_EQ(out.shape(), Shape({batches[r], dSum}));
        EXPECT_EQ(floatsOf(out), expected) << "rank " << r;
      });
}

// --- reduce_scatter ---------------------------------------------------------

TEST_P(CollectiveTest, ReduceScatterMatchesReference) {
  const int w = world();
  const std::vector<int64_t> batches = batchesFor(w);
  const std::vector<int64_t> rowOff = prefixSums(batches);
  const int64_t total = rowOff[w];
  for (const char *op : {"sum", "max"}) {
    std::mt19937 rng(31 + w);
    std::vector<std::vector<float>> x(w); // [total, 2, 3] each
    for (int q = 0; q < w; ++q)
      x[q] = randomFloats(rng, total * 6, kBound);
    Attributes attrs;
    attrs.set("reduce", std::string(op));
    runReduceScatterRanks(
        kGroup, batches, {2, 3}, x, attrs, [&](int r, const Tensor &out) {
          const int64_t row = rowOff[r];
          std::vector<float> expected(x[0].begin() + row * 6,
                                      x[0].begin() + (row + batches[r]) * 6);
          for (int q = 1; q < w; ++q)
            for (size_t i = 0; i < expected.size(); ++i) {
              float v = x[q][row * 6 + i];
              expected[i] =
                  op[0] == 's' ? expected[i] + v : std::max(expected[i], v);
            }
          EXPECT_EQ(out.shape(), Shape({batches[r], 2, 3}));
          EXPECT_EQ(floatsOf(out), expected) << op << " rank " << r;
        });
  }
}

// --- all_gather / all_reduce -------------------------------------------------

TEST_P(CollectiveTest, AllGatherMatchesReference) {
  const int w = world();
  const std::vector<int64_t> batches = batchesFor(w);
  std::mt19937 rng(41 + w);
  std::vector<std::vector<float>> x(w);
  std::vector<float> expected;
  for (int q = 0; q < w; ++q) {
    x[q] = randomFloats(rng, batches[q] * 3, kBound);
    expected.insert(expected.end(), x[q].begin(), x[q].end());
  }
  runCollectiveRanks(
      kGroup, CollectiveInfo::Kind::kAllGather, "all_gather", w, Attributes(),
      [&](int r, CollectiveContext &ctx) {
        ctx.addInput(
            Tensor::view(x[r].data(), DType::kFloat32, {batches[r], 3}));
      },
      [&](int r, const Tensor &out) {
        EXPECT_EQ(floatsOf(out), expected) << "rank " << r;
      });
}

TEST_P(CollectiveTest, AllReduceMatchesReference) {
  const int w = world();
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{37}}) {
    std::mt19937 rng(51 + w + n);
    std::vector<std::vector<float>> x(w);
    for (int q = 0; q < w; ++q)
      x[q] = randomFloats(rng, n, kBound);
    std::vector<float> expected = x[0];
    for (int q = 1; q < w; ++q)
      for (int64_t i = 0; i < n; ++i)
        expected[i] += x[q][i];
    runAllReduceRanks(kGroup, x, Attributes(), [&](int r, const Tensor &out) {
      EXPECT_EQ(floatsOf(out), expected) << "n " << n << " rank " << r;
    });
  }
}

// --- comm_dtype: 16-bit codecs ----------------------------------------------

/// x rounded to the wire type and back (what every element of a collective
/// with comm_dtype goes through).
float roundTrip(const std::string &codec, float x) {
  return codec == "float16" ? halfToFloat(floatToHalf(x))
                            : bfloat16ToFloat(floatToBFloat16(x));
}

TEST_P(CollectiveTest, CommDtypeRoundsThePayloadAndReducesInFloat32) {
  const int w = world();
  const std::vector<int64_t> batches = batchesFor(w);
  const std::vector<int64_t> rowOff = prefixSums(batches);
  const int64_t total = rowOff[w];
  for (std::string codec : {"float16", "bfloat16"}) {
    SCOPED_TRACE(codec);
    // pooled_all_to_all: the columns of every position, rounded.
    const std::vector<int64_t> dims = pooledDimsFor(w);
    std::mt19937 rng(61 + w);
    std::vector<std::vector<float>> x(w);
    for (int q = 0; q < w; ++q)
      x[q] = randomFloats(rng, total * dims[q], kBound);
    Attributes pooled;
    pooled.set("dim_per_rank", dims);
    pooled.set("comm_dtype", codec);
    runPooledAllToAllRanks(
        kGroup, batches, dims, x, pooled, [&](int r, const Tensor &out) {
          std::vector<float> expected, exact;
          for (int64_t b = 0; b < batches[r]; ++b)
            for (int q = 0; q < w; ++q)
              for (int64_t d = 0; d < dims[q]; ++d) {
                float v = x[q][(rowOff[r] + b) * dims[q] + d];
                expected.push_back(roundTrip(codec, v));
                exact.push_back(v);
              }
          EXPECT_EQ(floatsOf(out), expected) << "rank " << r;
          if (!exact.empty()) { // the codec is not ignored
            EXPECT_NE(floatsOf(out), exact) << "rank " << r;
          }
        });
    // reduce_scatter: rounded rows, added (max) in float32 in position order.
    for (const char *op : {"sum", "max"}) {
      std::vector<std::vector<float>> y(w); // [total, 3] each
      for (int q = 0; q < w; ++q)
        y[q] = randomFloats(rng, total * 3, kBound);
      Attributes attrs;
      attrs.set("reduce", std::string(op));
      attrs.set("comm_dtype", codec);
      runReduceScatterRanks(
          kGroup, batches, {3}, y, attrs, [&](int r, const Tensor &out) {
            std::vector<float> expected(batches[r] * 3);
            for (size_t i = 0; i < expected.size(); ++i) {
              float acc = roundTrip(codec, y[0][rowOff[r] * 3 + i]);
              for (int q = 1; q < w; ++q) {
                float v = roundTrip(codec, y[q][rowOff[r] * 3 + i]);
                acc = op[0] == 's' ? acc + v : std::max(acc, v);
              }
              expected[i] = acc;
            }
            EXPECT_EQ(floatsOf(out), expected) << op << " rank " << r;
          });
    }
    // all_reduce: rounded inputs, float32 sums in position order, rounded
    // again for the gather: every rank gets the same bits.
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{37}}) {
      std::vector<std::vector<float>> z(w);
      for (int q = 0; q < w; ++q)
        z[q] = randomFloats(rng, n, kBound);
      std::vector<float> expected(n);
      for (int64_t i = 0; i < n; ++i) {
        float acc = roundTrip(codec, z[0][i]);
        for (int q = 1; q < w; ++q)
          acc += roundTrip(codec, z[q][i]);
        expected[i] = roundTrip(codec, acc);
      }
      Attributes attrs;
      attrs.set("comm_dtype", codec);
      runAllReduceRanks(kGroup, z, attrs, [&](int r, const Tensor &out) {
        EXPECT_EQ(floatsOf(out), expected) << "n " << n << " rank " << r;
      });
    }
  }
}

// --- pooled_all_to_all with its columns permuted ----------------------------

/// segment_dims / segment_columns that cut each position's columns into runs
/// of 1 or 2 and place the runs in a shuffled order.
std::pair<std::vector<int64_t>, std::vector<int64_t>>
shuffledSegments(const std::vector<int64_t> &dims, std::mt19937 &rng) {
  std::vector<int64_t> widths;
  for (int64_t d : dims)
    for (int64_t c = 0; c < d;) {
      int64_t width = std::min<int64_t>(d - c, 1 + rng() % 2);
      widths.push_back(width);
      c += width;
    }
  std::vector<size_t> order(widths.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::shuffle(order.begin(), order.end(), rng);
  return {widths, segmentColumns(widths, order)};
}

TEST_P(CollectiveTest, PooledAllToAllPutsSegmentsAtTheirColumns) {
  const int w = world();
  const std::vector<int64_t> batches = batchesFor(w);
  const std::vector<int64_t> dims =
      w == 1 ? std::vector<int64_t>{5} : pooledDimsFor(w);
  const std::vector<int64_t> rowOff = prefixSums(batches);
  const int64_t total = rowOff[w], dSum = prefixSums(dims)[w];
  for (std::string codec : {"float32", "float16"}) {
    SCOPED_TRACE(codec);
    std::mt19937 rng(71 + w);
    // Plain variables: C++17 lambdas cannot capture structured bindings.
    std::vector<int64_t> widths, columns;
    std::tie(widths, columns) = shuffledSegments(dims, rng);
    std::vector<std::vector<float>> x(w);
    for (int q = 0; q < w; ++q)
      x[q] = randomFloats(rng, total * dims[q], kBound);
    Attributes attrs;
    attrs.set("dim_per_rank", dims);
    attrs.set("segment_dims", widths);
    attrs.set("segment_columns", columns);
    attrs.set("comm_dtype", codec);
    runPooledAllToAllRanks(
        kGroup, batches, dims, x, attrs, [&](int r, const Tensor &out) {
          // Naive: walk the segments in wire order, each from its position.
          std::vector<float> expected(batches[r] * dSum, -99.f);
          size_t seg = 0;
          for (int q = 0; q < w; ++q)
            for (int64_t c0 = 0; c0 < dims[q]; c0 += widths[seg++])
              for (int64_t b = 0; b < batches[r]; ++b)
                for (int64_t c = 0; c < widths[seg]; ++c) {
                  float v = x[q][(rowOff[r] + b) * dims[q] + c0 + c];
                  expected[b * dSum + columns[seg] + c] =
                      codec == "float32" ? v : roundTrip(codec, v);
                }
          EXPECT_EQ(out.shape(), Shape({batches[r], dSum}));
          EXPECT_EQ(floatsOf(out), expected) << "rank " << r;
        });
  }
}

/// Forwards to a real communicator and records, per exchange, this rank's
/// own entry: its bytes and whether its receive aliases its send (nothing
/// to copy for it).
class OwnEntryRecorder : public Communicator {
public:
  explicit OwnEntryRecorder(Communicator &inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int worldSize() const override { return inner_.worldSize(); }
  Status exchange(const std::vector<int> &group,
                  const std::vector<SendBuffer> &sends,
                  const std::vector<RecvBuffer> &recvs,
                  const std::string &what) override {
    size_t me = static_cast<size_t>(
        std::find(group.begin(), group.end(), rank()) - group.begin());
    own.push_back({sends[me].bytes, sends[me].data == recvs[me].data});
    return inner_.exchange(group, sends, recvs, what);
  }
  std::vector<std::pair<size_t, bool>> own; // (bytes, aliased) per exchange

private:
  Communicator &inner_;
};

TEST_P(CollectiveTest, PooledAllToAllReadsItsOwnBlockInPlace) {
  // The own block goes from x to the output in one copy: its receive is its
  // send (the communicator copies nothing), with and without a wire codec,
  // and the output is still every position's rows in place.
  const int w = world();
  if (w == 1)
    GTEST_SKIP() << "a group of one exchanges nothing";
  const std::vector<int64_t> batches = batchesFor(w);
  const std::vector<int64_t> dims = pooledDimsFor(w);
  const std::vector<int64_t> rowOff = prefixSums(batches);
  const int64_t total = rowOff[w], dSum = prefixSums(dims)[w];
  for (std::string codec : {"float32", "bfloat16"}) {
    SCOPED_TRACE(codec);
    std::mt19937 rng(91 + w);
    std::vector<std::vector<float>> x(w);
    for (int q = 0; q < w; ++q)
      x[q] = randomFloats(rng, total * dims[q], kBound);
    std::vector<std::vector<float>> refs(w);
    for (int r = 0; r < w; ++r)
      refs[r].resize(batches[r]);
    Attributes attrs;
    attrs.set("dim_per_rank", dims);
    attrs.set("comm_dtype", codec);
    runRanks(w, 30, [&](int r, Communicator *comm) {
      OwnEntryRecorder recorder(*comm);
      CollectiveContext ctx(
          worldCollective(CollectiveInfo::Kind::kAllToAll, w, r, kGroup),
          &recorder);
      ctx.addInput(
          Tensor::view(x[r].data(), DType::kFloat32, {total, dims[r]}));
      ctx.addInput(Tensor::view(refs[r].data(), DType::kFloat32, {batches[r]}));
      ctx.setNumOutputs(1);
      ctx.attrs() = attrs;
      Status s = runKernel("pooled_all_to_all", ctx);
      ASSERT_TRUE(s.isOk()) << "rank " << r << ": " << s.toString();
      // The header exchange, then the payload: the own block's bytes.
      ASSERT_FALSE(recorder.own.empty());
      const size_t element = codec == "float32" ? 4 : 2;
      EXPECT_EQ(recorder.own.back().first,
                static_cast<size_t>(batches[r] * dims[r]) * element)
          << "rank " << r;
      EXPECT_TRUE(recorder.own.back().second)
          << "rank " << r << ": the own block is copied into the staging "
          << "buffer before the output";
      std::vector<float> expected;
      for (int64_t b = 0; b < batches[r]; ++b)
        for (int q = 0; q < w; ++q)
          for (int64_t d = 0; d < dims[q]; ++d) {
            float v = x[q][(rowOff[r] + b) * dims[q] + d];
            expected.push_back(codec == "float32" ? v : roundTrip(codec, v));
          }
      EXPECT_EQ(ctx.output(0).shape(), Shape({batches[r], dSum}));
      EXPECT_EQ(floatsOf(ctx.output(0)), expected) << "rank " << r;
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, CollectiveTest, ::testing::Values(1, 2, 4),
                         rankCountName);

// --- failures ----------------------------------------------------------------

TEST(CollectiveFailureTest, MismatchedAttributesAreAnError) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "no Gloo";
  std::vector<float> x(6, 1.f), ref(3);
  runRanks(2, 30, [&](int r, Communicator *comm) {
    CollectiveContext ctx(
        worldCollective(CollectiveInfo::Kind::kAllToAll, 2, r, kGroup), comm);
    ctx.addInput(Tensor::view(x.data(), DType::kFloat32, {6, 1}))
        .addInput(Tensor::view(ref.data(), DType::kFloat32, {3}));
    ctx.setNumOutputs(1);
    // Rank 1 believes rank 0 has 2 columns: it finds out from the exchanged
    // sizes and stops; rank 0 then loses it.
    ctx.attrs().set("dim_per_rank", std::vector<int64_t>{r == 0 ? 1 : 2, 1});
    Status s = runKernel("pooled_all_to_all", ctx);
    if (r == 1) {
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
      EXPECT_NE(s.message().find("dim_per_rank"), std::string::npos);
    } else {
      EXPECT_FALSE(s.isOk());
    }
  });
}

TEST(CollectiveFailureTest, BadColumnSegmentsAreRefused) {
  // dim_per_rank [2, 3]: position 0's 2 columns, then position 1's 3.
  struct Case {
    std::vector<int64_t> widths, columns;
    bool withWidths, withColumns;
    const char *message;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {0, 2}, true, false, "only 'segment_dims' is given"},
      {{2, 3}, {3, 0}, false, true, "only 'segment_columns' is given"},
      {{2, 3}, {3}, true, true, "'segment_dims' has 2 entries but"},
      {{2, 2}, {0, 2}, true, true, "ends at position 1's column 2"},
      {{3, 2}, {0, 3}, true, true, "'segment_dims'[0] = 3 does not fit"},
      {{0, 2, 3}, {0, 0, 2}, true, true, "'segment_dims'[0] = 0 does not"},
      {{2, 3, 1}, {0, 2, 4}, true, true, "has 3 segments but"},
      {{2, 3}, {0, 4}, true, true, "'segment_columns'[1] = 4"},
      {{2, 3}, {-1, 2}, true, true, "'segment_columns'[0] = -1"},
      {{2, 3}, {0, 1}, true, true, "segments 0 and 1 overlap"},
  };
  std::vector<float> x(2, 1.f), ref(1);
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    TestKernelContext ctx;
    ctx.addInput(Tensor::view(x.data(), DType::kFloat32, {1, 2}))
        .addInput(Tensor::view(ref.data(), DType::kFloat32, {1}));
    ctx.setNumOutputs(1);
    ctx.attrs().set("dim_per_rank", std::vector<int64_t>{2, 3});
    if (c.withWidths)
      ctx.attrs().set("segment_dims", c.widths);
    if (c.withColumns)
      ctx.attrs().set("segment_columns", c.columns);
    Status s = runKernel("pooled_all_to_all", ctx);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.toString();
  }
}

TEST(CollectiveFailureTest, BadCommDtypeIsAnError) {
  std::vector<float> x(4, 1.f);
  {
    TestKernelContext ctx;
    ctx.addInput(Tensor::view(x.data(), DType::kFloat32, {4}));
    ctx.setNumOutputs(1);
    ctx.attrs().set("comm_dtype", std::string("int8"));
    Status s = runKernel("all_reduce", ctx);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
    EXPECT_NE(s.message().find("comm_dtype"), std::string::npos);
  }
  {
    // A 16-bit codec needs float32 data.
    std::vector<int32_t> ids(4, 3);
    TestKernelContext ctx;
    ctx.addInput(Tensor::view(ids.data(), DType::kInt32, {4, 1}))
        .addInput(Tensor::view(x.data(), DType::kFloat32, {4}));
    ctx.setNumOutputs(1);
    ctx.attrs().set("dim_per_rank", std::vector<int64_t>{1});
    ctx.attrs().set("comm_dtype", std::string("bfloat16"));
    Status s = runKernel("pooled_all_to_all", ctx);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
    EXPECT_NE(s.message().find("needs float32"), std::string::npos)
        << s.toString();
  }
}

TEST(CollectiveFailureTest, MismatchedCommDtypeIsAnError) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "no Gloo";
  std::vector<float> x(6, 1.f);
  runRanks(2, 30, [&](int r, Communicator *comm) {
    CollectiveContext ctx(
        worldCollective(CollectiveInfo::Kind::kAllReduce, 2, r, kGroup), comm);
    ctx.addInput(Tensor::view(x.data(), DType::kFloat32, {6}));
    ctx.setNumOutputs(1);
    ctx.attrs().set("comm_dtype", std::string(r == 0 ? "float16" : "bfloat16"));
    Status s = runKernel("all_reduce", ctx);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
    EXPECT_NE(s.message().find("comm_dtype"), std::string::npos)
        << s.toString();
  });
}

TEST(CollectiveFailureTest, GroupOfOneNeedsNoCommunicatorButBiggerGroupsDo) {
  CollectiveContext ctx(
      worldCollective(CollectiveInfo::Kind::kAllReduce, 2, 0, kGroup), nullptr);
  std::vector<float> x(4, 1.f);
  ctx.addInput(Tensor::view(x.data(), DType::kFloat32, {4}));
  ctx.setNumOutputs(1);
  Status s = runKernel("all_reduce", ctx);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.toString();
  EXPECT_NE(s.message().find("single-rank"), std::string::npos) << s.toString();
}

TEST(CollectiveFailureTest, HungPeerTimesOutNamingIt) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "no Gloo";
  std::vector<float> x(8, 1.f);
  runRanks(3, 1.0, [&](int r, Communicator *comm) {
    if (r == 2) { // hangs: never enters the collective (well past the
                  // others' timeout, even on a loaded machine)
      std::this_thread::sleep_for(std::chrono::milliseconds(5000));
      return;
    }
    CollectiveContext ctx(
        worldCollective(CollectiveInfo::Kind::kAllReduce, 3, r, kGroup), comm);
    ctx.addInput(Tensor::view(x.data(), DType::kFloat32, {8}));
    ctx.setNumOutputs(1);
    auto start = std::chrono::steady_clock::now();
    Status s = runKernel("all_reduce", ctx);
    double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    EXPECT_FALSE(s.isOk());
    EXPECT_LT(took, 4.0) << s.toString();
    EXPECT_NE(s.message().find("rank 2"), std::string::npos) << s.toString();
    EXPECT_NE(s.message().find("emb_dist"), std::string::npos) << s.toString();
    EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.toString();
    // The communicator is broken for good: a later collective fails at once.
    Status again = runKernel("all_reduce", ctx);
    EXPECT_FALSE(again.isOk());
  });
}

TEST(CollectiveFailureTest, RendezvousTimesOutWhenARankIsMissing) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "no Gloo";
  TempDir store;
  CommOptions o;
  o.rank = 0;
  o.worldSize = 2;
  o.rendezvous = "file:" + store.path();
  o.timeoutSeconds = 0.5;
  auto start = std::chrono::steady_clock::now();
  auto comm = createCommunicator(o);
  double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_FALSE(comm.isOk());
  EXPECT_LT(took, 5.0);
  EXPECT_NE(comm.status().message().find("rendezvous of rank 0 of 2"),
            std::string::npos)
      << comm.status().toString();
}

TEST(CollectiveFailureTest, TcpStoreRendezvous) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "no Gloo";
  // A port from the dynamic range, derived from the pid to avoid collisions.
  int port = 20000 + static_cast<int>(::getpid() % 20000);
  std::vector<float> x(5, 2.f);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      CommOptions o;
      o.rank = r;
      o.worldSize = 2;
      o.rendezvous = "tcp:127.0.0.1:" + std::to_string(port);
      o.timeoutSeconds = 20;
      auto comm = createCommunicator(o);
      ASSERT_TRUE(comm.isOk()) << comm.status().toString();
      CollectiveContext ctx(
          worldCollective(CollectiveInfo::Kind::kAllReduce, 2, r, kGroup),
          comm->get());
      ctx.addInput(Tensor::view(x.data(), DType::kFloat32, {5}));
      ctx.setNumOutputs(1);
      Status s = runKernel("all_reduce", ctx);
      ASSERT_TRUE(s.isOk()) << s.toString();
      EXPECT_EQ(floatsOf(ctx.output(0)), std::vector<float>(5, 4.f));
    });
  for (auto &t : threads)
    t.join();
}

} // namespace
