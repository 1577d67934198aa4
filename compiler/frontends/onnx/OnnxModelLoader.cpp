//===- OnnxModelLoader.cpp - Read and check an ONNX ModelProto ------------===//
//
// Built with -fexceptions: the ONNX checker and shape inference throw. Every
// call into them is wrapped so that no exception leaves this file.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/OnnxModelLoader.h"

#include "frontends/onnx/TypeConversion.h"
#include "progress/progress.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <exception>
#include <google/protobuf/io/coded_stream.h>
#include <limits>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

/// ONNX messages span lines; diagnostics read better on one.
std::string oneLine(llvm::StringRef message) {
  std::string result;
  bool space = false;
  for (char c : message.trim()) {
    if (c == '\n' || c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !result.empty())
      result += ' ';
    space = false;
    result += c;
  }
  return result;
}

/// Bytes of one element of an ONNX data type whose raw_data Ember reads
/// (0 for others).
uint64_t elementBytesOf(int32_t dataType) {
  switch (dataType) {
  case ::onnx::TensorProto::DOUBLE:
  case ::onnx::TensorProto::INT64:
    return 8;
  case ::onnx::TensorProto::FLOAT:
  case ::onnx::TensorProto::INT32:
    return 4;
  case ::onnx::TensorProto::FLOAT16:
  case ::onnx::TensorProto::BFLOAT16:
  case ::onnx::TensorProto::INT16:
    return 2;
  case ::onnx::TensorProto::INT8:
  case ::onnx::TensorProto::UINT8:
  case ::onnx::TensorProto::BOOL:
    return 1;
  default:
    return 0;
  }
}

/// The data files of one model, each mapped once.
using MappedFiles = llvm::StringMap<std::shared_ptr<MappedWeightFile>>;

/// Checks the external data of one tensor and either maps it (into
/// `mapped`) or reads it into the tensor's raw_data.
LogicalResult loadExternalData(::onnx::TensorProto &tensor,
                               llvm::StringRef modelDir, MappedFiles &files,
                               MappedTensors &mapped, Location loc) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const auto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      long long parsed = 0;
      if (llvm::StringRef(entry.value()).getAsInteger(10, parsed) || parsed < 0)
        return emitError(loc) << "initializer '" << tensor.name()
                              << "': invalid external data " << entry.key()
                              << " '" << entry.value() << "'";
      (entry.key() == "offset" ? offset : length) = parsed;
    }
  }
  if (location.empty())
    return emitError(loc) << "initializer '" << tensor.name()
                          << "': external data without a location";
  if (llvm::sys::path::is_absolute(location) ||
      llvm::is_contained(llvm::make_range(llvm::sys::path::begin(location),
                                          llvm::sys::path::end(location)),
                         ".."))
    return emitError(loc) << "initializer '" << tensor.name()
                          << "': external data location '" << location
                          << "' must be a relative path inside the model's "
                             "directory";
  llvm::SmallString<256> path(modelDir);
  llvm::sys::path::append(path, location);
  std::shared_ptr<MappedWeightFile> &file = files[path];
  if (!file) {
    std::string error;
    file = MappedWeightFile::open(path, &error);
    if (!file)
      return emitError(loc)
             << "initializer '" << tensor.name()
             << "': cannot read external data file '" << path << "': " << error;
  }
  int64_t size = static_cast<int64_t>(file->size());
  if (length < 0)
    length = size - offset;
  if (offset > size || length > size - offset)
    return emitError(loc) << "initializer '" << tensor.name()
                          << "': external data [" << offset << ", "
                          << offset + length << ") lies outside '" << path
                          << "' (" << size << " bytes)";
  // The type's size, when the importer reads this type's raw data (others
  // are refused by convertTensorProto, naming the type).
  uint64_t elementBytes = elementBytesOf(tensor.data_type());
  llvm::SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  bool countable = elementBytes > 0 && staticElementsWithinLimit(dims) &&
                   llvm::all_of(dims, [](int64_t d) { return d >= 0; });
  if (countable) {
    uint64_t count = 1;
    for (int64_t d : dims)
      count *= static_cast<uint64_t>(d);
    if (count * elementBytes != static_cast<uint64_t>(length))
      return emitError(loc)
             << "initializer '" << tensor.name() << "': external data of "
             << length << " bytes in '" << path << "', but its type holds "
             << count << " elements of " << elementBytes << " bytes";
  }
  bool aligned =
      elementBytes > 0 &&
      reinterpret_cast<uintptr_t>(file->data() + offset) % elementBytes == 0;
  if (countable && aligned && tensor.data_type() != ::onnx::TensorProto::BOOL &&
      static_cast<uint64_t>(length) >= kMapExternalDataBytes) {
    // Mapped: the proto keeps its external data entries (the checker and
    // shape inference read no weights); the importer builds the constant
    // over the mapping.
    mapped[tensor.name()] = MappedTensor{file, static_cast<uint64_t>(offset)};
    return success();
  }
  tensor.set_raw_data(file->data() + offset, length);
  tensor.clear_external_data();
  tensor.set_data_location(::onnx::TensorProto::DEFAULT);
  return success();
}

} // namespace

