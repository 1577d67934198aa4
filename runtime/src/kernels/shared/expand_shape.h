//===- expand_shape.h - Checks and output shape of expand -------*- C++ -*-===//
//
// expand's attribute and input checks (with their messages) and output
// shape, shared by the CPU kernel (shape_expand.cpp) and the CUDA kernel
// (cuda/dense/view_kernels.cpp), which differ only in how they read a shape
// input (host memory or device memory through host staging).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_EXPAND_SHAPE_H
#define EMBER_KERNELS_SHARED_EXPAND_SHAPE_H

#include "kernels/attributes.h"
#include "kernels/kernel_context.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace ember::cpu {

/// The attribute shape (non-negative ints) or a shape input.
Status validateExpand(const Attributes &attrs, int numInputs, int);

/// Reads the shape input (input 1, checked to be int64 [n]) as its n dims.
using ExpandShapeInputReader =
    std::function<Result<std::vector<int64_t>>(const Tensor &shape)>;

/// broadcast(x.shape, the target shape) after the checks; the target is the
/// attribute 'shape' or, without it, the shape input.
Result<Shape> expandShape(KernelContext &ctx,
                          const ExpandShapeInputReader &readShapeInput);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_EXPAND_SHAPE_H
