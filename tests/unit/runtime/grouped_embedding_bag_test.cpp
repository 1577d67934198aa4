//===- grouped_embedding_bag_test.cpp - grouped_embedding_bag vs reference ===//
#include "embedding_test_support.h"
#include "kernels/cpu/embedding_pool.h"
#include "support/test_kernel_context.h"

#include <gtest/gtest.h>

using namespace ember;
using namespace ember::testing;
using embedding::Pooling;

namespace {

const char *poolingStr(Pooling p) {
  return p == Pooling::kSum ? "sum" : p == Pooling::kMean ? "mean" : "max";
}

/// A grouped lookup: tables, features and a KJT.
struct GroupedCase {
  std::vector<TestTable> tables;
  std::vector<int64_t> featureTables;
  std::vector<Pooling> pooling;
  std::vector<int64_t> outputOffsets;
  int64_t outputWidth = 0;
  int64_t batch = 0;
  std::vector<int64_t> lengths; // [F * B], key-major
  std::vector<int64_t> values;
  std::vector<float> weights;
  DType indexType = DType::kInt64;
};

void setUp(const GroupedCase &c, TestKernelContext &ctx) {
  ctx.addInput(indexTensor(c.values, c.indexType))
      .addInput(indexTensor(c.lengths, c.indexType));
  if (c.weights.empty())
    ctx.addAbsentInput();
  else
    ctx.addInput(floatTensor(c.weights));
  std::vector<std::string> formats, pooling;
  std::vector<int64_t> dims;
  for (const TestTable &t : c.tables) {
    ctx.addInput(t.tensor);
    formats.push_back(t.formatName());
    dims.push_back(t.dim);
  }
  for (Pooling p : c.pooling)
    pooling.push_back(poolingStr(p));
  ctx.setNumOutputs(1);
  ctx.attrs()
      .set("feature_tables", c.featureTables)
      .set("pooling", pooling)
      .set("table_formats", formats)
      .set("table_dims", dims)
      .set("output_offsets", c.outputOffsets)
      .set("output_width", c.outputWidth);
}

void expectMatchesReference(const GroupedCase &c, const Tensor &out,
                            const std::string &what) {
  const int64_t F = static_cast<int64_t>(c.featureTables.size()), B = c.batch;
  ASSERT_EQ(out.shape(), Shape({B, c.outputWidth})) << what;
  std::vector<int64_t> offsets = offsetsOf(c.lengths);
  std::vector<char> covered(c.outputWidth, 0);
  for (int64_t f = 0; f < F; ++f) {
    const TestTable &t = c.tables[c.featureTables[f]];
    for (int64_t d = 0; d < t.dim; ++d)
      covered[c.outputOffsets[f] + d] = 1;
    for (int64_t b = 0; b < B; ++b) {
      int64_t s = f * B + b;
      std::vector<float> want = referenceBag(
          t, c.values.data() + offsets[s],
          c.weights.empty() ? nullptr : c.weights.data() + offsets[s],
          c.lengths[s], c.pooling[f]);
      expectRowNear(out.data<float>() + b * c.outputWidth + c.outputOffsets[f],
                    want.data(), t.dim, c.lengths[s],
                    what + " feature " + std::to_string(f) + " sample " +
                        std::to_string(b));
    }
  }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t col = 0; col < c.outputWidth; ++col)
      if (!covered[col]) {
        ASSERT_EQ(out.data<float>()[b * c.outputWidth + col], 0.0f)
            << what << ": uncovered column " << col << " of sample " << b;
      }
}

/// Random case: tables of every format, features sharing tables, output
/// columns permuted with gaps between them.
GroupedCase randomCase(std::mt19937 &gen, int64_t B, bool weighted,
                       DType indexType) {
  GroupedCase c;
  c.batch = B;
  c.indexType = indexType;
  const std::vector<int64_t> dims = {8, 5, 16, 33, 4};
  for (size_t t = 0; t < allFormats().size(); ++t)
    c.tables.push_back(
        makeTable(40 + 10 * t, dims[t], allFormats()[t], 100 + t));
  c.featureTables = {0, 1, 2, 3, 4, 0, 2};
  const int64_t F = static_cast<int64_t>(c.featureTables.size());
  // Output columns in reverse feature order, one spare column after each.
  int64_t col = 0;
  c.outputOffsets.assign(F, 0);
  for (int64_t f = F - 1; f >= 0; --f) {
    c.outputOffsets[f] = col;
    col += c.tables[c.featureTables[f]].dim + 1;
  }
  c.outputWidth = col;
  for (int64_t f = 0; f < F; ++f)
    c.pooling.push_back(weighted ? Pooling::kSum : static_cast<Pooling>(f % 3));
  for (int64_t f = 0; f < F; ++f) {
    std::vector<int64_t> lengths =
        randomLengths(B, f == 3 ? 0 : 6, gen); // feature 3 empty
    const TestTable &t = c.tables[c.featureTables[f]];
    for (int64_t len : lengths) {
      c.lengths.push_back(len);
      for (int64_t id : randomIds(len, t.rows, gen))
        c.values.push_back(id);
    }
  }
  if (weighted)
    c.weights = randomWeights(c.values.size(), gen);
  return c;
}

