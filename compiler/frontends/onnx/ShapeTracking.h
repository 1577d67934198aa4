//===- ShapeTracking.h - Shape-like values known at import time -*- C++ -*-===//
//
// torch.onnx.export with dynamic axes computes target shapes at run time
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape). The importer follows
// those chains symbolically (ShapeInfo: constants and "dim i of value v") so
// that Reshape/Expand/ConstantOfShape still get static result types and
// tosa/tensor ops, and it materializes the shape tensors as real IR for any
// other consumer.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_FRONTENDS_ONNX_SHAPETRACKING_H
#define EMBER_FRONTENDS_ONNX_SHAPETRACKING_H

#include "frontends/onnx/ImportContext.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

/// Replaces entries that refer to static dims by constants.
ShapeInfo simplifyShapeInfo(const ShapeInfo &info);

/// Builds the i64 tensor holding `info` (1-D, or 0-D when `scalar`), and
/// records `info` for it.
Value materializeShapeInfo(ImportContext &ctx, const ShapeInfo &info,
                           bool scalar);

/// The size an entry stands for: a constant index or tensor.dim.
OpFoldResult entrySize(OpBuilder &b, Location loc, const DimEntry &entry);

/// Product of dims [from, to) of `v` as a static index or arith ops.
OpFoldResult dimProduct(OpBuilder &b, Location loc, Value v, int64_t from,
                        int64_t to);

} // namespace onnx_importer
} // namespace ember
} // namespace mlir

#endif // EMBER_FRONTENDS_ONNX_SHAPETRACKING_H
