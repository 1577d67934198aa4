//===- builder_test.cpp - building Ember IR through the op builders -------===//
//
// Builds a sharded lookup program (KJT -> KJT all-to-all -> embedding bag
// collection -> pooled all-to-all -> wait) with OpBuilder, verifies it,
// prints it and parses it back; checks that verifier failures reach a
// diagnostic handler with their message; and exercises the sharding
// attributes and verifyTableSharding.
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberDialect.h"
#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberShardingAttrs.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::ember;

namespace {

class DialectBuilderTest : public ::testing::Test {
protected:
  DialectBuilderTest() {
    context.loadDialect<EmberDialect, func::FuncDialect>();
  }

  /// Runs `fn` with every diagnostic captured into `messages` instead of
  /// printed; returns whether `fn` succeeded.
  template <typename Fn>
  bool captureDiagnostics(std::vector<std::string> &messages, Fn &&fn) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      messages.push_back(diag.str());
      return success();
    });
    return succeeded(fn());
  }

  static std::string print(Operation *op) {
    std::string text;
    llvm::raw_string_ostream os(text);
    op->print(os);
    return text;
  }

  GroupAttr twoRanks() { return GroupAttr::get(&context, {0, 1}); }

  MLIRContext context;
  OpBuilder builder{&context};
  Location loc = UnknownLoc::get(&context);
};

// Rank 0 of two: the global KJT has keys user, item (tables on rank 0) and ad
// (table on rank 1). Its user and item features come in through the KJT
// all-to-all, are pooled by an embedding bag collection over two tables, and
// the pooled [B_global, 48] goes out through the pooled all-to-all, which
// brings back [B_local, 48 + 16].
TEST_F(DialectBuilderTest, BuildsShardedLookupProgram) {
  Type i32 = builder.getI32Type(), i64 = builder.getI64Type(),
       f32 = builder.getF32Type();
  auto dynamic1D = [&](Type element) {
    return RankedTensorType::get({ShapedType::kDynamic}, element);
  };
  auto globalKjt =
      KeyedJaggedTensorType::get(&context, {"user", "item", "ad"}, i64, i32);
  auto localKjt = globalKjt.withKeys({"user", "item"});
  auto userTable = TableType::get(&context, 1000, 16, TableFormat::f32);
  auto itemTable = TableType::get(&context, 500, 32, TableFormat::f32);
  auto pooledType =
      KeyedTensorType::get(&context, {"user", "item"}, {16, 32}, f32);
  auto gathered = RankedTensorType::get({4, 64}, f32);

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto funcType = builder.getFunctionType(
      {dynamic1D(i64), dynamic1D(i32), userTable, itemTable}, {gathered});
  auto func = func::FuncOp::create(builder, loc, "rank0_forward", funcType);
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  Value values = body->getArgument(0), lengths = body->getArgument(1);

  GroupAttr group = twoRanks();
  auto kjt = KJTCreateOp::create(builder, loc, globalKjt, values, lengths,
                                 /*offsets=*/Value(), /*weights=*/Value(),
                                 /*batch_sizes=*/Value());
  SmallVector<int64_t> keySplits = {2, 1};
  auto splitsType = RankedTensorType::get({2, 3}, i64);
  auto splits = KJTAllToAllSplitsOp::create(
      builder, loc, AwaitableType::get(&context, splitsType), kjt, keySplits,
      group);
  auto splitsValue = WaitOp::create(builder, loc, splits.getResult());
  auto tensors = KJTAllToAllTensorsOp::create(
      builder, loc, AwaitableType::get(&context, localKjt), kjt, splitsValue,
      keySplits, /*batch_size_per_rank=*/DenseI64ArrayAttr(), group);
  auto features = WaitOp::create(builder, loc, tensors.getResult());
  auto sum = PoolingModeAttr::get(&context, PoolingMode::sum);
  auto mean = PoolingModeAttr::get(&context, PoolingMode::mean);
  auto ebc = EmbeddingBagCollectionOp::create(
      builder, loc, pooledType, features,
      ValueRange{body->getArgument(2), body->getArgument(3)},
      ArrayRef<int64_t>{0, 1}, builder.getArrayAttr({sum, mean}));
  auto dense = KeyedTensorValuesOp::create(builder, loc,
                                           pooledType.getValuesType(), ebc);
  auto pooled = PooledAllToAllOp::create(
      builder, loc, AwaitableType::get(&context, gathered), dense,
      /*batch_of=*/Value(), ArrayRef<int64_t>{48, 16}, builder.getDenseI64ArrayAttr({4, 4}), group,
      CommCodecAttr(), /*segment_dims=*/DenseI64ArrayAttr(),
      /*segment_columns=*/DenseI64ArrayAttr());
  auto result = WaitOp::create(builder, loc, pooled.getResult());
  func::ReturnOp::create(builder, loc, ValueRange{result});

  // The builders inferred the wait types from the awaitables.
  EXPECT_EQ(splitsValue.getType(), splitsType);
  EXPECT_EQ(features.getType(), localKjt);
  EXPECT_EQ(result.getType(), gathered);

  std::vector<std::string> messages;
  ASSERT_TRUE(captureDiagnostics(messages, [&] { return verify(*module); }))
      << (messages.empty() ? "" : messages.front());

  // The printed IR parses back to the same IR.
  std::string text = print(*module);
  EXPECT_NE(text.find("ember.pooled_all_to_all"), std::string::npos) << text;
  EXPECT_NE(text.find("ember.kjt_all_to_all.tensors"), std::string::npos);
  OwningOpRef<ModuleOp> reparsed = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(reparsed) << text;
  ASSERT_TRUE(succeeded(verify(*reparsed)));
  EXPECT_EQ(print(*reparsed), text);
}

