//===- layer_norm_shape.h - Checks and sizes of layer_norm ------*- C++ -*-===//
//
// layer_norm's attribute and input checks (with their messages) and the
// [rows, d] view of x, shared by the CPU kernel (norm_layer_norm.cpp) and
// the CUDA kernel (cuda/dense/norm_kernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_LAYER_NORM_SHAPE_H
#define EMBER_KERNELS_SHARED_LAYER_NORM_SHAPE_H

#include "kernels/attributes.h"
#include "kernels/kernel_context.h"

#include <cstdint>

namespace ember::cpu {

/// layer_norm's attributes axis (int) and epsilon (>= 0).
Status validateLayerNorm(const Attributes &attrs, int, int);

/// x viewed as [rows, d]: the dims before axis, the normalized dims.
struct LayerNormShape {
  int axis = 0;
  float epsilon = 1e-5f;
  int64_t rows = 1, d = 1;
};
/// Checks the attributes and x (input 0); gamma and beta are checked with
/// checkAffine.
Result<LayerNormShape> layerNormShape(KernelContext &ctx);

/// gamma/beta must hold the normalized shape x.shape[axis:], or be 1-D of
/// the same element count.
Status checkAffine(KernelContext &ctx, const Tensor &t, const char *name,
                   const Tensor &x, int axis, int64_t d);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_LAYER_NORM_SHAPE_H
