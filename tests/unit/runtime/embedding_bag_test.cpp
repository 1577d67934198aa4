//===- embedding_bag_test.cpp - embedding_bag against a naive reference ---===//
#include "embedding_test_support.h"
#include "kernels/cpu/embedding_pool.h"
#include "support/test_kernel_context.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace ember;
using namespace ember::testing;
using embedding::Pooling;
using embedding::RowIsa;

namespace {

struct BagCase {
  std::vector<int64_t> ids;
  std::vector<int64_t> lengths; // per bag
  std::vector<float> weights;   // empty: none
  Pooling pooling = Pooling::kSum;
  int64_t paddingIdx = -1;
  bool includeLastOffset = true;
  DType indexType = DType::kInt64;
};

const char *poolingStr(Pooling p) {
  return p == Pooling::kSum ? "sum" : p == Pooling::kMean ? "mean" : "max";
}

/// Runs embedding_bag on `c`; the context is left for inspection.
Status runBag(const TestTable &table, const BagCase &c,
              TestKernelContext &ctx) {
  std::vector<int64_t> offsets = offsetsOf(c.lengths);
  if (!c.includeLastOffset)
    offsets.pop_back();
  ctx.addInput(table.tensor)
      .addInput(indexTensor(c.ids, c.indexType))
      .addInput(indexTensor(offsets, c.indexType));
  if (!c.weights.empty())
    ctx.addInput(floatTensor(c.weights));
  ctx.setNumOutputs(1);
  ctx.attrs().set("pooling", std::string(poolingStr(c.pooling)));
  ctx.attrs().set("include_last_offset", int64_t{c.includeLastOffset ? 1 : 0});
  if (c.paddingIdx >= 0)
    ctx.attrs().set("padding_idx", c.paddingIdx);
  if (table.format == TableFormat::kInt8RowWise ||
      table.format == TableFormat::kInt4RowWise) {
    ctx.attrs().set("format", table.formatName());
    ctx.attrs().set("dim", table.dim);
  }
  return runKernel("embedding_bag", ctx);
}

void expectMatchesReference(const TestTable &table, const BagCase &c,
                            const Tensor &out, const std::string &what) {
  std::vector<int64_t> offsets = offsetsOf(c.lengths);
  const int64_t B = static_cast<int64_t>(c.lengths.size());
  ASSERT_EQ(out.dtype(), DType::kFloat32);
  ASSERT_EQ(out.shape(), Shape({B, table.dim})) << what;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<float> want = referenceBag(
        table, c.ids.data() + offsets[b],
        c.weights.empty() ? nullptr : c.weights.data() + offsets[b],
        c.lengths[b], c.pooling, c.paddingIdx);
    expectRowNear(out.data<float>() + b * table.dim, want.data(), table.dim,
                  c.lengths[b], what + " bag " + std::to_string(b));
  }
}

