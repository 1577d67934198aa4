//===- shape_concat.cpp - concat ------------------------------------------===//
//
// concat(inputs...) along attr `axis` (may be negative). Every input has the
// same dtype and rank and equal dims except along axis; any dtype.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/concat_shape.h"
#include "kernels/shared/dense_common.h"

#include <cstring>

namespace ember::cpu {
namespace {

Status concatKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(ConcatShape s, concatShape(ctx));
  const int count = ctx.numInputs();
  const Tensor &first = ctx.input(0);
  const int axis = s.axis;
  const Shape &outShape = s.outShape;
  const int64_t outer = s.outer, inner = s.inner;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, first.dtype(), outShape));
  size_t es = dtypeSize(first.dtype());
  int64_t outRow = outShape[axis] * inner; // elements per outer index
  char *dst = out->data<char>();
  if (out->numel() == 0)
    return Status::ok();
  parallelFor(ctx, outer, grainFor(outRow * int64_t(es), 1 << 16),
              [&](int64_t b, int64_t e) {
                for (int64_t o = b; o < e; ++o) {
                  char *d = dst + o * outRow * es;
                  for (int i = 0; i < count; ++i) {
                    const Tensor &t = ctx.input(i);
                    size_t bytes =
                        static_cast<size_t>(t.dim(axis) * inner) * es;
                    if (bytes)
                      std::memcpy(d, t.data<char>() + o * bytes, bytes);
                    d += bytes;
                  }
                }
              });
  return Status::ok();
}

} // namespace

Status registerConcatKernels(KernelRegistry &registry) {
  return addKernels(registry,
                    {{"concat", concatKernel, validateConcat,
                      "concatenates the inputs along attr axis (any dtype)"}});
}

} // namespace ember::cpu
