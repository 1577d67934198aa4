//===- OnnxModelLoader.h - Read and check an ONNX ModelProto ----*- C++ -*-===//
//
// Parses a model file, resolves external tensor data into memory, and runs
// the ONNX checker and strict shape inference. The ONNX library throws on
// errors; this is the only part of the importer built with exceptions, and
// nothing is thrown past its functions: every failure is a diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_FRONTENDS_ONNX_ONNXMODELLOADER_H
#define EMBER_FRONTENDS_ONNX_ONNXMODELLOADER_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

namespace onnx {
class ModelProto;
} // namespace onnx

namespace mlir {
namespace ember {
namespace onnx_importer {

/// Reads `path` into `model` and loads every external tensor it references
/// (paths relative to the model's directory). Errors are emitted at `loc`.
LogicalResult readOnnxModel(llvm::StringRef path, ::onnx::ModelProto &model,
                            Location loc);

/// Runs the ONNX checker on `model`.
LogicalResult checkOnnxModel(const ::onnx::ModelProto &model, Location loc);

/// Runs strict ONNX shape inference (type checks between nodes) on a copy of
/// `model` in which large initializers carry no data (their raw bytes are
/// moved out for the copy and moved back, so weights are never duplicated);
/// the model is unchanged afterwards.
LogicalResult checkOnnxTypes(::onnx::ModelProto &model, Location loc);

} // namespace onnx_importer
} // namespace ember
} // namespace mlir

#endif // EMBER_FRONTENDS_ONNX_ONNXMODELLOADER_H
