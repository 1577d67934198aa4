//===- shape_fill.cpp - constant_of_shape ---------------------------------===//
//
// constant_of_shape (ONNX ConstantOfShape): input int64 [n] holding the
// shape; attrs `value` (number, default 0) and `dtype` (name, default
// float32).
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/cast.h"
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"

#include <cstring>

namespace ember::cpu {
namespace {

Status validateConstantOfShape(const Attributes &attrs, int, int) {
  EMBER_RETURN_IF_ERROR(attrs.getFloat("value").status());
  EMBER_ASSIGN_OR_RETURN(std::string name, attrs.getString("dtype"));
  if (!parseDType(name))
    return invalidArgument("attribute 'dtype' names the unknown dtype '" +
                           name + "'");
  return Status::ok();
}

Status constantOfShapeKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(
      atLocation(ctx, validateConstantOfShape(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "shape"));
  const Tensor &s = ctx.input(0);
  if (s.dtype() != DType::kInt64 || s.rank() != 1)
    return kernelError(
        ctx, "constant_of_shape: the shape input must be int64 [n], got " +
                 s.describe());
  Result<Shape> shape =
      Shape::fromDims(s.data<int64_t>(), static_cast<size_t>(s.dim(0)));
  if (!shape.isOk())
    return kernelError(ctx, "constant_of_shape: " + shape.status().message());
  DType dt = *parseDType(*ctx.attrs().getString("dtype"));
  double value = *ctx.attrs().getFloat("value");
  EMBER_ASSIGN_OR_RETURN(Tensor * out, allocateOutput(ctx, dt, *shape));
  unsigned char one[8];
  convertElements(&value, DType::kFloat64, one, dt, 0, 1);
  size_t es = dtypeSize(dt);
  char *o = out->data<char>();
  parallelFor(ctx, out->numel(), 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      std::memcpy(o + i * es, one, es);
  });
  return Status::ok();
}

} // namespace

Status registerFillKernels(KernelRegistry &registry) {
  return addKernels(
      registry,
      {{"constant_of_shape", constantOfShapeKernel, validateConstantOfShape,
        "tensor of the int64 shape input filled with attr value (attr "
        "dtype)"}});
}

} // namespace ember::cpu
