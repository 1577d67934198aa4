//===- shape_strided_copy.h - Copy a strided view into a dense tensor -*- C++
//-*-===//
//
// The engine behind transpose, slice and expand: output element
// (i0, ..., in-1) of a dense row-major result is input element
// base + sum_k ik * inStrides[k] (element units; strides may be 0 to repeat or
// negative to walk backwards). Works for any element size.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_CPU_SHAPE_STRIDED_COPY_H
#define EMBER_KERNELS_CPU_SHAPE_STRIDED_COPY_H

#include "ember/status.h"
#include "ember/tensor.h"

#include <cstddef>
#include <cstdint>

namespace ember {
class KernelContext;
namespace cpu {

void stridedCopy(KernelContext &ctx, const void *in, int64_t inBase,
                 const int64_t *inStrides, void *out, const Shape &outShape,
                 size_t elemSize);

/// What slice and transpose copy: output `shape`, element (i0, ...) is input
/// element base + sum_k ik * strides[k]. The planning half of those kernels,
/// shared with the CUDA backend (which does the copy on the device).
struct StridedView {
  Shape shape;
  int64_t base = 0;
  int64_t strides[Shape::kMaxRank] = {};
};
/// Checks the attributes and x like the kernels do (same errors).
Result<StridedView> planSlice(KernelContext &ctx, const Tensor &x);
Result<StridedView> planTranspose(KernelContext &ctx, const Tensor &x);

} // namespace cpu
} // namespace ember

#endif // EMBER_KERNELS_CPU_SHAPE_STRIDED_COPY_H
