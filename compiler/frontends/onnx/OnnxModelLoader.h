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
#include "passes/WeightData.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <memory>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace mlir {
namespace ember {
namespace onnx_importer {

/// An initializer whose external data stay in their file: the importer makes
/// it a constant over a read-only mapping (mappedWeights), never a copy.
struct MappedTensor {
  std::shared_ptr<MappedWeightFile> file;
  uint64_t offset = 0;
};
/// Mapped initializers by name.
using MappedTensors = llvm::StringMap<MappedTensor>;

/// External data of at least this many bytes are mapped; smaller tensors
/// (dense layers, shape values the importer folds) are read into the model.
constexpr uint64_t kMapExternalDataBytes = uint64_t(16) << 20;

/// Reads `path` into `model`. Every external tensor it references (paths
/// relative to the model's directory) is checked (location, offset and length
/// against the file and against the tensor's type); those of at least
/// kMapExternalDataBytes that are numeric and aligned to their element size
/// are mapped and listed in `mapped` (their TensorProto keeps no data), the
/// others are read into their raw_data. Errors are emitted at `loc`.
LogicalResult readOnnxModel(llvm::StringRef path, ::onnx::ModelProto &model,
                            Location loc, MappedTensors &mapped);

/// Runs the ONNX checker on `model`, read from `path`. When the model keeps
/// mapped external data (`hasMappedData`), the checker reads the model file
/// again itself (a small file then), so that it resolves the data files
/// against the model's directory rather than the working directory.
LogicalResult checkOnnxModel(const ::onnx::ModelProto &model,
                             llvm::StringRef path, bool hasMappedData,
                             Location loc);

/// Runs strict ONNX shape inference (type checks between nodes) on a copy of
/// `model` in which large initializers carry no data (their raw bytes are
/// moved out for the copy and moved back, so weights are never duplicated);
/// the model is unchanged afterwards.
LogicalResult checkOnnxTypes(::onnx::ModelProto &model, Location loc);

} // namespace onnx_importer
} // namespace ember
} // namespace mlir

#endif // EMBER_FRONTENDS_ONNX_ONNXMODELLOADER_H
