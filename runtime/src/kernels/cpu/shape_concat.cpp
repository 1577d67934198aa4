//===- shape_concat.cpp - concat ------------------------------------------===//
//
// concat(inputs...) along attr `axis` (may be negative). Every input has the
// same dtype and rank and equal dims except along axis; any dtype.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_common.h"
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"

#include <cstring>

namespace ember::cpu {
namespace {

Status validateConcat(const Attributes &attrs, int, int) {
  if (!attrs.has("axis"))
    return invalidArgument("missing attribute 'axis'");
  return validateIntAttr(attrs, "axis");
}

Status concatKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateConcat(ctx.attrs(), 0, 0)));
  int count = ctx.numInputs();
  for (int i = 0; i < count; ++i)
    EMBER_RETURN_IF_ERROR(requireInput(ctx, i, "concat operand"));
  const Tensor &first = ctx.input(0);
  if (first.rank() < 1)
    return kernelError(ctx, "concat: inputs must have rank >= 1, got " +
                                first.describe());
  EMBER_ASSIGN_OR_RETURN(
      int axis,
      normalizeAxis(ctx, *ctx.attrs().getInt("axis"), first.rank(), "axis"));
  Shape outShape = first.shape();
  outShape[axis] = 0;
  for (int i = 0; i < count; ++i) {
    const Tensor &t = ctx.input(i);
    bool ok = t.dtype() == first.dtype() && t.rank() == first.rank();
    for (int k = 0; ok && k < t.rank(); ++k)
      ok = k == axis || t.dim(k) == first.dim(k);
    if (!ok)
      return kernelError(ctx, "concat: input " + std::to_string(i) + " " +
                                  t.describe() + " does not match input 0 " +
                                  first.describe() + " outside axis " +
                                  std::to_string(axis));
    outShape[axis] += t.dim(axis);
  }
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, first.dtype(), outShape));
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < axis; ++k)
    outer *= outShape[k];
  for (int k = axis + 1; k < outShape.rank(); ++k)
    inner *= outShape[k];
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
  KernelDef def;
  def.name = "concat";
  def.run = concatKernel;
  def.validate = validateConcat;
  def.minInputs = 1;
  def.maxInputs = 1 << 16;
  def.summary = "concatenates the inputs along attr axis (any dtype)";
  return registry.add(std::move(def));
}

} // namespace ember::cpu