TEST(EmbeddingBag, MatchesReferenceForEveryFormatPoolingAndOption) {
  std::mt19937 gen(1234);
  int runs = 0;
  for (RowIsa isa : supportedRowIsas()) {
    RowIsaGuard guard(isa);
    for (TableFormat format : allFormats()) {
      // 24, 96, 128, 256: rows the whole-row loops hold in registers (AVX2:
      // whole ymm vectors; AVX-512: up to 8 or exactly 16 zmm); 7, 37, 150:
      // masked or scalar tails; 150: the blocked loops.
      for (int64_t dim : {1, 7, 16, 24, 37, 64, 96, 128, 150, 256}) {
        TestTable table = makeTable(50, dim, format, 7 + dim);
        for (Pooling pooling : {Pooling::kSum, Pooling::kMean, Pooling::kMax}) {
          for (DType indexType : {DType::kInt32, DType::kInt64}) {
            for (bool includeLast : {true, false}) {
              for (int variant = 0; variant < 3; ++variant) {
                BagCase c;
                c.pooling = pooling;
                c.indexType = indexType;
                c.includeLastOffset = includeLast;
                c.lengths = randomLengths(13, 9, gen);
                c.ids = randomIds(offsetsOf(c.lengths).back(), table.rows, gen);
                if (variant == 1 && pooling == Pooling::kSum)
                  c.weights = randomWeights(c.ids.size(), gen);
                if (variant == 2) {
                  c.paddingIdx = 3;
                  for (size_t i = 0; i < c.ids.size(); i += 3)
                    c.ids[i] = 3;
                }
                std::string what = std::string(embedding::rowIsaName(isa)) +
                                   " " + table.formatName() + " dim " +
                                   std::to_string(dim) + " " +
                                   poolingStr(pooling) + " " +
                                   std::string(dtypeName(indexType)) +
                                   " last=" + std::to_string(includeLast) +
                                   " variant " + std::to_string(variant);
                TestKernelContext ctx;
                Status s = runBag(table, c, ctx);
                ASSERT_TRUE(s.isOk()) << what << ": " << s.toString();
                expectMatchesReference(table, c, ctx.output(0), what);
                ++runs;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GE(runs, 900);
}

TEST(EmbeddingBag, EveryRowIsaAgreesWithPortableOnLongRows) {
  std::vector<RowIsa> isas = supportedRowIsas();
  if (isas.size() < 2)
    GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512: only the portable "
                    "routines run";
  std::mt19937 gen(99);
  // 261: 3 AVX-512 blocks with a masked tail; 128 and 256: whole rows in
  // registers.
  for (auto [format, dim] : [] {
         std::vector<std::pair<TableFormat, int64_t>> cases;
         for (TableFormat format : allFormats())
           for (int64_t dim : {128, 256, 261})
             cases.emplace_back(format, dim);
         return cases;
       }()) {
    TestTable table = makeTable(200, dim, format, 5);
    BagCase c;
    c.lengths = randomLengths(20, 30, gen);
    c.ids = randomIds(offsetsOf(c.lengths).back(), table.rows, gen);
    c.weights = randomWeights(c.ids.size(), gen);
    std::vector<std::vector<float>> results(isas.size());
    size_t k = 0;
    for (RowIsa isa : isas) {
      RowIsaGuard guard(isa);
      TestKernelContext ctx;
      ASSERT_TRUE(runBag(table, c, ctx).isOk());
      const Tensor &out = ctx.output(0);
      results[k].resize(out.numel());
      std::memcpy(results[k++].data(), out.data(), out.nbytes());
      expectMatchesReference(table, c, out, table.formatName());
    }
    for (size_t j = 1; j < isas.size(); ++j)
      for (size_t i = 0; i < results[0].size(); ++i)
        ASSERT_NEAR(results[0][i], results[j][i],
                    1e-4f * std::max(1.0f, std::fabs(results[0][i])))
            << table.formatName() << " dim " << dim << " "
            << embedding::rowIsaName(isas[j]) << " element " << i;
  }
}

/// quantizedPoolReference (embedding_test_support.h) of a case.
std::vector<float> quantizedPool(const TestTable &table, const BagCase &c,
                                 embedding::QuantizedSums order) {
  return quantizedPoolReference(table, c.ids, c.lengths, c.weights, c.pooling,
                                c.paddingIdx, order);
}

TEST(EmbeddingBag, Int8SumsAreBitIdenticalToFbgemmOnEveryRowIsa) {
  QuantizedSumsGuard order(embedding::QuantizedSums::kFbgemm);
  std::mt19937 gen(18);
  int compared = 0;
  for (RowIsa isa : supportedRowIsas()) {
    RowIsaGuard guard(isa);
    // Whole rows in registers (8..128, 256 on AVX-512; D % 8 == 0 up to 64
    // on AVX2), the blocked loops (136, 150, 264) and masked or scalar
    // tails (7, 37, 150).
    for (int64_t dim : {7, 8, 24, 37, 64, 72, 128, 136, 150, 256, 264}) {
      TestTable table = makeTable(300, dim, TableFormat::kInt8RowWise, 3 + dim);
      for (bool weighted : {false, true}) {
        BagCase c;
        c.lengths = randomLengths(17, 120, gen); // mean 60: paired bags
        c.lengths[3] = 0;                        // an empty bag
        c.ids = randomIds(offsetsOf(c.lengths).back(), table.rows, gen);
        if (weighted)
          c.weights = randomWeights(c.ids.size(), gen);
        TestKernelContext ctx;
        ASSERT_TRUE(runBag(table, c, ctx).isOk());
        const Tensor &out = ctx.output(0);
        std::vector<float> want =
            quantizedPool(table, c, embedding::QuantizedSums::kFbgemm);
        ASSERT_EQ(out.numel(), static_cast<int64_t>(want.size()));
        const float *got = out.data<float>();
        for (size_t e = 0; e < want.size(); ++e)
          ASSERT_EQ(got[e], want[e])
              << embedding::rowIsaName(isa) << " dim " << dim
              << (weighted ? " weighted" : "") << " bag " << e / dim
              << " column " << e % dim;
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 22);
}

TEST(EmbeddingBag, QuantizedFastSumsAreTheSameBitsOnEveryRowIsa) {
  // The default order: every routine set gives the recurrence's bits, for
  // int8 and int4, sum/mean/weighted, padding, empty bags and out-of-range
  // ids (kWarning), in the whole-row loops (lean, general, two passes,
  // paired bags), the blocked loops and the tails.
  ASSERT_EQ(embedding::quantizedSums(), embedding::QuantizedSums::kFast);
  std::mt19937 gen(81);
  int compared = 0;
  for (RowIsa isa : supportedRowIsas()) {
    RowIsaGuard guard(isa);
    for (TableFormat format :
         {TableFormat::kInt8RowWise, TableFormat::kInt4RowWise}) {
      for (int64_t dim : {7, 8, 24, 37, 64, 72, 128, 136, 150, 256, 264}) {
        TestTable table = makeTable(300, dim, format, 5 + dim);
        for (int variant = 0; variant < 4; ++variant) {
          BagCase c;
          c.pooling = variant == 2 ? Pooling::kMean : Pooling::kSum;
          c.lengths = randomLengths(17, 120, gen); // mean 60: paired bags
          c.lengths[3] = 0;                        // an empty bag
          c.ids = randomIds(offsetsOf(c.lengths).back(), table.rows, gen);
          if (variant == 1)
            c.weights = randomWeights(c.ids.size(), gen);
          if (variant == 3) { // padding and out-of-range ids
            c.paddingIdx = 5;
            for (size_t i = 0; i < c.ids.size(); i += 7)
              c.ids[i] = 5;
            c.ids[2] = table.rows + 3;
            c.ids[c.ids.size() / 2] = -1;
          }
          TestKernelContext ctx;
          ctx.setBoundsCheck(BoundsCheckMode::kWarning);
          Status s = runBag(table, c, ctx);
          ASSERT_TRUE(s.isOk()) << s.toString();
          const Tensor &out = ctx.output(0);
          std::vector<float> want =
              quantizedPool(table, c, embedding::QuantizedSums::kFast);
          ASSERT_EQ(out.numel(), static_cast<int64_t>(want.size()));
          const float *got = out.data<float>();
          for (size_t e = 0; e < want.size(); ++e)
            ASSERT_EQ(got[e], want[e])
                << embedding::rowIsaName(isa) << " " << table.formatName()
                << " dim " << dim << " variant " << variant << " bag "
                << e / dim << " column " << e % dim;
          expectMatchesReference(table, c, out,
                                 std::string(embedding::rowIsaName(isa)) + " " +
                                     table.formatName() + " dim " +
                                     std::to_string(dim));
          ++compared;
        }
      }
    }
  }
  EXPECT_GE(compared, 88);
}

TEST(EmbeddingBag, QuantizedSumsParseAndOverride) {
  using embedding::QuantizedSums;
  EXPECT_EQ(embedding::parseQuantizedSums("fast"), QuantizedSums::kFast);
  EXPECT_EQ(embedding::parseQuantizedSums("fbgemm"), QuantizedSums::kFbgemm);
  EXPECT_EQ(embedding::parseQuantizedSums("FBGEMM"), std::nullopt);
  EXPECT_EQ(embedding::parseQuantizedSums(""), std::nullopt);
  EXPECT_EQ(embedding::quantizedSumsName(QuantizedSums::kFbgemm), "fbgemm");
  EXPECT_EQ(embedding::defaultQuantizedSums(), QuantizedSums::kFast);
  {
    QuantizedSumsGuard order(QuantizedSums::kFbgemm);
    EXPECT_EQ(embedding::quantizedSums(), QuantizedSums::kFbgemm);
  }
  const char *env = std::getenv("EMBER_QUANTIZED_SUMS");
  if (!env || !*env)
    EXPECT_EQ(embedding::quantizedSums(), QuantizedSums::kFast);
}

/// The CPUs whose lookup defaults were measured on a Zen 3.
bool amdWithoutAvx512() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_is("amd") && !__builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

TEST(EmbeddingBag, PrefetchDistanceDefaultsPerCpu) {
  // 2 KiB of rows on AMD without AVX-512 (measured on a Zen 3), 16 KiB
  // elsewhere (measured on an AVX-512 Xeon); EMBER_PREFETCH_BYTES overrides.
  const int64_t def = embedding::defaultPrefetchBytes();
  EXPECT_EQ(def, amdWithoutAvx512() ? 2048 : 16384);
  const char *env = std::getenv("EMBER_PREFETCH_BYTES");
  if (!env || !*env) {
    EXPECT_EQ(embedding::prefetchBytes(), def);
  }
}

/// Forces the AVX2 routines' pass count for 128-column rows; restores the
/// default on scope exit.
struct WidePassesGuard {
  explicit WidePassesGuard(int passes) {
    embedding::setAvx2WideRowPassesOverride(passes);
  }
  ~WidePassesGuard() { embedding::setAvx2WideRowPassesOverride(std::nullopt); }
  WidePassesGuard(const WidePassesGuard &) = delete;
  WidePassesGuard &operator=(const WidePassesGuard &) = delete;
};

TEST(EmbeddingBag, Avx2WideRowsPoolAlikeInOneAndTwoPasses) {
  // Unweighted fp32 rows of 128 columns: one pass (all 16 accumulators in
  // registers) or two of 64 columns; each column's sum is in id order
  // either way, so the results are the same to the bit (and the
  // reference's). Mean, padding, empty and long bags, both index types.
  if (!embedding::rowIsaSupported(RowIsa::kAvx2))
    GTEST_SKIP() << "this CPU has no AVX2";
  RowIsaGuard isa(RowIsa::kAvx2);
  std::mt19937 gen(128);
  TestTable table = makeTable(500, 128, TableFormat::kFloat32, 128);
  int compared = 0;
  for (Pooling pooling : {Pooling::kSum, Pooling::kMean}) {
    for (DType indexType : {DType::kInt32, DType::kInt64}) {
      for (int variant = 0; variant < 2; ++variant) {
        BagCase c;
        c.pooling = pooling;
        c.indexType = indexType;
        c.lengths = randomLengths(40, 160, gen); // mean 80
        c.lengths[5] = 0;
        c.ids = randomIds(offsetsOf(c.lengths).back(), table.rows, gen);
        if (variant == 1) {
          c.paddingIdx = 7;
          for (size_t i = 0; i < c.ids.size(); i += 5)
            c.ids[i] = 7;
        }
        std::vector<float> results[2];
        for (int passes : {1, 2}) {
          WidePassesGuard guard(passes);
          ASSERT_EQ(embedding::avx2WideRowPasses(), passes);
          TestKernelContext ctx;
          ASSERT_TRUE(runBag(table, c, ctx).isOk());
          const Tensor &out = ctx.output(0);
          std::string what = std::to_string(passes) + " pass(es) " +
                             poolingStr(pooling) + " variant " +
                             std::to_string(variant);
          expectMatchesReference(table, c, out, what);
          results[passes - 1].assign(out.data<float>(),
                                     out.data<float>() + out.numel());
        }
        ASSERT_EQ(results[0].size(), results[1].size());
        for (size_t e = 0; e < results[0].size(); ++e)
          ASSERT_EQ(results[0][e], results[1][e])
              << poolingStr(pooling) << " variant " << variant << " bag "
              << e / 128 << " column " << e % 128;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 8);
}

TEST(EmbeddingBag, Avx2WideRowPassesDefaultPerCpu) {
  // One pass on AMD without AVX-512 (measured on a Zen 3), two elsewhere;
  // EMBER_AVX2_WIDE_ROW_PASSES overrides.
  const int def = embedding::defaultAvx2WideRowPasses();
  EXPECT_EQ(def, amdWithoutAvx512() ? 1 : 2);
  const char *env = std::getenv("EMBER_AVX2_WIDE_ROW_PASSES");
  if (!env || !*env) {
    EXPECT_EQ(embedding::avx2WideRowPasses(), def);
  }
  // An override outside 1..2 is no override.
  const int before = embedding::avx2WideRowPasses();
  embedding::setAvx2WideRowPassesOverride(3);
  EXPECT_EQ(embedding::avx2WideRowPasses(), before);
  embedding::setAvx2WideRowPassesOverride(std::nullopt);
}

TEST(EmbeddingBag, Avx2TlbPrimingDefaultPerCpu) {
  // No TLB priming in the AVX2 loops on AMD without AVX-512 (measured slower
  // on a Zen 3), priming elsewhere; the results are the same either way
  // (every pooling test above runs whichever this CPU uses).
  EXPECT_EQ(embedding::avx2PrimesTlb(), !amdWithoutAvx512());
}

TEST(EmbeddingBag, EdgeCases) {
  std::mt19937 gen(7);
  TestTable table = makeTable(1000, 16, TableFormat::kFloat32, 3);
  for (Pooling pooling : {Pooling::kSum, Pooling::kMean, Pooling::kMax}) {
    for (bool includeLast : {true, false}) {
      std::vector<BagCase> cases(6);
      cases[0].lengths = std::vector<int64_t>{0, 3, 0, 0, 2, 0}; // empty bags
      cases[1].lengths.clear();                         // no bags at all, N = 0
      cases[2].lengths = std::vector<int64_t>{5};       // batch 1
      cases[3].lengths = std::vector<int64_t>{0, 0, 0}; // all empty, N = 0
      cases[4].lengths = std::vector<int64_t>{10000, 1}; // a very long bag
      cases[5].lengths = std::vector<int64_t>{2, 2};     // the largest valid id
      for (size_t i = 0; i < cases.size(); ++i) {
        BagCase &c = cases[i];
        if (c.lengths.empty() && includeLast == false)
          continue; // zero bags without include_last_offset: offsets = []
        c.pooling = pooling;
        c.includeLastOffset = includeLast;
        c.ids = randomIds(offsetsOf(c.lengths).back(), table.rows, gen);
        if (i == 5)
          c.ids = std::vector<int64_t>{999, 0, 999, 999};
        TestKernelContext ctx;
        Status s = runBag(table, c, ctx);
        ASSERT_TRUE(s.isOk()) << "case " << i << ": " << s.toString();
        expectMatchesReference(table, c, ctx.output(0),
                               "case " + std::to_string(i) + " " +
                                   poolingStr(pooling));
      }
    }
  }
}

TEST(EmbeddingBag, ZeroBagsWithoutIncludeLastOffset) {
  TestTable table = makeTable(10, 4, TableFormat::kFloat32, 3);
  TestKernelContext ctx;
  ctx.addInput(table.tensor)
      .addInput(indexTensor({}, DType::kInt64))
      .addInput(indexTensor({}, DType::kInt64))
      .setNumOutputs(1);
  ctx.attrs()
      .set("pooling", std::string("sum"))
      .set("include_last_offset", int64_t{0});
  ASSERT_TRUE(runKernel("embedding_bag", ctx).isOk());
  EXPECT_EQ(ctx.output(0).shape(), Shape({0, 4}));
  // Ids but no bags (PyTorch: offsets = [] gives a [0, dim] result).
  TestKernelContext ctx2;
  ctx2.addInput(table.tensor)
      .addInput(indexTensor({1, 2}, DType::kInt64))
      .addInput(indexTensor({}, DType::kInt64))
      .setNumOutputs(1);
  ctx2.attrs()
      .set("pooling", std::string("mean"))
      .set("include_last_offset", int64_t{0});
  ASSERT_TRUE(runKernel("embedding_bag", ctx2).isOk());
  EXPECT_EQ(ctx2.output(0).shape(), Shape({0, 4}));
}

TEST(EmbeddingBag, OffsetsWithoutLastEndAtN) {
  // include_last_offset = 0: offsets [0, 2] over 5 ids -> bags [0,2), [2,5).
  TestTable table = makeTable(10, 3, TableFormat::kFloat32, 11);
  BagCase c;
  c.lengths = std::vector<int64_t>{2, 3};
  c.ids = std::vector<int64_t>{1, 2, 3, 4, 5};
  c.includeLastOffset = false;
  TestKernelContext ctx;
  ASSERT_TRUE(runBag(table, c, ctx).isOk());
  expectMatchesReference(table, c, ctx.output(0), "PyTorch offsets");
}

TEST(EmbeddingBag, ThreadCountDoesNotChangeResults) {
  std::mt19937 gen(21);
  for (TableFormat format :
       {TableFormat::kFloat32, TableFormat::kInt8RowWise}) {
    TestTable table = makeTable(5000, 64, format, 8);
    for (Pooling pooling : {Pooling::kSum, Pooling::kMean, Pooling::kMax}) {
      BagCase c;
      c.pooling = pooling;
      c.lengths = randomLengths(3000, 40, gen);
      c.ids = randomIds(offsetsOf(c.lengths).back(), table.rows, gen);
      TestKernelContext one(1), four(4);
      ASSERT_TRUE(runBag(table, c, one).isOk());
      ASSERT_TRUE(runBag(table, c, four).isOk());
      const Tensor &a = one.output(0), &b = four.output(0);
      ASSERT_EQ(a.shape(), b.shape());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0)
          << table.formatName() << " " << poolingStr(pooling);
      expectMatchesReference(table, c, b, "4 threads");
    }
  }
}

TEST(EmbeddingBag, BoundsCheckFatalNamesTheFeatureAndPosition) {
  TestTable table = makeTable(100, 8, TableFormat::kFloat32, 2);
  for (int64_t bad : {100, -1, 1000000}) {
    for (int threads : {1, 4}) {
      BagCase c;
      c.lengths = std::vector<int64_t>{3, 2, 4};
      c.ids = std::vector<int64_t>{1, 2, 3, 4, 5, 6, bad, 8, 9};
      TestKernelContext ctx(threads, BoundsCheckMode::kFatal);
      ctx.attrs().set("feature_names", std::vector<std::string>{"user_id"});
      Status s = runBag(table, c, ctx);
      ASSERT_FALSE(s.isOk());
      EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
      const std::string &m = s.message();
      EXPECT_NE(m.find("test kernel"), std::string::npos) << m;
      EXPECT_NE(m.find("'user_id'"), std::string::npos) << m;
      EXPECT_NE(m.find("id " + std::to_string(bad)), std::string::npos) << m;
      EXPECT_NE(m.find("position 6"), std::string::npos) << m;
      EXPECT_NE(m.find("bag 2"), std::string::npos) << m;
      EXPECT_NE(m.find("100 rows"), std::string::npos) << m;
    }
  }
}

TEST(EmbeddingBag, BoundsCheckFatalReportsTheFirstInvalidIdWithAnyThreadCount) {
  TestTable table = makeTable(10, 4, TableFormat::kFloat32, 2);
  std::mt19937 gen(5);
  BagCase c;
  c.lengths = randomLengths(4000, 6, gen);
  c.ids = randomIds(offsetsOf(c.lengths).back(), table.rows, gen);
  int64_t first = static_cast<int64_t>(c.ids.size()) / 3;
  c.ids[first] = 77;
  c.ids[c.ids.size() - 2] = 55;
  for (int threads : {1, 2, 4}) {
    TestKernelContext ctx(threads, BoundsCheckMode::kFatal);
    Status s = runBag(table, c, ctx);
    ASSERT_FALSE(s.isOk());
    EXPECT_NE(s.message().find("id 77 at position " + std::to_string(first)),
              std::string::npos)
        << s.message();
  }
}

// Quantized rows are pooled two bags at a time (row j of bag b, then row j
// of bag b + 1): an invalid id must still be reported in id order, and
// kWarning must count and zero every invalid id of both bags.
TEST(EmbeddingBag, BoundsCheckInInterleavedBagsKeepsIdOrder) {
  for (RowIsa isa : supportedRowIsas()) {
    RowIsaGuard guard(isa);
    // Quantized rows pair bags; float rows of 128 columns (and quantized
    // ones on AVX2) go in two passes over each bag, where only the first
    // may count or stop at an invalid id.
    for (TableFormat format :
         {TableFormat::kInt8RowWise, TableFormat::kInt4RowWise,
          TableFormat::kFloat32, TableFormat::kFloat16}) {
      for (int64_t dim : {16, 32, 64, 128}) {
        TestTable table = makeTable(40, dim, format, 9);
        std::string what = std::string(embedding::rowIsaName(isa)) + " " +
                           table.formatName() + " dim " + std::to_string(dim);
        // Bags long enough to be paired (kPairMinMeanLength = 48). Bag 0 =
        // positions 0..59, bag 1 = 60..119: the invalid id of bag 1
        // (position 61, its second row) is met before bag 0's (position
        // 40) when the two bags are interleaved.
        BagCase c;
        c.lengths = std::vector<int64_t>{60, 60, 50, 70, 55};
        for (int64_t i = 0; i < 295; ++i)
          c.ids.push_back(i % 39 + 1);
        c.ids[40] = 40;
        c.ids[61] = -2;
        {
          TestKernelContext ctx(1, BoundsCheckMode::kFatal);
          Status s = runBag(table, c, ctx);
          ASSERT_FALSE(s.isOk()) << what;
          EXPECT_NE(s.message().find("id 40 at position 40"),
                    std::string::npos)
              << what << ": " << s.message();
        }
        // Only bag 1's, and one in a later pair's second bag.
        c.ids[40] = 4;
        c.ids[180] = 99;
        {
          TestKernelContext ctx(1, BoundsCheckMode::kFatal);
          Status s = runBag(table, c, ctx);
          ASSERT_FALSE(s.isOk()) << what;
          EXPECT_NE(s.message().find("id -2 at position 61"),
                    std::string::npos)
              << what << ": " << s.message();
        }
        c.ids[40] = 40;
        c.paddingIdx = 12;
        c.ids[200] = 12;
        for (Pooling pooling : {Pooling::kSum, Pooling::kMean}) {
          c.pooling = pooling;
          TestKernelContext ctx(1, BoundsCheckMode::kWarning);
          ASSERT_TRUE(runBag(table, c, ctx).isOk()) << what;
          EXPECT_EQ(ctx.invalidIds(), 3) << what;
          expectMatchesReference(table, c, ctx.output(0),
                                 what + " " + poolingStr(pooling));
        }
      }
    }
  }
}

// Long bags with no padding id take the whole-row loops' lean path (no
// per-id padding, count or prefetch-range tests; embedding_pool_whole_row.h)
// wherever a bag's prefetches stay inside the ids, the general one for the
// last bags: both must pool alike, count every invalid id (kWarning: zero
// rows that count in mean's divisor) and stop at the first (kFatal), for
// sum, mean and weighted sum, every row width, format and ISA.
TEST(EmbeddingBag, LeanWholeRowLoopCountsAndStopsLikeTheGeneralOne) {
  std::mt19937 gen(23);
  for (RowIsa isa : supportedRowIsas()) {
    RowIsaGuard guard(isa);
    for (TableFormat format : {TableFormat::kFloat32, TableFormat::kFloat16,
                               TableFormat::kInt8RowWise}) {
      for (int64_t dim : {8, 32, 64, 96, 128}) {
        TestTable table = makeTable(500, dim, format, 11);
        std::string what = std::string(embedding::rowIsaName(isa)) + " " +
                           table.formatName() + " dim " + std::to_string(dim);
        BagCase c;
        c.lengths = randomLengths(120, 30, gen);
        c.ids = randomIds(offsetsOf(c.lengths).back(), table.rows, gen);
        const int64_t n = static_cast<int64_t>(c.ids.size());
        // Invalid ids early (lean bags), in the middle and in the last bag.
        const std::vector<int64_t> bad = {n / 10, n / 2, n - 1};
        for (int64_t at : bad)
          c.ids[at] = at % 2 ? table.rows : -7;
        for (bool weighted : {false, true}) {
          c.weights.clear();
          if (weighted)
            for (int64_t i = 0; i < n; ++i)
              c.weights.push_back(0.25f + 0.5f * static_cast<float>(i % 5));
          for (Pooling pooling : {Pooling::kSum, Pooling::kMean}) {
            if (weighted && pooling == Pooling::kMean)
              continue; // per_sample_weights take sum pooling only
            c.pooling = pooling;
            TestKernelContext ctx(1, BoundsCheckMode::kWarning);
            ASSERT_TRUE(runBag(table, c, ctx).isOk()) << what;
            EXPECT_EQ(ctx.invalidIds(), 3) << what;
            expectMatchesReference(table, c, ctx.output(0),
                                   what + " " + poolingStr(pooling) +
                                       (weighted ? " weighted" : ""));
          }
        }
        c.weights.clear();
        c.pooling = Pooling::kSum;
        TestKernelContext ctx(1, BoundsCheckMode::kFatal);
        Status s = runBag(table, c, ctx);
        ASSERT_FALSE(s.isOk()) << what;
        EXPECT_NE(s.message().find("at position " + std::to_string(bad[0])),
                  std::string::npos)
            << what << ": " << s.message();
      }
    }
  }
}

TEST(EmbeddingBag, BoundsCheckWarningZeroesAndCounts) {
  for (TableFormat format : allFormats()) {
    TestTable table = makeTable(20, 12, format, 4);
    for (Pooling pooling : {Pooling::kSum, Pooling::kMean, Pooling::kMax}) {
      BagCase c;
      c.pooling = pooling;
      c.lengths = std::vector<int64_t>{3, 2, 1, 0};
      c.ids = std::vector<int64_t>{1, 20, 2, -5, 3, 99};
      TestKernelContext ctx(2, BoundsCheckMode::kWarning);
      ASSERT_TRUE(runBag(table, c, ctx).isOk());
      EXPECT_EQ(ctx.invalidIds(), 3);
      expectMatchesReference(table, c, ctx.output(0),
                             table.formatName() + " " + poolingStr(pooling));
    }
  }
}

TEST(EmbeddingBag, BoundsCheckIgnoreRunsValidIds) {
  TestTable table = makeTable(30, 8, TableFormat::kFloat16, 4);
  BagCase c;
  c.lengths = std::vector<int64_t>{3, 3};
  c.ids = std::vector<int64_t>{0, 29, 5, 6, 7, 29};
  TestKernelContext ctx(1, BoundsCheckMode::kIgnore);
  ASSERT_TRUE(runBag(table, c, ctx).isOk());
  EXPECT_EQ(ctx.invalidIds(), 0);
  expectMatchesReference(table, c, ctx.output(0), "ignore");
}

/// Sets up a valid float32 call, lets `mutate` break it, expects an error
/// whose message contains `expect`.
void expectError(const std::string &expect,
                 const std::function<void(TestKernelContext &)> &mutate,
                 std::vector<Tensor> inputs = {}) {
  TestTable table = makeTable(10, 4, TableFormat::kFloat32, 1);
  TestKernelContext ctx;
  if (inputs.empty())
    inputs = {table.tensor, indexTensor({1, 2, 3}, DType::kInt64),
              indexTensor({0, 1, 3}, DType::kInt64)};
  for (auto &t : inputs)
    ctx.addInput(t);
  ctx.setNumOutputs(1);
  ctx.attrs().set("pooling", std::string("sum"));
  mutate(ctx);
  Status s = runKernel("embedding_bag", ctx);
  ASSERT_FALSE(s.isOk()) << "expected an error containing '" << expect << "'";
  EXPECT_NE(s.message().find(expect), std::string::npos) << s.toString();
}

TEST(EmbeddingBag, MalformedInputsAreClearErrors) {
  TestTable f32 = makeTable(10, 4, TableFormat::kFloat32, 1);
  TestTable q8 = makeTable(10, 4, TableFormat::kInt8RowWise, 1);
  Tensor ids = indexTensor({1, 2, 3}, DType::kInt64);
  auto none = [](TestKernelContext &) {};
  expectError("offsets decrease at bag 1", none,
              {f32.tensor, ids, indexTensor({0, 2, 1, 3}, DType::kInt64)});
  expectError("past the 3 indices", none,
              {f32.tensor, ids, indexTensor({0, 1, 4}, DType::kInt64)});
  expectError("offsets[0] must be 0", none,
              {f32.tensor, ids, indexTensor({1, 3}, DType::kInt64)});
  expectError("offsets is empty", none,
              {f32.tensor, ids, indexTensor({}, DType::kInt64)});
  expectError(
      "input 1 (indices) must be int32 or int64", none,
      {f32.tensor, floatTensor({1, 2, 3}), indexTensor({0, 3}, DType::kInt64)});
  expectError("input 2 (offsets) must be 1-D", none,
              {f32.tensor, ids, *Tensor::zeros(DType::kInt64, {2, 2})});
  expectError("must be float32, float16, bfloat16 or uint8", none,
              {*Tensor::zeros(DType::kInt32, {10, 4}), ids,
               indexTensor({0, 3}, DType::kInt64)});
  expectError("must be 2-D", none,
              {*Tensor::zeros(DType::kFloat32, {40}), ids,
               indexTensor({0, 3}, DType::kInt64)});
  expectError("uint8 table needs format", none,
              {q8.tensor, ids, indexTensor({0, 3}, DType::kInt64)});
  expectError("row of dim 5 has 13 bytes",
              [](TestKernelContext &c) {
                c.attrs()
                    .set("format", std::string("int8_rowwise"))
                    .set("dim", int64_t{5});
              },
              {q8.tensor, ids, indexTensor({0, 3}, DType::kInt64)});
  expectError("needs the attribute 'dim'", [](TestKernelContext &c) {
    c.attrs().set("format", std::string("int4_rowwise"));
  });
  expectError("unknown table format 'int3'", [](TestKernelContext &c) {
    c.attrs().set("format", std::string("int3"));
  });
  expectError("but its format is 'float16'", [](TestKernelContext &c) {
    c.attrs().set("format", std::string("float16"));
  });
  expectError("has 4 columns but dim is 8",
              [](TestKernelContext &c) { c.attrs().set("dim", int64_t{8}); });
  expectError("'pooling' must be sum, mean or max", [](TestKernelContext &c) {
    c.attrs().set("pooling", std::string("avg"));
  });
  expectError("attribute 'pooling' of kernel 'embedding_bag' must be a "
              "string, the plan gives an int",
              [](TestKernelContext &c) {
                c.attrs().set("pooling", int64_t{1});
              });
  expectError("'include_last_offset' must be 0 or 1", [](TestKernelContext &c) {
    c.attrs().set("include_last_offset", int64_t{2});
  });
  expectError(
      "padding_idx 10 is past the table's 10 rows",
      [](TestKernelContext &c) { c.attrs().set("padding_idx", int64_t{10}); });
  expectError("'padding_idx' must be -1", [](TestKernelContext &c) {
    c.attrs().set("padding_idx", int64_t{-3});
  });
  expectError("only supported with pooling 'sum'",
              [](TestKernelContext &c) {
                c.attrs().set("pooling", std::string("mean"));
              },
              {f32.tensor, ids, indexTensor({0, 3}, DType::kInt64),
               floatTensor({1, 1, 1})});
  expectError("per_sample_weights) must be float32[3]", none,
              {f32.tensor, ids, indexTensor({0, 3}, DType::kInt64),
               floatTensor({1, 1})});
  // Missing pooling: caught by validate as at plan load.
  TestKernelContext ctx;
  ctx.addInput(f32.tensor)
      .addInput(ids)
      .addInput(indexTensor({0, 3}, DType::kInt64));
  ctx.setNumOutputs(1);
  Status s = runKernel("embedding_bag", ctx);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find(
                "kernel 'embedding_bag' needs the attribute 'pooling'"),
            std::string::npos)
      << s.message();
}

} // namespace
