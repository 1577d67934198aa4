//===- elementwise_walk.h - Parallel walks over broadcast operands -*- C++
//-*-===//
//
// forEachBroadcastSpan splits the result of a broadcast into contiguous spans
// (a row of the layout's innermost dim, or a piece of one when rows are few
// and long) and calls fn(inputOffsets, outputOffset, length) for each on the
// context's pool. Within a span operand k advances by
// layout.strides[k][rank - 1] (0 or 1) per element.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_CPU_ELEMENTWISE_WALK_H
#define EMBER_KERNELS_CPU_ELEMENTWISE_WALK_H

#include "kernels/shared/broadcast.h"
#include "kernels/shared/dense_common.h"

namespace ember::cpu {

/// Elements per parallel work item of elementwise loops.
constexpr int64_t kElementwiseSpan = 16384;

template <typename F>
void forEachBroadcastSpan(KernelContext &ctx, const BroadcastLayout &layout,
                          const F &fn) {
  int64_t rows = layout.rows(), inner = layout.inner();
  if (rows == 0 || inner == 0)
    return;
  int64_t pieces = (inner + kElementwiseSpan - 1) / kElementwiseSpan;
  int64_t pieceLen = (inner + pieces - 1) / pieces;
  int last = layout.rank - 1;
  parallelFor(
      ctx, rows * pieces, grainFor(pieceLen), [&](int64_t b, int64_t e) {
        int64_t offsets[kMaxBroadcastOperands];
        for (int64_t item = b; item < e; ++item) {
          int64_t row = item / pieces, piece = item % pieces;
          layout.rowOffsets(row, offsets);
          int64_t start = piece * pieceLen;
          int64_t len = inner - start < pieceLen ? inner - start : pieceLen;
          for (int k = 0; k < layout.count; ++k)
            offsets[k] += start * layout.strides[k][last];
          fn(offsets, row * inner + start, len);
        }
      });
}

/// out[i] = f(a[i * sa], b[i * sb]) for i < n, with sa, sb in {0, 1}; the
/// four stride cases are separate loops so that the compiler vectorizes them.
template <typename In, typename Out, typename F>
inline void binarySpan(const In *a, int64_t sa, const In *b, int64_t sb,
                       Out *out, int64_t n, const F &f) {
  if (sa && sb) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(a[i], b[i]);
  } else if (sa) {
    In bv = b[0];
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(a[i], bv);
  } else if (sb) {
    In av = a[0];
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(av, b[i]);
  } else {
    Out v = f(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i)
      out[i] = v;
  }
}

/// Broadcasts a and b to `outShape` and writes f(a, b) into out.
template <typename In, typename Out, typename F>
void broadcastBinary(KernelContext &ctx, const In *a, const Shape &aShape,
                     const In *b, const Shape &bShape, Out *out,
                     const Shape &outShape, const F &f) {
  Shape shapes[2] = {aShape, bShape};
  BroadcastLayout layout = makeBroadcastLayout(outShape, shapes, 2);
  int last = layout.rank - 1;
  int64_t sa = layout.strides[0][last], sb = layout.strides[1][last];
  forEachBroadcastSpan(
      ctx, layout, [&](const int64_t *off, int64_t o, int64_t n) {
        binarySpan(a + off[0], sa, b + off[1], sb, out + o, n, f);
      });
}

} // namespace ember::cpu

#endif // EMBER_KERNELS_CPU_ELEMENTWISE_WALK_H
