//===- op_builders_test.cpp - building Ember IR programmatically ----------===//
#include "dialect_test_utils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::ember;

namespace {

class OpBuildersTest : public ember_test::DialectTest {
protected:
  OpBuildersTest() : builder(&context), loc(builder.getUnknownLoc()) {
    module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// A function with arguments of `types`, the builder placed in its body.
  func::FuncOp makeFunc(TypeRange types) {
    auto func = func::FuncOp::create(builder, loc, "f",
                                     builder.getFunctionType(types, {}));
    Block *entry = func.addEntryBlock();
    builder.setInsertionPointToEnd(entry);
    return func;
  }

  void finishFunc() { func::ReturnOp::create(builder, loc); }

  KeyedJaggedTensorType kjt(ArrayRef<StringRef> keys, bool weighted = false) {
    return KeyedJaggedTensorType::get(&context, keys, builder.getI64Type(),
                                      builder.getI32Type(), weighted);
  }

  OpBuilder builder;
  Location loc;
  OwningOpRef<ModuleOp> module;
};

TEST_F(OpBuildersTest, TablesAndEmbeddingBagCollection) {
  auto t0Type = TableType::get(&context, 1000, 16, TableFormat::f32);
  auto t1Type = TableType::get(&context, 500, 32, TableFormat::int8_rowwise);
  auto t0 = TableOp::create(builder, loc, "t0", t0Type, /*value=*/nullptr,
                            /*file=*/nullptr, /*offset=*/nullptr,
                            /*sharding=*/nullptr);
  auto t1 = TableOp::create(builder, loc, "t1", t1Type, nullptr,
                            builder.getStringAttr("t1.bin"),
                            builder.getI64IntegerAttr(0), nullptr);

  func::FuncOp func = makeFunc({kjt({"user", "item", "ctx"})});
  Value features = func.getArgument(0);
  Value r0 = TableRefOp::create(builder, loc, t0);
  Value r1 = TableRefOp::create(builder, loc, t1);
  auto ebc = EmbeddingBagCollectionOp::create(
      builder, loc, features, ValueRange{r0, r1}, {0, 1, 0},
      {PoolingMode::sum, PoolingMode::mean});
  finishFunc();

  ASSERT_TRUE(succeeded(verify(*module))) << allDiagnostics();
  KeyedTensorType result = ebc.getType();
  EXPECT_EQ(result.getKeyNames(),
            (SmallVector<StringRef>{"user", "item", "ctx"}));
  EXPECT_EQ(result.getDims(), (ArrayRef<int64_t>{16, 32, 16}));
  EXPECT_EQ(result.getTotalDim(), 64);
  EXPECT_EQ(result.getColumnOffset(2), 48);
  EXPECT_EQ(cast<PoolingModeAttr>(ebc.getPooling()[1]).getValue(),
            PoolingMode::mean);
}

TEST_F(OpBuildersTest, KJTRestructuringInfersTypes) {
  func::FuncOp func = makeFunc({kjt({"a", "b", "c"}, /*weighted=*/true)});
  Value input = func.getArgument(0);

  auto permute =
      KJTPermuteOp::create(builder, loc, input, ArrayRef<int64_t>{2, 0});
  EXPECT_EQ(permute.getType().getKeyNames(),
            (SmallVector<StringRef>{"c", "a"}));
  EXPECT_TRUE(permute.getType().isWeighted());

  auto split = KJTSplitOp::create(builder, loc, input, ArrayRef<int64_t>{1, 2});
  ASSERT_EQ(split.getNumResults(), 2u);
  EXPECT_EQ(
      cast<KeyedJaggedTensorType>(split.getResult(1).getType()).getKeyNames(),
      (SmallVector<StringRef>{"b", "c"}));

  auto concat = KJTConcatOp::create(
      builder, loc, ValueRange{split.getResult(1), split.getResult(0)});
  EXPECT_EQ(concat.getType().getKeyNames(),
            (SmallVector<StringRef>{"b", "c", "a"}));

  auto bucketize = KJTBucketizeOp::create(builder, loc, input,
                                          ArrayRef<int64_t>{10, 20, 30}, 2);
  EXPECT_EQ(bucketize.getResult().getType().getKeyNames(),
            (SmallVector<StringRef>{"a@0", "b@0", "c@0", "a@1", "b@1", "c@1"}));

  auto values = KJTValuesOp::create(builder, loc, input);
  EXPECT_TRUE(cast<RankedTensorType>(values.getType())
                  .getElementType()
                  .isSignlessInteger(64));
  auto weights = KJTWeightsOp::create(builder, loc, input);
  EXPECT_TRUE(
      cast<RankedTensorType>(weights.getType()).getElementType().isF32());
  finishFunc();
  EXPECT_TRUE(succeeded(verify(*module))) << allDiagnostics();
}

TEST_F(OpBuildersTest, KeyedTensorGetAndJaggedValues) {
  auto ktType = KeyedTensorType::get(&context, {"u", "i"}, {16, 32},
                                     builder.getF32Type());
  auto jaggedType = JaggedTensorType::get(&context, builder.getF32Type(), {4});
  func::FuncOp func = makeFunc({ktType, jaggedType});
  auto get = KeyedTensorGetOp::create(builder, loc, func.getArgument(0), "i");
  EXPECT_EQ(cast<RankedTensorType>(get.getType()).getDimSize(1), 32);
  auto values = JaggedValuesOp::create(builder, loc, func.getArgument(1));
  EXPECT_EQ(cast<RankedTensorType>(values.getType()).getShape(),
            (ArrayRef<int64_t>{ShapedType::kDynamic, 4}));
  finishFunc();
  EXPECT_TRUE(succeeded(verify(*module))) << allDiagnostics();
}

TEST_F(OpBuildersTest, PermuteFoldsThroughBuilder) {
  func::FuncOp func = makeFunc({kjt({"a", "b", "c"})});
  Value input = func.getArgument(0);
  auto identity =
      KJTPermuteOp::create(builder, loc, input, ArrayRef<int64_t>{0, 1, 2});
  SmallVector<OpFoldResult> folded;
  ASSERT_TRUE(succeeded(identity->fold(folded)));
  ASSERT_EQ(folded.size(), 1u);
  EXPECT_EQ(dyn_cast<Value>(folded[0]), input);

  auto first =
      KJTPermuteOp::create(builder, loc, input, ArrayRef<int64_t>{2, 1, 0});
  auto second = KJTPermuteOp::create(builder, loc, first.getResult(),
                                     ArrayRef<int64_t>{0});
  folded.clear();
  ASSERT_TRUE(succeeded(second->fold(folded)));
  // Folded in place: now a single permute of the original input.
  EXPECT_EQ(second.getInput(), input);
  EXPECT_EQ(second.getPermutation(), (ArrayRef<int64_t>{2}));
  finishFunc();
  EXPECT_TRUE(succeeded(verify(*module))) << allDiagnostics();
}

} // namespace
