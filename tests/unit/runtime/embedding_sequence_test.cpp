//===- embedding_sequence_test.cpp - embedding_sequence vs reference ------===//
#include "embedding_test_support.h"
#include "kernels/cpu/embedding_pool.h"
#include "support/test_kernel_context.h"

#include <gtest/gtest.h>

using namespace ember;
using namespace ember::testing;

namespace {

Status runSequence(const TestTable &table, const std::vector<int64_t> &ids,
                   DType indexType, TestKernelContext &ctx) {
  ctx.addInput(table.tensor)
      .addInput(indexTensor(ids, indexType))
      .setNumOutputs(1);
  if (table.format == TableFormat::kInt8RowWise ||
      table.format == TableFormat::kInt4RowWise)
    ctx.attrs().set("format", table.formatName()).set("dim", table.dim);
  return runKernel("embedding_sequence", ctx);
}

void expectRows(const TestTable &table, const std::vector<int64_t> &ids,
                const Tensor &out, const std::string &what) {
  ASSERT_EQ(out.shape(), Shape({static_cast<int64_t>(ids.size()), table.dim}))
      << what;
  for (size_t i = 0; i < ids.size(); ++i) {
    bool valid = ids[i] >= 0 && ids[i] < table.rows;
    for (int64_t d = 0; d < table.dim; ++d) {
      float want = valid ? table.row(ids[i])[d] : 0.0f;
      ASSERT_NEAR(out.data<float>()[i * table.dim + d], want,
                  1e-6f * std::max(1.0f, std::fabs(want)))
          << what << " id " << i << " column " << d;
    }
  }
}

TEST(EmbeddingSequence, MatchesTableRowsForEveryFormat) {
  std::mt19937 gen(17);
  for (embedding::RowIsa isa : supportedRowIsas()) {
    RowIsaGuard guard(isa);
    for (TableFormat format : allFormats()) {
      for (int64_t dim : {1, 9, 32, 70}) {
        TestTable table = makeTable(64, dim, format, 3 + dim);
        for (DType indexType : {DType::kInt32, DType::kInt64}) {
          for (int64_t n : {0, 1, 257}) {
            std::vector<int64_t> ids = randomIds(n, table.rows, gen);
            if (n > 1)
              ids[1] = table.rows - 1; // the largest valid id
            for (int threads : {1, 4}) {
              TestKernelContext ctx(threads);
              Status s = runSequence(table, ids, indexType, ctx);
              std::string what = std::string(embedding::rowIsaName(isa)) + " " +
                                 table.formatName() + " dim " +
                                 std::to_string(dim);
              ASSERT_TRUE(s.isOk()) << what << ": " << s.toString();
              expectRows(table, ids, ctx.output(0), what);
            }
          }
        }
      }
    }
  }
}

TEST(EmbeddingSequence, BoundsCheckModes) {
  TestTable table = makeTable(10, 8, TableFormat::kFloat32, 1);
  std::vector<int64_t> ids = {1, 2, 10, 3, -4};
  {
    TestKernelContext ctx(1, BoundsCheckMode::kFatal);
    ctx.attrs().set("feature_names", std::vector<std::string>{"history"});
    Status s = runSequence(table, ids, DType::kInt64, ctx);
    ASSERT_FALSE(s.isOk());
    EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
    EXPECT_NE(s.message().find("id 10 at position 2 of feature 'history'"),
              std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("10 rows"), std::string::npos) << s.message();
  }
  {
    TestKernelContext ctx(2, BoundsCheckMode::kWarning);
    ASSERT_TRUE(runSequence(table, ids, DType::kInt32, ctx).isOk());
    EXPECT_EQ(ctx.invalidIds(), 2);
    expectRows(table, ids, ctx.output(0), "warning");
  }
}

TEST(EmbeddingSequence, MalformedInputs) {
  TestTable table = makeTable(10, 8, TableFormat::kFloat32, 1);
  TestKernelContext ctx;
  ctx.addInput(table.tensor)
      .addInput(*Tensor::zeros(DType::kInt64, {2, 2}))
      .setNumOutputs(1);
  Status s = runKernel("embedding_sequence", ctx);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("input 1 (indices) must be 1-D"),
            std::string::npos)
      << s.message();
  TestKernelContext ctx2;
  ctx2.addInput(table.tensor)
      .addInput(indexTensor({1}, DType::kInt64))
      .setNumOutputs(1);
  ctx2.attrs().set("dim", int64_t{0});
  s = runKernel("embedding_sequence", ctx2);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("dim must be positive"), std::string::npos)
      << s.message();
}

} // namespace
