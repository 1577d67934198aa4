//===- interaction_shape.h - Checks and sizes of dot_interaction -*- C++
//-*-===//
//
// dot_interaction's attribute and input checks (with their messages) and
// sizes, shared by the CPU kernel (interaction_kernels.cpp) and the CUDA
// kernel (cuda/dense/interaction_kernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_INTERACTION_SHAPE_H
#define EMBER_KERNELS_SHARED_INTERACTION_SHAPE_H

#include "kernels/attributes.h"
#include "kernels/kernel_context.h"

#include <cstdint>

namespace ember::cpu {

/// The attributes num_features (>= 0), self_interaction (bool) and
/// pair_order ("dlrm" | "torchrec").
Status validateInteraction(const Attributes &attrs, int, int);

/// dense [B, D], sparse [B, F*D]; output [B, D + pairs].
struct InteractionShape {
  int64_t batch = 0, dim = 0; // B, D
  int64_t rows = 0;           // F + 1 rows per sample
  int64_t pairs = 0;          // interaction pairs per sample
  bool self = false, torchrecOrder = false;
};
Result<InteractionShape> interactionShape(KernelContext &ctx);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_INTERACTION_SHAPE_H