TEST(GroupedEmbeddingBag, MatchesPerFeatureReference) {
  std::mt19937 gen(42);
  for (embedding::RowIsa isa : supportedRowIsas()) {
    RowIsaGuard guard(isa);
    for (int64_t B : {1, 7, 64}) {
      for (bool weighted : {false, true}) {
        for (DType indexType : {DType::kInt32, DType::kInt64}) {
          GroupedCase c = randomCase(gen, B, weighted, indexType);
          for (int threads : {1, 3}) {
            TestKernelContext ctx(threads);
            setUp(c, ctx);
            Status s = runKernel("grouped_embedding_bag", ctx);
            std::string what = std::string(embedding::rowIsaName(isa)) +
                               " B=" + std::to_string(B) +
                               " weighted=" + std::to_string(weighted) +
                               " threads=" + std::to_string(threads);
            ASSERT_TRUE(s.isOk()) << what << ": " << s.toString();
            expectMatchesReference(c, ctx.output(0), what);
          }
        }
      }
    }
  }
}

TEST(GroupedEmbeddingBag, EqualsSeparateEmbeddingBagCalls) {
  std::mt19937 gen(3);
  GroupedCase c = randomCase(gen, 32, false, DType::kInt64);
  TestKernelContext grouped(2);
  setUp(c, grouped);
  ASSERT_TRUE(runKernel("grouped_embedding_bag", grouped).isOk());
  std::vector<int64_t> offsets = offsetsOf(c.lengths);
  const int64_t B = c.batch;
  for (size_t f = 0; f < c.featureTables.size(); ++f) {
    const TestTable &t = c.tables[c.featureTables[f]];
    std::vector<int64_t> ids(c.values.begin() + offsets[f * B],
                             c.values.begin() + offsets[(f + 1) * B]);
    std::vector<int64_t> bagOffsets;
    for (int64_t b = 0; b <= B; ++b)
      bagOffsets.push_back(offsets[f * B + b] - offsets[f * B]);
    TestKernelContext single(2);
    single.addInput(t.tensor)
        .addInput(indexTensor(ids, DType::kInt64))
        .addInput(indexTensor(bagOffsets, DType::kInt64))
        .setNumOutputs(1);
    single.attrs().set("pooling", std::string(poolingStr(c.pooling[f])));
    single.attrs().set("format", t.formatName()).set("dim", t.dim);
    ASSERT_TRUE(runKernel("embedding_bag", single).isOk());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t d = 0; d < t.dim; ++d)
        ASSERT_EQ(grouped.output(0).data<float>()[b * c.outputWidth +
                                                  c.outputOffsets[f] + d],
                  single.output(0).data<float>()[b * t.dim + d])
            << "feature " << f << " sample " << b << " column " << d;
  }
}

TEST(GroupedEmbeddingBag, EmptyInputs) {
  std::mt19937 gen(5);
  GroupedCase c = randomCase(gen, 4, false, DType::kInt32);
  // All lengths zero, N = 0.
  std::fill(c.lengths.begin(), c.lengths.end(), 0);
  c.values.clear();
  TestKernelContext ctx;
  setUp(c, ctx);
  ASSERT_TRUE(runKernel("grouped_embedding_bag", ctx).isOk());
  expectMatchesReference(c, ctx.output(0), "all empty");
  // Batch 0.
  c.lengths.clear();
  c.batch = 0;
  TestKernelContext ctx0;
  setUp(c, ctx0);
  ASSERT_TRUE(runKernel("grouped_embedding_bag", ctx0).isOk());
  EXPECT_EQ(ctx0.output(0).shape(), Shape({0, c.outputWidth}));
}

