//===- concat_shape.h - Checks and shape of concat --------------*- C++ -*-===//
//
// concat's attribute and input checks (with their messages) and output
// shape, shared by the CPU kernel (shape_concat.cpp) and the CUDA kernel
// (cuda/dense/concat_kernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_CONCAT_SHAPE_H
#define EMBER_KERNELS_SHARED_CONCAT_SHAPE_H

#include "kernels/attributes.h"
#include "kernels/kernel_context.h"

#include <cstdint>

namespace ember::cpu {

/// The attribute axis (int, required).
Status validateConcat(const Attributes &attrs, int, int);

/// The output viewed as [outer, outShape[axis], inner].
struct ConcatShape {
  int axis = 0;
  Shape outShape;
  int64_t outer = 1, inner = 1;
};
Result<ConcatShape> concatShape(KernelContext &ctx);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_CONCAT_SHAPE_H
