//===- broadcast.h - numpy/ONNX broadcasting of up to three operands -*- C++
//-*-===//
//
// broadcastShapes computes the result shape of operands aligned at their
// trailing dims (a dim of 1 stretches; rank mismatch pads with leading 1s).
// BroadcastLayout describes how to walk the result: its dims after dropping
// size-1 dims and merging dims that are contiguous in every operand, and
// each operand's element strides (0 along stretched dims). The innermost
// dim's stride is 0 or 1 for every operand.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_BROADCAST_H
#define EMBER_KERNELS_SHARED_BROADCAST_H

#include "ember/status.h"
#include "ember/tensor.h"
#include "kernels/kernel_context.h"

#include <cstdint>
#include <string>

namespace ember::cpu {

constexpr int kMaxBroadcastOperands = 3;

/// The broadcast result of `count` shapes, or an InvalidArgument naming the
/// two shapes that do not broadcast (without location: callers add it).
Result<Shape> broadcastShapes(const Shape *shapes, int count);

struct BroadcastLayout {
  int rank = 0; // >= 1
  int64_t dims[Shape::kMaxRank] = {};
  int64_t strides[kMaxBroadcastOperands][Shape::kMaxRank] = {};
  int count = 0;

  /// Number of rows: the product of every dim but the innermost.
  int64_t rows() const;
  int64_t inner() const { return dims[rank - 1]; }
  /// Element offsets of each operand at the start of row `row`.
  void rowOffsets(int64_t row, int64_t *offsets) const;
};

/// The layout that walks `out` (the broadcast of `shapes`).
BroadcastLayout makeBroadcastLayout(const Shape &out, const Shape *shapes,
                                    int count);

/// The operands of an elementwise binary or comparison kernel (either
/// backend): inputs 0 (a) and 1 (b), present, and the shape they broadcast
/// to; errors name the kernel's location.
struct BinaryOperands {
  const Tensor *a = nullptr, *b = nullptr;
  Shape shapes[2]; // a's, b's
  Shape outShape;
};
Result<BinaryOperands> binaryOperands(KernelContext &ctx);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_BROADCAST_H
