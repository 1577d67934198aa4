//===- elementwise_compare.cpp - equal greater greater_equal where -------===//
//
// Comparisons broadcast like the arithmetic ops and produce bool (one byte,
// 0 or 1). Operands are both float-like (compared as float32) or both the
// same integer/bool dtype. `where` selects between a and b (same dtype, any
// dtype) with a bool condition, all three broadcast together.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/cpu/elementwise_walk.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"

#include <cstring>

namespace ember::cpu {
namespace {

enum class CompareOp { kEqual, kGreater, kGreaterEqual };

template <CompareOp Op> struct CompareFn {
  template <typename T> uint8_t operator()(T a, T b) const {
    if constexpr (Op == CompareOp::kEqual)
      return a == b;
    if constexpr (Op == CompareOp::kGreaterEqual)
      return a >= b;
    return a > b;
  }
};

template <CompareOp Op, typename T>
Status runTyped(KernelContext &ctx, const T *a, const Shape &aShape, const T *b,
                const Shape &bShape, const Shape &outShape) {
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, DType::kBool, outShape));
  broadcastBinary(ctx, a, aShape, b, bShape, out->data<uint8_t>(), outShape,
                  CompareFn<Op>());
  return Status::ok();
}

template <CompareOp Op> Status compareKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(BinaryOperands ops, binaryOperands(ctx));
  const Tensor &a = *ops.a, &b = *ops.b;
  const Shape &outShape = ops.outShape;
  if (isFloatLike(a.dtype()) && isFloatLike(b.dtype())) {
    EMBER_ASSIGN_OR_RETURN(const float *pa, floatInput(ctx, a, "a"));
    EMBER_ASSIGN_OR_RETURN(const float *pb, floatInput(ctx, b, "b"));
    return runTyped<Op>(ctx, pa, a.shape(), pb, b.shape(), outShape);
  }
  if (a.dtype() == b.dtype()) {
    switch (a.dtype()) {
    case DType::kInt64:
      return runTyped<Op>(ctx, a.data<int64_t>(), a.shape(), b.data<int64_t>(),
                          b.shape(), outShape);
    case DType::kInt32:
      return runTyped<Op>(ctx, a.data<int32_t>(), a.shape(), b.data<int32_t>(),
                          b.shape(), outShape);
    case DType::kInt8:
      return runTyped<Op>(ctx, a.data<int8_t>(), a.shape(), b.data<int8_t>(),
                          b.shape(), outShape);
    case DType::kUInt8:
    case DType::kBool:
      return runTyped<Op>(ctx, a.data<uint8_t>(), a.shape(), b.data<uint8_t>(),
                          b.shape(), outShape);
    case DType::kFloat64:
      return runTyped<Op>(ctx, a.data<double>(), a.shape(), b.data<double>(),
                          b.shape(), outShape);
    default:
      break;
    }
  }
  return kernelError(ctx,
                     "comparison operands must have the same dtype (or both be "
                     "float32/float16/bfloat16), got a " +
                         a.describe() + " and b " + b.describe());
}

template <typename T>
void whereTyped(KernelContext &ctx, const BroadcastLayout &layout,
                const uint8_t *cond, const void *a, const void *b, void *out) {
  const T *pa = static_cast<const T *>(a), *pb = static_cast<const T *>(b);
  T *po = static_cast<T *>(out);
  int last = layout.rank - 1;
  int64_t sc = layout.strides[0][last], sa = layout.strides[1][last],
          sb = layout.strides[2][last];
  forEachBroadcastSpan(ctx, layout,
                       [&](const int64_t *off, int64_t o, int64_t n) {
                         const uint8_t *c = cond + off[0];
                         const T *x = pa + off[1], *y = pb + off[2];
                         T *dst = po + o;
                         for (int64_t i = 0; i < n; ++i)
                           dst[i] = c[i * sc] ? x[i * sa] : y[i * sb];
                       });
}

Status whereKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "condition"));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "a"));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 2, "b"));
  const Tensor &c = ctx.input(0), &a = ctx.input(1), &b = ctx.input(2);
  if (c.dtype() != DType::kBool && c.dtype() != DType::kUInt8)
    return kernelError(ctx,
                       "where: condition must be bool, got " + c.describe());
  if (a.dtype() != b.dtype())
    return kernelError(ctx, "where: a and b must have the same dtype, got a " +
                                a.describe() + " and b " + b.describe());
  Shape shapes[3] = {c.shape(), a.shape(), b.shape()};
  Result<Shape> outShape = broadcastShapes(shapes, 3);
  if (!outShape.isOk())
    return kernelError(ctx, "where: " + outShape.status().message());
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, a.dtype(), *outShape));
  if (out->numel() == 0)
    return Status::ok();
  BroadcastLayout layout = makeBroadcastLayout(*outShape, shapes, 3);
  const uint8_t *cond = c.data<uint8_t>();
  switch (dtypeSize(a.dtype())) {
  case 1:
    whereTyped<uint8_t>(ctx, layout, cond, a.data(), b.data(), out->data());
    break;
  case 2:
    whereTyped<uint16_t>(ctx, layout, cond, a.data(), b.data(), out->data());
    break;
  case 4:
    whereTyped<uint32_t>(ctx, layout, cond, a.data(), b.data(), out->data());
    break;
  case 8:
    whereTyped<uint64_t>(ctx, layout, cond, a.data(), b.data(), out->data());
    break;
  default:
    return internalError(ctx.location() + ": where: unsupported element size");
  }
  return Status::ok();
}

} // namespace

Status registerCompareKernels(KernelRegistry &registry) {
  return addKernels(
      registry, {
                    {"equal", compareKernel<CompareOp::kEqual>, nullptr,
                     "a == b with broadcasting -> bool"},
                    {"greater", compareKernel<CompareOp::kGreater>, nullptr,
                     "a > b with broadcasting -> bool"},
                    {"greater_equal", compareKernel<CompareOp::kGreaterEqual>,
                     nullptr, "a >= b with broadcasting -> bool"},
                    {"where", whereKernel, nullptr,
                     "condition ? a : b with broadcasting (any dtype)"},
                });
}

} // namespace ember::cpu
