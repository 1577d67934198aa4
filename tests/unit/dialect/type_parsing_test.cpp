//===- type_parsing_test.cpp - Ember types and attributes from text -------===//
#include "dialect_test_utils.h"
#include "mlir/AsmParser/AsmParser.h"

using namespace mlir;
using namespace mlir::ember;

namespace {

class TypeParsingTest : public ember_test::DialectTest {
protected:
  template <typename T> T parse(const std::string &text) {
    return llvm::dyn_cast_or_null<T>(parseType(text, &context));
  }
  std::string print(Type type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    type.print(os);
    return text;
  }
};

TEST_F(TypeParsingTest, KeyedJaggedTensor) {
  auto kjt = parse<KeyedJaggedTensorType>(
      R"(!ember.kjt<["user", "item"], values = i64, lengths = i32, weighted>)");
  ASSERT_TRUE(kjt) << allDiagnostics();
  EXPECT_EQ(kjt.getNumKeys(), 2u);
  EXPECT_EQ(kjt.getKey(0), "user");
  EXPECT_EQ(kjt.getKey(1), "item");
  EXPECT_EQ(kjt.getKeyIndex("item"), 1u);
  EXPECT_FALSE(kjt.getKeyIndex("ctx").has_value());
  EXPECT_TRUE(kjt.getValueType().isSignlessInteger(64));
  EXPECT_TRUE(kjt.getLengthType().isSignlessInteger(32));
  EXPECT_TRUE(kjt.isWeighted());
  EXPECT_FALSE(kjt.isVariableBatch());
  EXPECT_EQ(
      print(kjt),
      R"(!ember.kjt<["user", "item"], values = i64, lengths = i32, weighted>)");
  // The flags may come in any order; they print in a canonical one.
  auto both = parse<KeyedJaggedTensorType>(
      R"(!ember.kjt<["a"], values = i32, lengths = i64, variable_batch, weighted>)");
  ASSERT_TRUE(both);
  EXPECT_TRUE(both.isWeighted());
  EXPECT_TRUE(both.isVariableBatch());
  EXPECT_EQ(
      print(both),
      R"(!ember.kjt<["a"], values = i32, lengths = i64, weighted, variable_batch>)");
}

TEST_F(TypeParsingTest, KeyedJaggedTensorBuilderMatchesParser) {
  Builder b(&context);
  auto built = KeyedJaggedTensorType::get(&context, {"user", "item"},
                                          b.getI64Type(), b.getI32Type());
  EXPECT_EQ(
      built,
      parse<KeyedJaggedTensorType>(
          R"(!ember.kjt<["user", "item"], values = i64, lengths = i32>)"));
  auto renamed = built.withKeys({"x"});
  EXPECT_EQ(renamed.getKeyNames(), SmallVector<StringRef>{"x"});
  EXPECT_EQ(renamed.getValueType(), built.getValueType());
}

TEST_F(TypeParsingTest, BucketKeys) {
  EXPECT_EQ(KeyedJaggedTensorType::getBucketKey("user", 3), "user@3");
  auto parsed = KeyedJaggedTensorType::parseBucketKey("a@b@12");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->first, "a@b");
  EXPECT_EQ(parsed->second, 12);
  EXPECT_FALSE(KeyedJaggedTensorType::parseBucketKey("user").has_value());
  EXPECT_FALSE(KeyedJaggedTensorType::parseBucketKey("user@").has_value());
  EXPECT_FALSE(KeyedJaggedTensorType::parseBucketKey("@1").has_value());
  EXPECT_FALSE(KeyedJaggedTensorType::parseBucketKey("user@x1").has_value());
}

TEST_F(TypeParsingTest, KeyedTensor) {
  auto kt = parse<KeyedTensorType>(
      R"(!ember.keyed_tensor<["user" : 16, "item" : 32, "ctx" : 8], f32>)");
  ASSERT_TRUE(kt) << allDiagnostics();
  EXPECT_EQ(kt.getNumKeys(), 3u);
  EXPECT_EQ(kt.getTotalDim(), 56);
  EXPECT_EQ(kt.getColumnOffset(0), 0);
  EXPECT_EQ(kt.getColumnOffset(1), 16);
  EXPECT_EQ(kt.getColumnOffset(2), 48);
  EXPECT_EQ(kt.getKeyIndex("ctx"), 2u);
  EXPECT_TRUE(kt.getElementType().isF32());
  EXPECT_EQ(print(kt.getValuesType()), "tensor<?x56xf32>");
}

