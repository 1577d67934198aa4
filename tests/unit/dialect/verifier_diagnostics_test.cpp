//===- verifier_diagnostics_test.cpp - verifier failures as diagnostics ---===//
//
// Builds invalid IR through the C++ API and checks that verification fails
// with the expected message (caught by a ScopedDiagnosticHandler).
//
//===----------------------------------------------------------------------===//
#include "dialect_test_utils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace mlir::ember;

namespace {

class VerifierDiagnosticsTest : public ember_test::DialectTest {
protected:
  VerifierDiagnosticsTest() : builder(&context), loc(builder.getUnknownLoc()) {
    module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
  }

  Block *makeFunc(TypeRange types) {
    auto func = func::FuncOp::create(builder, loc, "f",
                                     builder.getFunctionType(types, {}));
    Block *entry = func.addEntryBlock();
    builder.setInsertionPointToEnd(entry);
    return entry;
  }

  /// Verifies the module, expecting failure with `message`.
  void expectFailure(const std::string &message) {
    func::ReturnOp::create(builder, loc);
    EXPECT_TRUE(failed(verify(*module)));
    EXPECT_TRUE(sawDiagnostic(message))
        << "expected \"" << message << "\"; diagnostics were:\n"
        << allDiagnostics();
  }

  RankedTensorType dyn1D(Type elementType) {
    return RankedTensorType::get({ShapedType::kDynamic}, elementType);
  }

  OpBuilder builder;
  Location loc;
  OwningOpRef<ModuleOp> module;
};

TEST_F(VerifierDiagnosticsTest, EmbeddingBagWeightsNeedSum) {
  auto table = TableType::get(&context, 10, 4, TableFormat::f32);
  Block *body =
      makeFunc({table, dyn1D(builder.getI64Type()), dyn1D(builder.getI64Type()),
                dyn1D(builder.getF32Type())});
  auto result =
      RankedTensorType::get({ShapedType::kDynamic, 4}, builder.getF32Type());
  EmbeddingBagOp::create(
      builder, loc, result, body->getArgument(0), body->getArgument(1),
      body->getArgument(2), body->getArgument(3),
      PoolingModeAttr::get(&context, PoolingMode::max), nullptr, nullptr);
  expectFailure("per-sample weights are only supported with pooling = sum, "
                "got pooling = max");
}

TEST_F(VerifierDiagnosticsTest, EmbeddingBagResultDim) {
  auto table = TableType::get(&context, 10, 4, TableFormat::f32);
  Block *body = makeFunc(
      {table, dyn1D(builder.getI64Type()), dyn1D(builder.getI64Type())});
  auto result =
      RankedTensorType::get({ShapedType::kDynamic, 5}, builder.getF32Type());
  EmbeddingBagOp::create(builder, loc, result, body->getArgument(0),
                         body->getArgument(1), body->getArgument(2), Value(),
                         PoolingModeAttr::get(&context, PoolingMode::sum),
                         nullptr, nullptr);
  expectFailure("result dim 1 must be the table dim 4, got 5");
}

TEST_F(VerifierDiagnosticsTest, KJTCreateWithoutLengthsOrOffsets) {
  auto kjt = KeyedJaggedTensorType::get(&context, {"a"}, builder.getI64Type(),
                                        builder.getI32Type());
  Block *body = makeFunc({dyn1D(builder.getI64Type())});
  KJTCreateOp::create(builder, loc, kjt, body->getArgument(0), Value(), Value(),
                      Value(), Value());
  expectFailure("needs lengths or offsets (or both)");
}

TEST_F(VerifierDiagnosticsTest, TableInitialValueType) {
  auto table = TableType::get(&context, 4, 8, TableFormat::int8_rowwise);
  auto wrong = RankedTensorType::get({4, 8}, builder.getI8Type());
  TableOp::create(builder, loc, "t", table,
                  DenseElementsAttr::get(wrong, builder.getI8IntegerAttr(0)),
                  nullptr, nullptr, nullptr);
  EXPECT_TRUE(failed(verify(*module)));
  EXPECT_TRUE(sawDiagnostic("initial value must have the table's storage type "
                            "'tensor<4x16xi8>', got 'tensor<4x8xi8>'"))
      << allDiagnostics();
}

TEST_F(VerifierDiagnosticsTest, TableRefTypeMismatchFromText) {
  const char *text = R"mlir(
    ember.table @t : !ember.table<4x2, f32>
    func.func @f() -> !ember.table<4x2, bf16> {
      %t = ember.table.ref @t : !ember.table<4x2, bf16>
      return %t : !ember.table<4x2, bf16>
    }
  )mlir";
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(text, &context);
  EXPECT_FALSE(parsed);
  EXPECT_TRUE(
      sawDiagnostic("result type '!ember.table<4x2, bf16>' does not "
                    "match the type '!ember.table<4x2, f32>' of table @t"))
      << allDiagnostics();
}

TEST_F(VerifierDiagnosticsTest, MutableSliceOutOfBounds) {
  auto source = MutableTensorType::get(
      &context, RankedTensorType::get({4, 8}, builder.getF32Type()));
  auto view = MutableTensorType::get(
      &context, RankedTensorType::get({4, 4}, builder.getF32Type()));
  Block *body = makeFunc({source});
  MutSliceOp::create(builder, loc, view, body->getArgument(0), ValueRange(),
                     ValueRange(), ValueRange(),
                     builder.getDenseI64ArrayAttr({0, 6}),
                     builder.getDenseI64ArrayAttr({4, 4}),
                     builder.getDenseI64ArrayAttr({1, 1}));
  expectFailure("slice of dim 1 (offset 6, size 4, stride 1) runs past the "
                "source size 8");
}

TEST_F(VerifierDiagnosticsTest, ValidIRProducesNoDiagnostics) {
  const char *text = R"mlir(
    func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
      %p = ember.kjt.permute %k [1, 0]
          : !ember.kjt<["a", "b"], values = i64, lengths = i32>
          -> !ember.kjt<["b", "a"], values = i64, lengths = i32>
      return
    }
  )mlir";
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(text, &context);
  EXPECT_TRUE(parsed);
  EXPECT_TRUE(messages.empty()) << allDiagnostics();
}

} // namespace
