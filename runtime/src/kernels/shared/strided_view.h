//===- strided_view.h - slice and transpose as strided views ----*- C++ -*-===//
//
// What slice and transpose copy, worked out the same way (same attribute
// handling and errors) for the CPU kernels
// (kernels/cpu/shape_strided_views.cpp, which copy with stridedCopy) and the
// CUDA kernels (cuda/dense/ shape_kernels.cpp, which copy on the device).
//
// slice: attrs `starts`, `ends` (required), `axes` (default 0..n-1), `steps`
// (default 1), all of one length. Negative starts/ends count from the back;
// then, per ONNX, starts/ends clamp to [0, dim] for positive steps and to
// [0, dim-1] / [-1, dim-1] for negative steps (so INT64_MAX / INT64_MIN mean
// "to the end"). A step of 0 or a repeated axis is an error.
// transpose: out.dim(k) = x.dim(perm[k]) for attr `perm` (default: the dims
// reversed).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_STRIDED_VIEW_H
#define EMBER_KERNELS_SHARED_STRIDED_VIEW_H

#include "ember/status.h"
#include "ember/tensor.h"
#include "kernels/attributes.h"
#include "kernels/kernel_context.h"

#include <cstdint>

namespace ember::cpu {

/// Output `shape`; output element (i0, ...) is input element
/// base + sum_k ik * strides[k] (element units; a stride may be 0 or
/// negative).
struct StridedView {
  Shape shape;
  int64_t base = 0;
  int64_t strides[Shape::kMaxRank] = {};
};

/// The validate hooks (plan load).
Status validateSlice(const Attributes &attrs, int, int);
Status validateTranspose(const Attributes &attrs, int, int);

/// Checks input 0 (x) and the attributes and returns the view of x that is
/// the kernel's result.
Result<StridedView> sliceView(KernelContext &ctx);
Result<StridedView> transposeView(KernelContext &ctx);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_STRIDED_VIEW_H
