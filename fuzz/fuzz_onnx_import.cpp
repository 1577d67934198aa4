//===- fuzz_onnx_import.cpp - Fuzzing the ONNX importer -------------------===//
//
// Input: [flags: u8][ModelProto bytes]. The bytes are written to
// SCRATCH/model.onnx and imported with importOnnxFile, the importer
// library's entry point (what `ember-translate --import-onnx` and
// ember-compile call); flags bit 0 skips the ONNX checker and shape
// inference (--skip-onnx-checker), so that models the checker would refuse
// reach the importer's own checks. The import must give a verified module
// or diagnostics, never crash or allocate for what the model only declares.
//
//===----------------------------------------------------------------------===//
#include "frontends/onnx/OnnxImporter.h"
#include "fuzz_support.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <memory>

using namespace mlir::ember::onnx_importer;

namespace {
std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  registerOnnxImportDialects(registry);
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
  ember::fuzz::ByteReader in(data, size);
  uint8_t flags = in.u8();
  std::string path = ember::fuzz::scratchDir() + "/model.onnx";
  ember::fuzz::writeFile(path, in.rest());
  mlir::ScopedDiagnosticHandler quiet(
      context.get(), [](mlir::Diagnostic &) { return mlir::success(); });
  OnnxImportOptions options;
  options.runChecker = options.runShapeInference = !(flags & 1);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importOnnxFile(path, context.get(), options);
  if (module)
    EMBER_FUZZ_CHECK(mlir::succeeded(mlir::verify(*module)),
                     "the importer returned a module that does not verify");
  return 0;
}
