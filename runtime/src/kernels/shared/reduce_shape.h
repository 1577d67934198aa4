//===- reduce_shape.h - Checks and shape of the reductions ------*- C++ -*-===//
//
// reduce_sum / reduce_max's attribute and input checks (with
// their messages) and output shape, shared by the CPU kernels
// (dense_reduce.cpp) and the CUDA kernels (cuda/dense/reduce_kernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_REDUCE_SHAPE_H
#define EMBER_KERNELS_SHARED_REDUCE_SHAPE_H

#include "kernels/attributes.h"
#include "kernels/kernel_context.h"

namespace ember::cpu {

/// The attributes axes (ints) and keepdims (bool).
Status validateReduce(const Attributes &attrs, int, int);

struct ReduceShape {
  bool reduced[Shape::kMaxRank] = {}; // which dims of x are reduced
  Shape outShape;
};
/// Checks the attributes and x (input 0); emptyExtentIsError: reduce_max
/// (an empty reduced extent is an error).
Result<ReduceShape> reduceShape(KernelContext &ctx, bool emptyExtentIsError);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_REDUCE_SHAPE_H
