//===- dense_reduce.cpp - reduce_sum reduce_max ---------------------------===//
//
// ONNX ReduceSum/Max with the axes as an attribute: `axes` (ints, may
// be negative; absent or empty reduces every axis), `keepdims` (default 1).
// float32 out (float16/bfloat16 inputs converted); sums accumulate in double.
// reduce_max over an empty extent is an error.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/reduce_shape.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace ember::cpu {
namespace {

enum class ReduceOp { kSum, kMax };

/// The input's dims merged into runs that are all kept or all reduced.
struct ReduceLayout {
  int keptRank = 0, reducedRank = 0;
  int64_t keptDims[Shape::kMaxRank], keptStrides[Shape::kMaxRank];
  int64_t redDims[Shape::kMaxRank], redStrides[Shape::kMaxRank];
  int64_t keptCount = 1, reducedCount = 1;
};

ReduceLayout makeLayout(const Shape &shape, const bool *reduced) {
  ReduceLayout l;
  int64_t strides[Shape::kMaxRank];
  contiguousStrides(shape, strides);
  int lastKind = -1; // 0 kept, 1 reduced
  for (int i = 0; i < shape.rank(); ++i) {
    int64_t d = shape[i];
    if (d == 1)
      continue;
    int kind = reduced[i] ? 1 : 0;
    int64_t *dims = kind ? l.redDims : l.keptDims;
    int64_t *st = kind ? l.redStrides : l.keptStrides;
    int &r = kind ? l.reducedRank : l.keptRank;
    if (kind == lastKind && r > 0) { // contiguous with the previous dim
      dims[r - 1] *= d;
      st[r - 1] = strides[i];
    } else {
      dims[r] = d;
      st[r] = strides[i];
      ++r;
    }
    lastKind = kind;
  }
  for (int i = 0; i < l.keptRank; ++i)
    l.keptCount *= l.keptDims[i];
  for (int i = 0; i < l.reducedRank; ++i)
    l.reducedCount *= l.redDims[i];
  return l;
}

template <ReduceOp Op>
double reduceOne(const float *base, const ReduceLayout &l) {
  double acc =
      Op == ReduceOp::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
  if (l.reducedRank == 0) {
    acc = base[0];
  } else {
    int last = l.reducedRank - 1;
    int64_t idx[Shape::kMaxRank] = {};
    int64_t innerLen = l.redDims[last], innerStride = l.redStrides[last];
    int64_t outerCount = l.reducedCount / innerLen;
    for (int64_t o = 0; o < outerCount; ++o) {
      int64_t off = 0;
      for (int i = 0; i < last; ++i)
        off += idx[i] * l.redStrides[i];
      const float *p = base + off;
      if (Op == ReduceOp::kMax) {
        for (int64_t j = 0; j < innerLen; ++j) {
          double v = p[j * innerStride];
          if (v > acc || v != v)
            acc = v;
          if (acc != acc)
            break;
        }
      } else {
        for (int64_t j = 0; j < innerLen; ++j)
          acc += p[j * innerStride];
      }
      for (int i = last - 1; i >= 0; --i) { // odometer over the outer dims
        if (++idx[i] < l.redDims[i])
          break;
        idx[i] = 0;
      }
    }
  }
  return acc;
}

/// Sum over one run of axes between kept ones, the last input dim
/// kept ([outer, reduced, inner] with inner contiguous, e.g. the sum over
/// the sequence of a padded [B, L, D]): each output row accumulates whole
/// input rows, which vectorizes, in the same order (and the same double
/// accumulators) as reduceOne. False when the layout is another.
template <ReduceOp Op>
bool reduceMiddleAxis(KernelContext &ctx, const ReduceLayout &l,
                      const float *in, float *o) {
  if (Op == ReduceOp::kMax || l.reducedRank != 1 || l.keptRank < 1 ||
      l.keptRank > 2)
    return false;
  const int64_t inner = l.keptDims[l.keptRank - 1];
  const int64_t red = l.redDims[0];
  if (l.keptStrides[l.keptRank - 1] != 1 || l.redStrides[0] != inner ||
      (l.keptRank == 2 && l.keptStrides[0] != red * inner))
    return false;
  const int64_t outer = l.keptRank == 2 ? l.keptDims[0] : 1;
  parallelFor(ctx, outer, grainFor(red * inner), [&](int64_t b, int64_t e) {
    std::vector<double> acc(static_cast<size_t>(inner));
    for (int64_t i = b; i < e; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0);
      const float *p = in + i * red * inner;
      for (int64_t m = 0; m < red; ++m, p += inner)
        for (int64_t c = 0; c < inner; ++c)
          acc[c] += p[c];
      float *row = o + i * inner;
      for (int64_t c = 0; c < inner; ++c)
        row[c] = static_cast<float>(acc[c]);
    }
  });
  return true;
}

template <ReduceOp Op> Status reduceKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(ReduceShape s, reduceShape(ctx, Op == ReduceOp::kMax));
  const Tensor &x = ctx.input(0);
  const bool *reduced = s.reduced;
  const Shape &outShape = s.outShape;
  EMBER_ASSIGN_OR_RETURN(const float *in, floatInput(ctx, x, "x"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, DType::kFloat32, outShape));
  float *o = out->data<float>();
  int64_t outCount = outShape.numel();
  if (outCount == 0)
    return Status::ok();
  if (x.numel() == 0) { // an empty reduced extent: sums are 0 (reduce_max
                        // refused it in reduceShape)
    std::fill(o, o + outCount, 0.f);
    return Status::ok();
  }
  ReduceLayout l = makeLayout(x.shape(), reduced);
  if (reduceMiddleAxis<Op>(ctx, l, in, o))
    return Status::ok();
  parallelFor(ctx, l.keptCount, grainFor(l.reducedCount),
              [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) {
                  int64_t off = 0, rem = i;
                  for (int k = l.keptRank - 1; k >= 0; --k) {
                    off += (rem % l.keptDims[k]) * l.keptStrides[k];
                    rem /= l.keptDims[k];
                  }
                  o[i] = static_cast<float>(reduceOne<Op>(in + off, l));
                }
              });
  return Status::ok();
}

} // namespace

Status registerReduceKernels(KernelRegistry &registry) {
  return addKernels(registry,
                    {
                        {"reduce_sum", reduceKernel<ReduceOp::kSum>,
                         validateReduce, "sum over attr axes (keepdims)"},
                        {"reduce_max", reduceKernel<ReduceOp::kMax>,
                         validateReduce, "max over attr axes (keepdims)"},
                    });
}

} // namespace ember::cpu