// A collective built with attributes that do not match its group fails the
// verifier; the message reaches the diagnostic handler.
TEST_F(DialectBuilderTest, VerifierFailureReachesDiagnosticHandler) {
  Type f32 = builder.getF32Type();
  auto input = RankedTensorType::get({8, 16}, f32);
  auto output = RankedTensorType::get({4, 48}, f32);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, loc, "bad",
                                   builder.getFunctionType({input}, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  // Three per-rank dims for a group of two ranks.
  PooledAllToAllOp::create(builder, loc, AwaitableType::get(&context, output),
                           body->getArgument(0), /*batch_of=*/Value(),
                           ArrayRef<int64_t>{16, 16, 16},
                           DenseI64ArrayAttr(), twoRanks(), CommCodecAttr(),
                           DenseI64ArrayAttr(), DenseI64ArrayAttr());
  func::ReturnOp::create(builder, loc);

  std::vector<std::string> messages;
  EXPECT_FALSE(captureDiagnostics(messages, [&] { return verify(*module); }));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "'ember.pooled_all_to_all' op 'dim_per_rank' has 3 "
                         "entries but the group has 2 ranks");
}

// A codec on an integer payload is rejected; the same op without codec passes.
TEST_F(DialectBuilderTest, CodecNeedsFloatPayload) {
  auto ids = RankedTensorType::get({4, 2}, builder.getI64Type());
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, loc, "ids",
                                   builder.getFunctionType({ids}, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  auto reduce =
      AllReduceOp::create(builder, loc, AwaitableType::get(&context, ids),
                          body->getArgument(0), ReduceKind::max, twoRanks(),
                          CommCodecAttr::get(&context, CommCodec::bf16));
  func::ReturnOp::create(builder, loc);

  std::vector<std::string> messages;
  EXPECT_FALSE(captureDiagnostics(messages, [&] { return verify(*module); }));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "'ember.all_reduce' op codec bf16 needs a "
                         "floating-point payload, got element type 'i64'");

  reduce.removeCodecAttr();
  messages.clear();
  EXPECT_TRUE(captureDiagnostics(messages, [&] { return verify(*module); }));
  EXPECT_TRUE(messages.empty());
}

//===----------------------------------------------------------------------===//
// Sharding attributes
//===----------------------------------------------------------------------===//

TEST_F(DialectBuilderTest, GroupGetCheckedReportsDuplicateRank) {
  std::vector<std::string> messages;
  GroupAttr group;
  captureDiagnostics(messages, [&] {
    group = GroupAttr::getChecked([&] { return emitError(loc); }, &context,
                                  builder.getDenseI64ArrayAttr({2, 0, 2}),
                                  /*ranks_per_node=*/int64_t{0});
    return success(group != nullptr);
  });
  EXPECT_FALSE(group);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0],
            "rank 2 appears twice in the group (positions 0 and 2)");

  GroupAttr grid = GroupAttr::get(&context, {0, 1, 2, 3, 4, 5, 6, 7}, 4);
  EXPECT_EQ(grid.getSize(), 8);
  EXPECT_EQ(grid.getPosition(5), 5);
  EXPECT_EQ(grid.getPosition(9), std::nullopt);
  EXPECT_EQ(grid.getNodeOf(5), 1);
  EXPECT_EQ(twoRanks().getNodeOf(1), std::nullopt);
}

