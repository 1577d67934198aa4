//===- cross_shape.h - Checks and sizes of dcn_cross ------------*- C++ -*-===//
//
// The attribute and input checks of dcn_cross (with their messages) and its
// sizes, shared by the CPU kernel (cross_kernels.cpp) and the CUDA kernel
// (cuda/dense/cross_kernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_CROSS_SHAPE_H
#define EMBER_KERNELS_SHARED_CROSS_SHAPE_H

#include "kernels/attributes.h"
#include "kernels/kernel_context.h"

#include <cstdint>

namespace ember::cpu {

/// dcn_cross's attribute low_rank (bool) and its number of inputs (0: not
/// known yet).
Status validateCross(const Attributes &attrs, int numInputs, int);

/// x0, xl [B, D]; full rank: weight [D, D] (input 2); low rank: V [r, D]
/// (input 2), W [D, r] (input 3); bias [D] or [D, 1] (last input) or absent.
struct CrossShape {
  bool lowRank = false;
  int64_t batch = 0, dim = 0; // B, D
  int64_t rank = 0;           // r (low rank only)
  const Tensor *bias = nullptr;
};
Result<CrossShape> crossShape(KernelContext &ctx);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_CROSS_SHAPE_H
