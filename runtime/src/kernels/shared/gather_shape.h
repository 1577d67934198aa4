//===- gather_shape.h - Checks and shapes of gather ops ---------*- C++ -*-===//
//
// gather's and gather_elements' attribute and input checks (with their
// messages) and output shapes, shared by the CPU kernels (shape_gather.cpp)
// and the CUDA kernels (cuda/dense/gather_kernels.cpp). The index values are
// the kernels' own to check (on the host or on the device).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_GATHER_SHAPE_H
#define EMBER_KERNELS_SHARED_GATHER_SHAPE_H

#include "kernels/attributes.h"
#include "kernels/kernel_context.h"

#include <cstdint>

namespace ember::cpu {

/// The attribute axis (int) of gather and gather_elements.
Status validateGatherAxis(const Attributes &attrs, int, int);

/// gather: out = data[:axis] + indices.shape + data[axis+1:].
struct GatherShape {
  int axis = 0;
  Shape outShape;
  int64_t outer = 1, inner = 1; // data's dims before / after axis
};
Result<GatherShape> gatherShape(KernelContext &ctx);

/// gather_elements: the output has the indices' shape; returns the axis.
Result<int> gatherElementsAxis(KernelContext &ctx);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_GATHER_SHAPE_H
