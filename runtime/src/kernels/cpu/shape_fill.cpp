//===- shape_fill.cpp - range constant_of_shape ---------------------------===//
//
// range (ONNX Range): inputs start, limit, delta, scalars ([] or [1]) of one
// dtype (float32, float64, int32, int64); out[i] = start + i * delta for
// i < max(ceil((limit - start) / delta), 0). delta 0 is an error.
// constant_of_shape (ONNX ConstantOfShape): input int64 [n] holding the
// shape; attrs `value` (number, default 0) and `dtype` (name, default
// float32).
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/cast.h"
#include "kernels/cpu/dense_common.h"
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"

#include <cmath>
#include <cstring>

namespace ember::cpu {
namespace {

constexpr int64_t kMaxRangeLength = int64_t{1} << 40;

Status scalarInput(KernelContext &ctx, int i, const char *name) {
  EMBER_RETURN_IF_ERROR(requireInput(ctx, i, name));
  const Tensor &t = ctx.input(i);
  if (t.numel() != 1 || t.rank() > 1)
    return kernelError(ctx, std::string("range: ") + name +
                                " must be a scalar ([] or [1]), got " +
                                t.describe());
  return Status::ok();
}

template <typename T> Status rangeTyped(KernelContext &ctx) {
  T start = *ctx.input(0).data<T>(), limit = *ctx.input(1).data<T>(),
    delta = *ctx.input(2).data<T>();
  if (delta == T(0))
    return kernelError(ctx, "range: delta is 0");
  int64_t n;
  if constexpr (std::is_integral_v<T>) {
    __int128 span = static_cast<__int128>(limit) - start;
    __int128 steps = span / delta + ((span % delta) != 0 ? 1 : 0);
    // span and delta of different signs give steps <= 0
    if ((span > 0) != (delta > 0) || span == 0)
      steps = 0;
    if (steps > kMaxRangeLength)
      return kernelError(ctx, "range: more than 2^40 elements");
    n = static_cast<int64_t>(steps);
  } else {
    double steps = std::ceil((double(limit) - double(start)) / double(delta));
    if (!(steps == steps) || steps > double(kMaxRangeLength))
      return kernelError(ctx,
                         "range: the length is not finite or exceeds 2^40");
    n = steps > 0 ? static_cast<int64_t>(steps) : 0;
  }
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, ctx.input(0).dtype(), {n}));
  T *o = out->data<T>();
  for (int64_t i = 0; i < n; ++i)
    o[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  return Status::ok();
}

Status rangeKernel(KernelContext &ctx) {
  for (int i = 0; i < 3; ++i)
    EMBER_RETURN_IF_ERROR(scalarInput(ctx, i,
                                      i == 0   ? "start"
                                      : i == 1 ? "limit"
                                               : "delta"));
  DType dt = ctx.input(0).dtype();
  if (ctx.input(1).dtype() != dt || ctx.input(2).dtype() != dt)
    return kernelError(
        ctx, "range: start, limit and delta must have one dtype, got " +
                 ctx.input(0).describe() + ", " + ctx.input(1).describe() +
                 ", " + ctx.input(2).describe());
  switch (dt) {
  case DType::kFloat32:
    return rangeTyped<float>(ctx);
  case DType::kFloat64:
    return rangeTyped<double>(ctx);
  case DType::kInt32:
    return rangeTyped<int32_t>(ctx);
  case DType::kInt64:
    return rangeTyped<int64_t>(ctx);
  default:
    return kernelError(
        ctx, "range: dtype must be float32, float64, int32 or int64, got " +
                 ctx.input(0).describe());
  }
}

Status validateConstantOfShape(const Attributes &attrs, int, int) {
  if (attrs.has("value"))
    EMBER_RETURN_IF_ERROR(attrs.getFloat("value").status());
  if (attrs.has("dtype")) {
    EMBER_ASSIGN_OR_RETURN(std::string name, attrs.getString("dtype"));
    if (!parseDType(name))
      return invalidArgument("attribute 'dtype' names the unknown dtype '" +
                             name + "'");
  }
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
  DType dt = *parseDType(ctx.attrs().getString("dtype", "float32"));
  double value = ctx.attrs().getFloat("value", 0.0);
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
  KernelDef range;
  range.name = "range";
  range.run = rangeKernel;
  range.summary = "ONNX Range from scalar inputs start, limit, delta";
  EMBER_RETURN_IF_ERROR(registry.add(std::move(range)));
  KernelDef cos;
  cos.name = "constant_of_shape";
  cos.run = constantOfShapeKernel;
  cos.validate = validateConstantOfShape;
  cos.summary =
      "tensor of the int64 shape input filled with attr value (attr dtype)";
  return registry.add(std::move(cos));
}

} // namespace ember::cpu
