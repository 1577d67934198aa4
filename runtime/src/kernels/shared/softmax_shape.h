//===- softmax_shape.h - Checks and sizes of softmax ------------*- C++ -*-===//
//
// softmax's attribute and input checks (with their messages) and the
// [outer, len, inner] view of x around the axis, shared by the CPU kernel
// (softmax_kernels.cpp) and the CUDA kernel (cuda/dense/norm_kernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_SOFTMAX_SHAPE_H
#define EMBER_KERNELS_SHARED_SOFTMAX_SHAPE_H

#include "kernels/attributes.h"
#include "kernels/kernel_context.h"

#include <cstdint>

namespace ember::cpu {

/// softmax's attribute axis (int).
Status validateSoftmax(const Attributes &attrs, int, int);

/// x viewed as [outer, len, inner], len = x.dim(axis).
struct SoftmaxShape {
  int axis = 0;
  int64_t outer = 1, len = 0, inner = 1;
};
Result<SoftmaxShape> softmaxShape(KernelContext &ctx);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_SOFTMAX_SHAPE_H