LogicalResult readOnnxModel(llvm::StringRef path, ::onnx::ModelProto &model,
                            Location loc, MappedTensors &mapped) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError(loc) << "cannot read ONNX model '" << path
                          << "': " << buffer.getError().message();
  const auto *data =
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart());
  size_t size = (*buffer)->getBufferSize();
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()))
    return emitError(loc) << "ONNX model '" << path
                          << "' is larger than 2 GiB; store its weights as "
                             "external data";
  google::protobuf::io::CodedInputStream stream(data, static_cast<int>(size));
  stream.SetTotalBytesLimit(std::numeric_limits<int>::max());
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return emitError(loc) << "'" << path
                          << "' is not a valid ONNX model (the protobuf does "
                             "not parse: truncated or not a ModelProto)";
  if (!model.has_graph())
    return emitError(loc) << "'" << path << "' has no graph";

  llvm::SmallString<256> modelDir(path);
  llvm::sys::path::remove_filename(modelDir);
  MappedFiles files;
  int external = 0;
  for (const auto &tensor : model.graph().initializer())
    external += tensor.data_location() == ::onnx::TensorProto::EXTERNAL;
  if (external == 0)
    return success();
  ::ember::progress::Phase phase("mapping external data", external,
                                 ::ember::progress::Unit::Items);
  for (auto &tensor : *model.mutable_graph()->mutable_initializer())
    if (tensor.data_location() == ::onnx::TensorProto::EXTERNAL) {
      if (failed(loadExternalData(tensor, modelDir, files, mapped, loc)))
        return failure();
      phase.advance(1);
    }
  return success();
}

LogicalResult checkOnnxModel(const ::onnx::ModelProto &model,
                             llvm::StringRef path, bool hasMappedData,
                             Location loc) {
  try {
    if (hasMappedData && path != "-")
      ::onnx::checker::check_model(path.str());
    else
      ::onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return emitError(loc) << "the ONNX checker rejects the model: "
                          << oneLine(e.what());
  } catch (...) {
    return emitError(loc) << "the ONNX checker rejects the model";
  }
  return success();
}

LogicalResult checkOnnxTypes(::onnx::ModelProto &model, Location loc) {
  // Shape inference reads initializer values only for small shape-like
  // inputs; the raw bytes of large ones are swapped out while copying.
  constexpr size_t kKeepBytes = size_t(1) << 20;
  std::vector<std::pair<::onnx::TensorProto *, std::string>> movedOut;
  for (auto &tensor : *model.mutable_graph()->mutable_initializer()) {
    if (tensor.raw_data().size() <= kKeepBytes)
      continue;
    movedOut.emplace_back(&tensor, std::string());
    movedOut.back().second.swap(*tensor.mutable_raw_data());
  }
  ::onnx::ModelProto copy(model);
  for (auto &[tensor, data] : movedOut)
    tensor->mutable_raw_data()->swap(data);
  try {
    ::onnx::ShapeInferenceOptions options(/*check_type_val=*/true,
                                          /*strict_mode_val=*/1);
    ::onnx::shape_inference::InferShapes(
        copy, ::onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    return emitError(loc) << "ONNX shape inference rejects the model: "
                          << oneLine(e.what());
  } catch (...) {
    return emitError(loc) << "ONNX shape inference rejects the model";
  }
  return success();
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
