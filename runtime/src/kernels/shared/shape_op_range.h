//===- shape_op_range.h - Checks and range of the shape op ------*- C++ -*-===//
//
// The `shape` kernel's attribute checks and the dims it returns (ONNX
// Shape-15 start/end), shared by the CPU kernel (shape_reshape.cpp) and the
// CUDA kernel (cuda/dense/shape_kernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_SHAPE_OP_RANGE_H
#define EMBER_KERNELS_SHARED_SHAPE_OP_RANGE_H

#include "kernels/attributes.h"
#include "kernels/kernel_context.h"

#include <cstdint>

namespace ember::cpu {

/// The attributes start and end (ints).
Status validateShape(const Attributes &attrs, int, int);

/// The output is x.dim(start), ..., x.dim(start + count - 1).
struct ShapeOpRange {
  int64_t start = 0, count = 0;
};
/// Checks the attributes and x (input 0).
Result<ShapeOpRange> shapeOpRange(KernelContext &ctx);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_SHAPE_OP_RANGE_H
