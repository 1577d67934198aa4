//===- fuzz_mlir_parse.cpp - Fuzzing the Ember dialect's parser/verifier --===//
//
// Input: MLIR text. It is parsed and verified as `ember-opt` does (the Ember
// dialect with func, arith, tensor, tosa, scf and affine); a module that
// verifies is printed, and the printed text must parse and verify again
// (the custom assembly formats of Ember's types, attributes and ops must
// round-trip). Diagnostics are swallowed; the context is renewed every 256
// inputs so that uniqued types and attributes do not pile up.
//
// Inputs nested deeper than kMaxNesting brackets are skipped: MLIR's
// recursive-descent parser (libMLIR, upstream) has no depth limit and
// overflows the stack on some 10,000 nested parentheses (finding 9 in
// docs/reliability.md); that is not Ember's code, and without the filter the
// campaign would find nothing else.
//
//===----------------------------------------------------------------------===//
#include "dialects/ember/EmberDialect.h"
#include "fuzz_support.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <memory>

namespace {

constexpr int kMaxNesting = 200;

/// The deepest nesting of (), [], {} and <> outside strings and comments
/// (each kind counted on its own, so that the '>' of "->" closes nothing).
int nestingDepth(const std::string &text) {
  const std::string open = "([{<", close = ")]}>";
  int depth[4] = {0, 0, 0, 0}, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n')
        ++i;
    } else if (size_t k = open.find(c); k != std::string::npos) {
      ++depth[k];
      deepest = std::max(deepest, depth[0] + depth[1] + depth[2] + depth[3]);
    } else if (size_t k = close.find(c); k != std::string::npos) {
      depth[k] = depth[k] > 0 ? depth[k] - 1 : 0;
    }
  }
  return deepest;
}

std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  registry.insert<mlir::ember::EmberDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::tosa::TosaDialect, mlir::scf::SCFDialect,
                  mlir::affine::AffineDialect>();
  auto context = std::make_unique<mlir::MLIRContext>(
      registry, mlir::MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  return context;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static std::unique_ptr<mlir::MLIRContext> context;
  static unsigned uses = 0;
  if (!context || ++uses % 256 == 0)
    context = makeContext();
  mlir::ScopedDiagnosticHandler quiet(
      context.get(), [](mlir::Diagnostic &) { return mlir::success(); });
  // MLIR's lexer relies on a NUL after the buffer (as files read by
  // ember-opt have): a std::string provides it.
  std::string text(reinterpret_cast<const char *>(data), size);
  if (nestingDepth(text) > kMaxNesting)
    return 0;
  mlir::ParserConfig config(context.get());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config);
  if (!module)
    return 0;
  std::string printed;
  {
    llvm::raw_string_ostream os(printed);
    module->print(os);
  }
  mlir::OwningOpRef<mlir::ModuleOp> again =
      mlir::parseSourceString<mlir::ModuleOp>(printed, config);
  EMBER_FUZZ_CHECK(again,
                   "the printed module does not parse again:\n" + printed);
  return 0;
}
