//===- broadcast.cpp - numpy/ONNX broadcasting of up to three operands ----===//
#include "kernels/shared/broadcast.h"

#include "kernels/shared/dense_common.h"

#include <algorithm>

namespace ember::cpu {

Result<Shape> broadcastShapes(const Shape *shapes, int count) {
  int rank = 0;
  for (int k = 0; k < count; ++k)
    rank = std::max(rank, shapes[k].rank());
  int64_t dims[Shape::kMaxRank];
  for (int i = 0; i < rank; ++i) {
    int64_t d = 1;
    int from = -1;
    for (int k = 0; k < count; ++k) {
      int j = i - (rank - shapes[k].rank());
      if (j < 0)
        continue;
      int64_t dk = shapes[k][j];
      if (dk == 1)
        continue;
      if (d == 1) {
        d = dk;
        from = k;
      } else if (dk != d) {
        return invalidArgument("shapes " + shapes[from].toString() + " and " +
                               shapes[k].toString() + " are not broadcastable");
      }
    }
    dims[i] = d;
  }
  return Shape::fromDims(dims, static_cast<size_t>(rank));
}

BroadcastLayout makeBroadcastLayout(const Shape &out, const Shape *shapes,
                                    int count) {
  BroadcastLayout layout;
  layout.count = count;
  // Full-rank strides per operand, 0 along broadcast (size-1 or missing) dims.
  int rank = out.rank();
  int64_t full[kMaxBroadcastOperands][Shape::kMaxRank] = {};
  for (int k = 0; k < count; ++k) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; --i) {
      int j = i - (rank - shapes[k].rank());
      int64_t dk = j >= 0 ? shapes[k][j] : 1;
      full[k][i] = dk == 1 ? 0 : s;
      s *= dk;
    }
  }
  // Drop size-1 dims and merge dims contiguous in every operand.
  int r = 0;
  for (int i = 0; i < rank; ++i) {
    if (out[i] == 1)
      continue;
    bool merge = r > 0;
    for (int k = 0; merge && k < count; ++k)
      merge = layout.strides[k][r - 1] == full[k][i] * out[i];
    if (merge) {
      layout.dims[r - 1] *= out[i];
      for (int k = 0; k < count; ++k)
        layout.strides[k][r - 1] = full[k][i];
      continue;
    }
    layout.dims[r] = out[i];
    for (int k = 0; k < count; ++k)
      layout.strides[k][r] = full[k][i];
    ++r;
  }
  if (r == 0) {
    layout.dims[0] = 1;
    for (int k = 0; k < count; ++k)
      layout.strides[k][0] = 0;
    r = 1;
  }
  layout.rank = r;
  return layout;
}

int64_t BroadcastLayout::rows() const {
  int64_t n = 1;
  for (int i = 0; i < rank - 1; ++i)
    n *= dims[i];
  return n;
}

void BroadcastLayout::rowOffsets(int64_t row, int64_t *offsets) const {
  for (int k = 0; k < count; ++k)
    offsets[k] = 0;
  for (int i = rank - 2; i >= 0; --i) {
    int64_t idx = row % dims[i];
    row /= dims[i];
    for (int k = 0; k < count; ++k)
      offsets[k] += idx * strides[k][i];
  }
}

Result<BinaryOperands> binaryOperands(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "a"));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "b"));
  BinaryOperands ops;
  ops.a = &ctx.input(0);
  ops.b = &ctx.input(1);
  ops.shapes[0] = ops.a->shape();
  ops.shapes[1] = ops.b->shape();
  Result<Shape> out = broadcastShapes(ops.shapes, 2);
  if (!out.isOk())
    return kernelError(ctx, out.status().message());
  ops.outShape = *out;
  return ops;
}

} // namespace ember::cpu
