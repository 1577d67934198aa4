//===- OnnxImporter.h - Import an ONNX model into Ember IR ------*- C++ -*-===//
//
// The public entry point of the ONNX frontend: read a ModelProto (with its
// external data), check it with the ONNX checker and shape inference, and
// import it into a module holding `func.func @main` written with func, tosa,
// tensor, arith and ember ops. Errors are MLIR diagnostics located at the
// ONNX node name; on any error no module is returned.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_FRONTENDS_ONNX_ONNXIMPORTER_H
#define EMBER_FRONTENDS_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class DialectRegistry;
namespace ember {
namespace onnx_importer {

struct OnnxImportOptions {
  /// Name of the function the graph becomes.
  std::string functionName = "main";
  /// Run the ONNX checker (structure, schemas, topological order).
  bool runChecker = true;
  /// Run strict ONNX shape inference (catches type errors between nodes).
  bool runShapeInference = true;
};

/// Registers the dialects the importer produces.
void registerOnnxImportDialects(DialectRegistry &registry);

/// Imports the ONNX model stored at `path`. Returns null after emitting
/// diagnostics when the file cannot be read, is not a valid model, uses an
/// unsupported op or attribute, or the produced IR fails to verify.
OwningOpRef<ModuleOp> importOnnxFile(llvm::StringRef path, MLIRContext *context,
                                     const OnnxImportOptions &options = {});

} // namespace onnx_importer
} // namespace ember
} // namespace mlir

#endif // EMBER_FRONTENDS_ONNX_ONNXIMPORTER_H
