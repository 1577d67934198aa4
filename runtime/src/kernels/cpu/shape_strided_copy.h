//===- shape_strided_copy.h - Copy a strided view, densely ------*- C++ -*-===//
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

} // namespace cpu
} // namespace ember

#endif // EMBER_KERNELS_CPU_SHAPE_STRIDED_COPY_H