TEST_F(TypeParsingTest, Table) {
  auto table = parse<TableType>("!ember.table<1000x64, int8_rowwise>");
  ASSERT_TRUE(table) << allDiagnostics();
  EXPECT_EQ(table.getRows(), 1000);
  EXPECT_EQ(table.getDim(), 64);
  EXPECT_EQ(table.getFormat(), TableFormat::int8_rowwise);
  EXPECT_TRUE(table.isQuantized());
  EXPECT_EQ(table.getRowBytes(), 72);
  EXPECT_TRUE(table.getElementType().isF32());
  EXPECT_EQ(print(table.getStorageType()), "tensor<1000x72xi8>");

  auto int4 = parse<TableType>("!ember.table<10x6, int4_rowwise>");
  ASSERT_TRUE(int4);
  EXPECT_EQ(int4.getRowBytes(), 11);

  auto half = parse<TableType>("!ember.table<10x8, bf16>");
  ASSERT_TRUE(half);
  EXPECT_FALSE(half.isQuantized());
  EXPECT_TRUE(half.getElementType().isBF16());
  EXPECT_EQ(print(half.getStorageType()), "tensor<10x8xbf16>");
}

TEST_F(TypeParsingTest, JaggedAwaitableMutable) {
  auto jagged = parse<JaggedTensorType>("!ember.jagged<f32, [4, 2]>");
  ASSERT_TRUE(jagged);
  EXPECT_EQ(print(jagged.getValuesType()), "tensor<?x4x2xf32>");
  EXPECT_EQ(print(jagged.getOffsetsType()), "tensor<?xi64>");
  auto awaitable = parse<AwaitableType>(
      R"(!ember.awaitable<!ember.keyed_tensor<["a" : 4], f32>>)");
  ASSERT_TRUE(awaitable);
  EXPECT_TRUE(isa<KeyedTensorType>(awaitable.getValueType()));
  auto mut = parse<MutableTensorType>("!ember.mut<tensor<4x8xf32>>");
  ASSERT_TRUE(mut);
  EXPECT_EQ(print(mut.getTensorType()), "tensor<4x8xf32>");
}

struct BadType {
  const char *text;
  const char *message;
};

class BadTypeTest : public TypeParsingTest,
                    public ::testing::WithParamInterface<BadType> {};

TEST_P(BadTypeTest, IsRejectedWithMessage) {
  EXPECT_FALSE(parseType(GetParam().text, &context));
  EXPECT_TRUE(sawDiagnostic(GetParam().message)) << "diagnostics were:\n"
                                                 << allDiagnostics();
}

INSTANTIATE_TEST_SUITE_P(
    Types, BadTypeTest,
    ::testing::Values(
        BadType{R"(!ember.kjt<["a", "a"], values = i64, lengths = i32>)",
                "kjt key \"a\" appears more than once"},
        BadType{R"(!ember.kjt<[""], values = i64, lengths = i32>)",
                "kjt key #0 is empty"},
        BadType{R"(!ember.kjt<["a"], values = f32, lengths = i32>)",
                "kjt value type must be i32 or i64"},
        BadType{R"(!ember.kjt<["a"], values = i64, lengths = i8>)",
                "kjt length type must be i32 or i64"},
        BadType{R"(!ember.kjt<["a"], values = i64, lengths = i32, dense>)",
                "expected 'weighted' or 'variable_batch'"},
        BadType{R"(!ember.keyed_tensor<["a" : -4], f32>)",
                "must be positive, got -4"},
        BadType{R"(!ember.keyed_tensor<["a" : 4], i64>)",
                "keyed_tensor element type must be a float type"},
        BadType{"!ember.table<0x8, f32>", "table rows must be positive"},
        BadType{"!ember.table<8x3, int4_rowwise>",
                "int4_rowwise table needs an even dim, got 3"},
        BadType{"!ember.table<8x4, int16>", "unknown table format 'int16'"},
        BadType{"!ember.table<8, f32>", "expected table shape ROWSxDIM"},
        BadType{"!ember.jagged<f32, [0]>",
                "jagged dense dim #0 must be positive"}));

TEST_F(TypeParsingTest, EnumAttributes) {
  auto pooling = dyn_cast_or_null<PoolingModeAttr>(
      parseAttribute("#ember<pooling max>", &context));
  ASSERT_TRUE(pooling) << allDiagnostics();
  EXPECT_EQ(pooling.getValue(), PoolingMode::max);

  auto format = dyn_cast_or_null<TableFormatAttr>(
      parseAttribute("#ember<table_format int4_rowwise>", &context));
  ASSERT_TRUE(format);
  EXPECT_EQ(format.getValue(), TableFormat::int4_rowwise);

  auto codec = dyn_cast_or_null<CommCodecAttr>(
      parseAttribute("#ember<codec bf16>", &context));
  ASSERT_TRUE(codec);
  EXPECT_EQ(codec.getValue(), CommCodec::bf16);

  auto reduce = dyn_cast_or_null<ReduceKindAttr>(
      parseAttribute("#ember<reduce min>", &context));
  ASSERT_TRUE(reduce);
  EXPECT_EQ(reduce.getValue(), ReduceKind::min);

  auto sharding = dyn_cast_or_null<ShardingTypeAttr>(
      parseAttribute("#ember<sharding_type column_wise>", &context));
  ASSERT_TRUE(sharding);
  EXPECT_EQ(sharding.getValue(), ShardingType::column_wise);

  EXPECT_FALSE(parseAttribute("#ember<pooling median>", &context));
  EXPECT_TRUE(sawDiagnostic("sum, mean, max")) << allDiagnostics();
}

} // namespace