TEST(GroupedEmbeddingBag, BoundsCheckModes) {
  std::mt19937 gen(8);
  GroupedCase c = randomCase(gen, 5, false, DType::kInt64);
  const int64_t B = c.batch;
  std::vector<int64_t> offsets = offsetsOf(c.lengths);
  // Put an invalid id into feature 2 (table 2, 60 rows), sample 1.
  int64_t s = 2 * B + 1;
  if (c.lengths[s] == 0) {
    c.lengths[s] = 1;
    c.values.insert(c.values.begin() + offsets[s], 0);
    offsets = offsetsOf(c.lengths);
  }
  int64_t pos = offsets[s];
  c.values[pos] = 60;
  {
    TestKernelContext ctx(2, BoundsCheckMode::kFatal);
    setUp(c, ctx);
    ctx.attrs().set(
        "feature_names",
        std::vector<std::string>{"a", "b", "clicks", "d", "e", "f", "g"});
    Status s2 = runKernel("grouped_embedding_bag", ctx);
    ASSERT_FALSE(s2.isOk());
    EXPECT_EQ(s2.code(), StatusCode::kOutOfRange);
    const std::string &m = s2.message();
    EXPECT_NE(m.find("id 60 of feature 2 'clicks' at position " +
                     std::to_string(pos)),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("sample 1"), std::string::npos) << m;
    EXPECT_NE(m.find("table 2 of 60 rows"), std::string::npos) << m;
  }
  {
    TestKernelContext ctx(2, BoundsCheckMode::kWarning);
    setUp(c, ctx);
    ASSERT_TRUE(runKernel("grouped_embedding_bag", ctx).isOk());
    EXPECT_EQ(ctx.invalidIds(), 1);
    expectMatchesReference(c, ctx.output(0), "warning");
  }
}

void expectError(
    const std::string &expect,
    const std::function<void(GroupedCase &, TestKernelContext &)> &mutate,
    bool mutateBeforeSetUp = false) {
  std::mt19937 gen(9);
  GroupedCase c = randomCase(gen, 3, false, DType::kInt64);
  TestKernelContext ctx;
  if (mutateBeforeSetUp) {
    mutate(c, ctx);
    setUp(c, ctx);
  } else {
    setUp(c, ctx);
    mutate(c, ctx);
  }
  Status s = runKernel("grouped_embedding_bag", ctx);
  ASSERT_FALSE(s.isOk()) << "expected an error containing '" << expect << "'";
  EXPECT_NE(s.message().find(expect), std::string::npos) << s.toString();
}

TEST(GroupedEmbeddingBag, MalformedInputsAreClearErrors) {
  expectError(
      "not a multiple of the 7 features",
      [](GroupedCase &c, TestKernelContext &) { c.lengths.push_back(0); },
      true);
  expectError(
      "lengths sum to",
      [](GroupedCase &c, TestKernelContext &) { c.values.push_back(0); }, true);
  expectError(
      "lengths[4] is negative",
      [](GroupedCase &c, TestKernelContext &) {
        c.lengths[4] = -1;
        c.lengths[5] += 1;
      },
      true);
  expectError(
      "weights are only supported with sum pooling",
      [](GroupedCase &c, TestKernelContext &) {
        c.weights.assign(c.values.size(), 1.0f);
      },
      true);
  expectError("'pooling' has 6 entries, expected 7",
              [](GroupedCase &, TestKernelContext &ctx) {
                ctx.attrs().set("pooling", std::vector<std::string>(6, "sum"));
              });
  expectError("uses table 9", [](GroupedCase &c, TestKernelContext &ctx) {
    auto t = c.featureTables;
    t[1] = 9;
    ctx.attrs().set("feature_tables", t);
  });
  expectError("outside output_width",
              [](GroupedCase &c, TestKernelContext &ctx) {
                ctx.attrs().set("output_width", int64_t{10});
              });
  expectError("overlap", [](GroupedCase &c, TestKernelContext &ctx) {
    auto o = c.outputOffsets;
    o[1] = o[0];
    ctx.attrs().set("output_offsets", o);
  });
  expectError(
      "'table_dims' has 4 entries", [](GroupedCase &c, TestKernelContext &ctx) {
        ctx.attrs().set("table_dims", std::vector<int64_t>{8, 5, 16, 33});
      });
  expectError("has 16 columns but dim is 17", [](GroupedCase &c,
                                                 TestKernelContext &ctx) {
    ctx.attrs().set("table_dims", std::vector<int64_t>{8, 5, 17, 33, 4});
  });
}

TEST(GroupedEmbeddingBag, WrongValuesDtype) {
  std::mt19937 gen(9);
  GroupedCase c = randomCase(gen, 3, false, DType::kInt64);
  TestKernelContext ctx;
  setUp(c, ctx);
  TestKernelContext bad;
  bad.addInput(floatTensor(std::vector<float>(c.values.size(), 0.0f)))
      .addInput(indexTensor(c.lengths, DType::kInt64))
      .addAbsentInput();
  for (const TestTable &t : c.tables)
    bad.addInput(t.tensor);
  bad.setNumOutputs(1);
  bad.attrs() = ctx.attrs();
  Status s = runKernel("grouped_embedding_bag", bad);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("input 0 (values) must be int32 or int64"),
            std::string::npos)
      << s.toString();
}

} // namespace
