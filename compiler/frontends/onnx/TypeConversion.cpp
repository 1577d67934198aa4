//===- TypeConversion.cpp - ONNX types and tensors to MLIR ----------------===//

#include "frontends/onnx/TypeConversion.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"

#include <cstring>

namespace mlir {
namespace ember {
namespace onnx_importer {

using ::onnx::TensorProto;

Type convertElementType(MLIRContext *context, int32_t onnxType) {
  Builder b(context);
  switch (onnxType) {
  case TensorProto::FLOAT:
    return b.getF32Type();
  case TensorProto::DOUBLE:
    return b.getF64Type();
  case TensorProto::FLOAT16:
    return b.getF16Type();
  case TensorProto::BFLOAT16:
    return b.getBF16Type();
  case TensorProto::INT8:
    return b.getIntegerType(8);
  case TensorProto::INT16:
    return b.getIntegerType(16);
  case TensorProto::INT32:
    return b.getIntegerType(32);
  case TensorProto::INT64:
    return b.getIntegerType(64);
  case TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case TensorProto::BOOL:
    return b.getI1Type();
  default:
    return Type();
  }
}

std::string onnxTypeName(int32_t onnxType) {
  if (TensorProto::DataType_IsValid(onnxType))
    return TensorProto::DataType_Name(
        static_cast<TensorProto::DataType>(onnxType));
  return "data type " + std::to_string(onnxType);
}

bool staticElementsWithinLimit(llvm::ArrayRef<int64_t> shape) {
  // Zeros are skipped: the product of any subset of the static dims fits.
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (ShapedType::isDynamic(dim) || dim == 0)
      continue;
    if (dim < 0 || dim > kMaxTensorElements / count)
      return false;
    count *= dim;
  }
  return true;
}

RankedTensorType convertValueType(const ::onnx::TypeProto &type,
                                  MLIRContext *context, Location loc,
                                  llvm::StringRef what) {
  if (!type.has_tensor_type()) {
    emitError(loc) << what << " is not a tensor (sequences, maps and "
                   << "optionals are not supported)";
    return {};
  }
  const auto &tensorType = type.tensor_type();
  Type elementType = convertElementType(context, tensorType.elem_type());
  if (!elementType) {
    emitError(loc) << what << " has unsupported element type "
                   << onnxTypeName(tensorType.elem_type());
    return {};
  }
  if (!tensorType.has_shape()) {
    emitError(loc) << what << " has no rank (unranked tensors are not "
                   << "supported)";
    return {};
  }
  llvm::SmallVector<int64_t> shape;
  for (const auto &dim : tensorType.shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() >= 0)
      shape.push_back(dim.dim_value());
    else
      shape.push_back(ShapedType::kDynamic);
  }
  if (!staticElementsWithinLimit(shape)) {
    emitError(loc) << what << " declares dims whose product is more than "
                   << "2^48 elements";
    return {};
  }
  return RankedTensorType::get(shape, elementType);
}

namespace {

/// Copies `count` values out of a repeated field into `out` as `T`.
template <typename T, typename Field>
void copyField(const Field &field, llvm::SmallVectorImpl<T> &out) {
  out.reserve(field.size());
  for (auto v : field)
    out.push_back(static_cast<T>(v));
}

} // namespace

FailureOr<DenseElementsAttr> convertTensorProto(const TensorProto &tensor,
                                                MLIRContext *context,
                                                Location loc) {
  Type elementType = convertElementType(context, tensor.data_type());
  if (!elementType)
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has unsupported element type "
                          << onnxTypeName(tensor.data_type());
  if (tensor.data_location() == TensorProto::EXTERNAL)
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has external data that was not loaded "
                          << "(only graph initializers may use external data)";
  llvm::SmallVector<int64_t> shape;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      return emitError(loc)
             << "tensor '" << tensor.name() << "' has a negative dim " << dim;
    shape.push_back(dim);
  }
  // The element count is compared with the data below; dims whose product
  // does not fit are refused first.
  if (!staticElementsWithinLimit(shape))
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has dims whose product is more than 2^48 "
                             "elements";
  int64_t count = llvm::is_contained(shape, int64_t(0)) ? 0 : 1;
  for (int64_t dim : shape)
    count *= count ? dim : 0;
  auto type = RankedTensorType::get(shape, elementType);
  auto mismatch = [&](int64_t have) {
    return emitError(loc) << "tensor '" << tensor.name() << "' has " << have
                          << " elements of data but its dims hold " << count;
  };

  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (elementType.isInteger(1)) {
      if (static_cast<int64_t>(raw.size()) != count)
        return mismatch(raw.size());
      llvm::SmallVector<bool> values;
      for (char c : raw)
        values.push_back(c != 0);
      return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(values));
    }
    int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
    if (static_cast<int64_t>(raw.size()) != count * bytes)
      return mismatch(static_cast<int64_t>(raw.size()) / bytes);
    return DenseElementsAttr::getFromRawBuffer(
        type, llvm::ArrayRef<char>(raw.data(), raw.size()));
  }

  switch (tensor.data_type()) {
  case TensorProto::FLOAT: {
    llvm::SmallVector<float> v;
    copyField(tensor.float_data(), v);
    if (static_cast<int64_t>(v.size()) != count)
      return mismatch(v.size());
    return DenseElementsAttr::get(type, llvm::ArrayRef<float>(v));
  }
  case TensorProto::DOUBLE: {
    llvm::SmallVector<double> v;
    copyField(tensor.double_data(), v);
    if (static_cast<int64_t>(v.size()) != count)
      return mismatch(v.size());
    return DenseElementsAttr::get(type, llvm::ArrayRef<double>(v));
  }
  case TensorProto::INT64: {
    llvm::SmallVector<int64_t> v;
    copyField(tensor.int64_data(), v);
    if (static_cast<int64_t>(v.size()) != count)
      return mismatch(v.size());
    return DenseElementsAttr::get(type, llvm::ArrayRef<int64_t>(v));
  }
  case TensorProto::BOOL: {
    llvm::SmallVector<bool> v;
    for (int32_t x : tensor.int32_data())
      v.push_back(x != 0);
    if (static_cast<int64_t>(v.size()) != count)
      return mismatch(v.size());
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(v));
  }
  case TensorProto::INT32:
  case TensorProto::INT16:
  case TensorProto::INT8:
  case TensorProto::UINT8:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16: {
    // int32_data holds these types widened (16-bit floats as their bits).
    if (tensor.int32_data_size() != count)
      return mismatch(tensor.int32_data_size());
    unsigned width = elementType.getIntOrFloatBitWidth();
    llvm::SmallVector<APInt> bits;
    for (int32_t x : tensor.int32_data())
      bits.push_back(APInt(width, static_cast<uint64_t>(x),
                           /*isSigned=*/true, /*implicitTrunc=*/true));
    if (auto floatType = dyn_cast<FloatType>(elementType)) {
      llvm::SmallVector<APFloat> floats;
      for (const APInt &b : bits)
        floats.push_back(APFloat(floatType.getFloatSemantics(), b));
      return DenseElementsAttr::get(type, floats);
    }
    return DenseElementsAttr::get(type, bits);
  }
  default:
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' stores its data in a field Ember does not "
                             "read";
  }
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
