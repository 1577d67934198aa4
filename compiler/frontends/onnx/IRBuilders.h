//===- IRBuilders.h - Small IR building blocks for the converters -*- C++ -*-//
//
// Rank broadcasting, reshapes (static or with runtime dims), scalar
// constants and the extra operands tosa ops take (mul shift, matmul zero
// points), shared by the op converters.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_FRONTENDS_ONNX_IRBUILDERS_H
#define EMBER_FRONTENDS_ONNX_IRBUILDERS_H

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

inline RankedTensorType tensorTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Size of dim `i` of `v`: an index attribute when static, else tensor.dim.
OpFoldResult dimOf(OpBuilder &b, Location loc, Value v, int64_t i);

/// A `!tosa.shape` constant.
Value constShape(OpBuilder &b, Location loc, llvm::ArrayRef<int64_t> values);

/// Reshapes `input` to `target` (static sizes or index values). Uses
/// tosa.reshape when at most one size is dynamic, tensor.reshape otherwise.
Value createReshape(OpBuilder &b, Location loc, Value input,
                    llvm::ArrayRef<OpFoldResult> target);

/// Inserts leading unit dims up to `rank` (tensor.expand_shape).
Value expandToRank(OpBuilder &b, Location loc, Value v, int64_t rank);

/// Inserts unit dims at the sorted positions `axes` of the result.
Value insertUnitDims(OpBuilder &b, Location loc, Value v,
                     llvm::ArrayRef<int64_t> axes);

/// Removes the unit dims at the sorted positions `axes`.
Value dropUnitDims(OpBuilder &b, Location loc, Value v,
                   llvm::ArrayRef<int64_t> axes);

/// The numpy broadcast of two shapes of equal rank; failure on a static
/// mismatch.
FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// A constant `tensor<1x...x1xT>` (rank `rank`) holding `value`.
Value scalarConstant(OpBuilder &b, Location loc, Type elementType, double value,
                     int64_t rank);

/// tosa.const `tensor<1xT>` zero (mul shift: i8; matmul zero points).
Value zeroTensor1D(OpBuilder &b, Location loc, Type elementType);

/// `lhs op rhs` for an elementwise tosa op with numpy broadcasting; null if
/// the static shapes do not broadcast.
template <typename OpT, typename... Extra>
Value createBroadcastBinary(OpBuilder &b, Location loc, Value lhs, Value rhs,
                            Type resultElementType, Extra... extra) {
  int64_t rank =
      std::max(tensorTypeOf(lhs).getRank(), tensorTypeOf(rhs).getRank());
  lhs = expandToRank(b, loc, lhs, rank);
  rhs = expandToRank(b, loc, rhs, rank);
  auto shape = broadcastShapes(tensorTypeOf(lhs).getShape(),
                               tensorTypeOf(rhs).getShape());
  if (failed(shape))
    return {};
  auto type = RankedTensorType::get(*shape, resultElementType);
  return OpT::create(b, loc, type, lhs, rhs, extra...).getResult();
}

/// tosa.mul with its zero shift, broadcasting.
Value createMul(OpBuilder &b, Location loc, Value lhs, Value rhs);

/// Whole-tensor cast to `elementType` (tosa.cast; identity if equal).
Value createCast(OpBuilder &b, Location loc, Value v, Type elementType);

} // namespace onnx_importer
} // namespace ember
} // namespace mlir

#endif // EMBER_FRONTENDS_ONNX_IRBUILDERS_H
