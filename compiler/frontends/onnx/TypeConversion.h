//===- TypeConversion.h - ONNX types and tensors to MLIR --------*- C++ -*-===//
//
// ONNX element types, value types (with symbolic dims) and TensorProto data
// to MLIR types and dense elements attributes.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_FRONTENDS_ONNX_TYPECONVERSION_H
#define EMBER_FRONTENDS_ONNX_TYPECONVERSION_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"

#include <onnx/onnx_pb.h>

namespace mlir {
namespace ember {
namespace onnx_importer {

/// The MLIR element type of an ONNX TensorProto::DataType, or null when Ember
/// does not support it (strings, complex, unsigned beyond uint8, ...).
Type convertElementType(MLIRContext *context, int32_t onnxType);

/// Name of an ONNX data type for messages ("FLOAT", "STRING", ...).
std::string onnxTypeName(int32_t onnxType);

/// The most elements the importer accepts in one tensor (its static dims):
/// 2^48, more than any file holds. A model that declares more is refused by
/// name before anything is built for it: element counts past this would
/// overflow the importer's (and MLIR's) shape arithmetic.
constexpr int64_t kMaxTensorElements = int64_t(1) << 48;

/// Whether the static non-zero dims of `shape` (dynamic ones are skipped)
/// multiply to at most kMaxTensorElements, so that the product of any of
/// them fits.
bool staticElementsWithinLimit(llvm::ArrayRef<int64_t> shape);

/// The ranked tensor type of a graph input/output; dims without a value
/// (dim_param or nothing) become dynamic. Emits an error at `loc` and
/// returns null for non-tensor or unranked types.
RankedTensorType convertValueType(const ::onnx::TypeProto &type,
                                  MLIRContext *context, Location loc,
                                  llvm::StringRef what);

/// The data of `tensor` (raw_data or the typed fields) as dense elements.
/// Checks that the data has exactly as many elements as the dims say.
FailureOr<DenseElementsAttr>
convertTensorProto(const ::onnx::TensorProto &tensor, MLIRContext *context,
                   Location loc);

} // namespace onnx_importer
} // namespace ember
} // namespace mlir

#endif // EMBER_FRONTENDS_ONNX_TYPECONVERSION_H
