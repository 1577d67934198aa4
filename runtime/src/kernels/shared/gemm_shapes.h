//===- gemm_shapes.h - Checks and shapes of the GEMM kernels --*- C++ -*-===//
//
// The attribute and shape checks of linear and matmul (with
// their messages) and the sizes of the product, shared by the CPU kernels
// (gemm_kernels.cpp) and the CUDA kernels (cuda/dense/gemm_kernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_GEMM_SHAPES_H
#define EMBER_KERNELS_SHARED_GEMM_SHAPES_H

#include "kernels/attributes.h"
#include "kernels/kernel_context.h"
#include "kernels/shared/broadcast.h"
#include "kernels/shared/elementwise_activation.h"

#include <cstdint>

namespace ember::cpu {

/// linear's attributes: transpose_weight (bool), activation.
Status validateLinear(const Attributes &attrs, int, int);

/// x [..., K] · op(weight) (+ bias [N]) -> [..., N].
struct LinearShape {
  const Tensor *x = nullptr, *weight = nullptr;
  const Tensor *bias = nullptr; // absent: nullptr
  bool transposeWeight = true;  // weight is [N, K] (else [K, N])
  Activation activation = Activation::kNone;
  int64_t m = 0, n = 0, k = 0; // m: every dim of x but the last
  Shape outShape;
};
Result<LinearShape> linearShape(KernelContext &ctx);

/// ONNX MatMul: a 1-D a is [1, K] (M dropped), a 1-D b is [K, 1] (N
/// dropped); the batch dims broadcast.
struct MatmulShape {
  int64_t m = 0, n = 0, k = 0;
  Shape batchShapes[2]; // a's and b's batch dims
  Shape batch;          // their broadcast
  Shape outShape;
};
Result<MatmulShape> matmulShape(KernelContext &ctx);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_GEMM_SHAPES_H
