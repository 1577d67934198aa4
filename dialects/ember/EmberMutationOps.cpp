//===- EmberMutationOps.cpp - tensors with reference semantics -----------===//
#include "EmberOpsUtils.h"
#include "dialects/ember/EmberOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::ember;

/// Checks that `value` can be stored in / read from a mutable tensor of
/// `mutType`: same element type and rank, compatible sizes.
static LogicalResult verifyMatchesMutable(Operation *op, StringRef what,
                                          RankedTensorType value,
                                          MutableTensorType mutType) {
  RankedTensorType expected = mutType.getTensorType();
  if (value.getElementType() != expected.getElementType() ||
      value.getRank() != expected.getRank())
    return op->emitOpError()
           << what << " type " << value << " does not match " << expected
           << " (element type and rank must be equal)";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(value.getShape(), expected.getShape())))
    if (!sizesCompatible(std::get<0>(pair), std::get<1>(pair)))
      return op->emitOpError()
             << what << " dim " << i << " is " << std::get<0>(pair)
             << " but the mutable tensor's is " << std::get<1>(pair);
  return success();
}

LogicalResult MutFromTensorOp::verify() {
  return verifyMatchesMutable(
      *this, "value", cast<RankedTensorType>(getValue().getType()), getType());
}

LogicalResult MutToTensorOp::verify() {
  return verifyMatchesMutable(*this, "result",
                              cast<RankedTensorType>(getType()),
                              getSource().getType());
}

LogicalResult MutCopyOp::verify() {
  return verifyMatchesMutable(*this, "value",
                              cast<RankedTensorType>(getValue().getType()),
                              getTarget().getType());
}

Value MutSliceOp::getViewSource() { return getSource(); }

LogicalResult MutSliceOp::verify() {
  RankedTensorType source = getSource().getType().getTensorType();
  RankedTensorType result = getType().getTensorType();
  int64_t rank = source.getRank();
  auto checkList = [&](StringRef name, ArrayRef<int64_t> list,
                       OperandRange dynamic) -> LogicalResult {
    if (static_cast<int64_t>(list.size()) != rank)
      return emitOpError("expected ")
             << rank << " " << name << " (the source rank), got "
             << list.size();
    int64_t numDynamic = llvm::count_if(list, ShapedType::isDynamic);
    if (numDynamic != static_cast<int64_t>(dynamic.size()))
      return emitOpError("has ")
             << numDynamic << " dynamic " << name << " but " << dynamic.size()
             << " index operands for them";
    return success();
  };
  if (failed(checkList("offsets", getStaticOffsets(), getOffsets())) ||
      failed(checkList("sizes", getStaticSizes(), getSizes())) ||
      failed(checkList("strides", getStaticStrides(), getStrides())))
    return failure();
  if (result.getElementType() != source.getElementType() ||
      result.getRank() != rank)
    return emitOpError("result ")
           << result << " must have the source's element type and rank ("
           << source << ")";
  for (int64_t i = 0; i < rank; ++i) {
    int64_t offset = getStaticOffsets()[i], size = getStaticSizes()[i],
            stride = getStaticStrides()[i];
    if (!ShapedType::isDynamic(offset) && offset < 0)
      return emitOpError("offset of dim ") << i << " is negative: " << offset;
    if (!ShapedType::isDynamic(size) && size < 0)
      return emitOpError("size of dim ") << i << " is negative: " << size;
    if (!ShapedType::isDynamic(stride) && stride <= 0)
      return emitOpError("stride of dim ")
             << i << " must be positive, got " << stride;
    if (!sizesCompatible(result.getDimSize(i), size))
      return emitOpError("result dim ")
             << i << " is " << sizeToString(result.getDimSize(i))
             << " but the slice size is " << sizeToString(size);
    int64_t extent = source.getDimSize(i);
    if (!ShapedType::isDynamic(offset) && !ShapedType::isDynamic(size) &&
        !ShapedType::isDynamic(stride) && !ShapedType::isDynamic(extent) &&
        size > 0 && offset + (size - 1) * stride >= extent)
      return emitOpError("slice of dim ")
             << i << " (offset " << offset << ", size " << size << ", stride "
             << stride << ") runs past the source size " << extent;
  }
  return success();
}