TEST_F(DialectBuilderTest, ShardingMapsOntoParameterSharding) {
  auto shard0 = ShardAttr::get(&context, {0, 0}, {600, 64}, 4);
  auto shard1 = ShardAttr::get(&context, {600, 0}, {400, 64}, 5, "cuda:7");
  std::vector<std::string> messages;
  ShardingAttr twrw;
  ASSERT_TRUE(captureDiagnostics(messages, [&] {
    twrw = ShardingAttr::getChecked(
        [&] { return emitError(loc); }, &context, ShardingType::table_row_wise,
        ArrayRef<ShardAttr>{shard0, shard1}, DenseI64ArrayAttr(),
        /*ranks_per_node=*/int64_t{4}, StringRef("fused"));
    return success(twrw != nullptr);
  })) << (messages.empty() ? "" : messages.front());
  EXPECT_EQ(twrw.getShardRanks(), (SmallVector<int64_t>{4, 5}));
  // TorchRec placements: the shard's own device, else cuda:<local rank>.
  EXPECT_EQ(shard0.getPlacement(/*ranksPerNode=*/4), "rank:4/cuda:0");
  EXPECT_EQ(shard0.getPlacement(), "rank:4/cuda:4");
  EXPECT_EQ(shard1.getPlacement(4), "rank:5/cuda:7");
  EXPECT_TRUE(succeeded(
      verifyTableSharding(twrw, 1000, 64, [&] { return emitError(loc); })));

  auto dp = ShardingAttr::get(&context, ShardingType::data_parallel, {});
  EXPECT_TRUE(dp.isReplicated());
  EXPECT_TRUE(dp.getShardRanks().empty());
  EXPECT_EQ(dp.getComputeKernel(), "fused");
}

/// verifyTableSharding's message for `sharding` on a rows x dim table, or ""
/// when it fits.
std::string tableShardingError(MLIRContext &context, ShardingAttr sharding,
                               int64_t rows, int64_t dim) {
  std::vector<std::string> messages;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    messages.push_back(diag.str());
    return success();
  });
  Location loc = UnknownLoc::get(&context);
  bool ok = succeeded(
      verifyTableSharding(sharding, rows, dim, [&] { return emitError(loc); }));
  if (ok)
    return messages.empty() ? "" : "succeeded but reported " + messages[0];
  return messages.empty() ? "failed without a message" : messages[0];
}

TEST_F(DialectBuilderTest, VerifyTableShardingChecksTheTiling) {
  auto shard = [&](int64_t row, int64_t col, int64_t rows, int64_t cols,
                   int64_t rank) {
    return ShardAttr::get(&context, {row, col}, {rows, cols}, rank);
  };
  auto sharding = [&](ShardingType type, ArrayRef<ShardAttr> shards) {
    return ShardingAttr::get(&context, type, shards);
  };
  auto tw = sharding(ShardingType::table_wise, {shard(0, 0, 1000, 64, 3)});
  auto rw = sharding(ShardingType::row_wise,
                     {shard(0, 0, 500, 64, 0), shard(500, 0, 500, 64, 1)});
  auto cw = sharding(ShardingType::column_wise,
                     {shard(0, 0, 1000, 32, 0), shard(0, 32, 1000, 32, 0)});
  auto dp = sharding(ShardingType::data_parallel, {});

  EXPECT_EQ(tableShardingError(context, tw, 1000, 64), "");
  EXPECT_EQ(tableShardingError(context, rw, 1000, 64), "");
  EXPECT_EQ(tableShardingError(context, cw, 1000, 64), "");
  EXPECT_EQ(tableShardingError(context, dp, 7, 3), "");

  EXPECT_EQ(tableShardingError(context, tw, 1000, 32),
            "table_wise shard must cover the whole 1000x32 table, got sizes "
            "[1000, 64]");
  EXPECT_EQ(tableShardingError(context, rw, 1000, 128),
            "row_wise shard #0 has 64 columns but the table has 128 (row-wise "
            "shards take full rows)");
  EXPECT_EQ(tableShardingError(context, cw, 10, 64),
            "column_wise shard #0 has 1000 rows but the table has 10 "
            "(column-wise shards take full columns)");
  EXPECT_EQ(tableShardingError(context, rw, 800, 64),
            "row_wise shard #1 (offsets [500, 0], sizes [500, 64]) lies "
            "outside the 800x64 table");
  EXPECT_EQ(tableShardingError(context, cw, 1000, 48),
            "column_wise shard #1 (offsets [0, 32], sizes [1000, 32]) lies "
            "outside the 1000x48 table");
  EXPECT_EQ(tableShardingError(context, rw, 1200, 64),
            "row_wise shards cover 64000 of the 76800 elements of the 1200x64 "
            "table; they must tile it without gaps");
  EXPECT_EQ(tableShardingError(context, cw, 1000, 96),
            "column_wise shards cover 64000 of the 96000 elements of the "
            "1000x96 table; they must tile it without gaps");
  EXPECT_EQ(tableShardingError(context, rw, -1, 64),
            "cannot shard a table of -1x64");
  EXPECT_EQ(tableShardingError(context, rw, int64_t{1} << 62, 64),
            "cannot shard a table of 4611686018427387904x64: more than "
            "9223372036854775807 elements");
  EXPECT_EQ(tableShardingError(context, ShardingAttr(), 10, 4),
            "missing sharding");
}

} // namespace
