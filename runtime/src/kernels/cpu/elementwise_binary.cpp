//===- elementwise_binary.cpp - add sub mul div max min -------------------===//
//
// Broadcasting binary arithmetic. float32 (float16/bfloat16 inputs are
// converted, the result is float32) for every op; int32/int64 for add, sub,
// mul (wrapping), max and min. Both operands must be float-like or both the
// same integer dtype.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/cpu/elementwise_walk.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"

#include <type_traits>

namespace ember::cpu {
namespace {

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin };

constexpr bool allowsIntegers(BinaryOp op) { return op != BinaryOp::kDiv; }

template <BinaryOp Op, typename T> struct BinaryFn {
  T operator()(T a, T b) const {
    using U =
        std::make_unsigned_t<T>; // integer ops wrap instead of overflowing
    if constexpr (Op == BinaryOp::kAdd)
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    if constexpr (Op == BinaryOp::kSub)
      return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
    if constexpr (Op == BinaryOp::kMul)
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    if constexpr (Op == BinaryOp::kMax)
      return a > b ? a : b;
    if constexpr (Op == BinaryOp::kMin)
      return a < b ? a : b;
    return T();
  }
};

template <BinaryOp Op> struct BinaryFn<Op, float> {
  float operator()(float a, float b) const {
    if constexpr (Op == BinaryOp::kAdd)
      return a + b;
    if constexpr (Op == BinaryOp::kSub)
      return a - b;
    if constexpr (Op == BinaryOp::kMul)
      return a * b;
    if constexpr (Op == BinaryOp::kDiv)
      return a / b;
    // max/min propagate NaN (numpy maximum/minimum).
    if constexpr (Op == BinaryOp::kMax)
      return (a > b || a != a) ? a : b;
    if constexpr (Op == BinaryOp::kMin)
      return (a < b || a != a) ? a : b;
    return 0.f;
  }
};

const char *opName(BinaryOp op) {
  switch (op) {
  case BinaryOp::kAdd:
    return "add";
  case BinaryOp::kSub:
    return "sub";
  case BinaryOp::kMul:
    return "mul";
  case BinaryOp::kDiv:
    return "div";
  case BinaryOp::kMax:
    return "max";
  case BinaryOp::kMin:
    return "min";
  }
  return "?";
}

template <BinaryOp Op, typename T>
Status runTyped(KernelContext &ctx, const T *a, const Shape &aShape, const T *b,
                const Shape &bShape, const Shape &outShape, DType outDType) {
  EMBER_ASSIGN_OR_RETURN(Tensor * out, allocateOutput(ctx, outDType, outShape));
  broadcastBinary(ctx, a, aShape, b, bShape, out->data<T>(), outShape,
                  BinaryFn<Op, T>());
  return Status::ok();
}

template <BinaryOp Op> Status binaryKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(BinaryOperands ops, binaryOperands(ctx));
  const Tensor &a = *ops.a, &b = *ops.b;
  const Shape &outShape = ops.outShape;

  if (isFloatLike(a.dtype()) && isFloatLike(b.dtype())) {
    EMBER_ASSIGN_OR_RETURN(const float *pa, floatInput(ctx, a, "a"));
    EMBER_ASSIGN_OR_RETURN(const float *pb, floatInput(ctx, b, "b"));
    return runTyped<Op, float>(ctx, pa, a.shape(), pb, b.shape(), outShape,
                               DType::kFloat32);
  }
  if constexpr (allowsIntegers(Op)) {
    if (a.dtype() == b.dtype() && a.dtype() == DType::kInt64)
      return runTyped<Op, int64_t>(ctx, a.data<int64_t>(), a.shape(),
                                   b.data<int64_t>(), b.shape(), outShape,
                                   DType::kInt64);
    if (a.dtype() == b.dtype() && a.dtype() == DType::kInt32)
      return runTyped<Op, int32_t>(ctx, a.data<int32_t>(), a.shape(),
                                   b.data<int32_t>(), b.shape(), outShape,
                                   DType::kInt32);
  }
  std::string allowed =
      allowsIntegers(Op)
          ? "both float32/float16/bfloat16 or both int32 or both int64"
          : "float32/float16/bfloat16";
  return kernelError(ctx, std::string(opName(Op)) + ": operands must be " +
                              allowed + ", got a " + a.describe() + " and b " +
                              b.describe());
}

} // namespace

Status registerBinaryKernels(KernelRegistry &registry) {
  return addKernels(
      registry, {
                    {"add", binaryKernel<BinaryOp::kAdd>, nullptr,
                     "a + b with broadcasting (float32, int32, int64)"},
                    {"sub", binaryKernel<BinaryOp::kSub>, nullptr,
                     "a - b with broadcasting (float32, int32, int64)"},
                    {"mul", binaryKernel<BinaryOp::kMul>, nullptr,
                     "a * b with broadcasting (float32, int32, int64)"},
                    {"div", binaryKernel<BinaryOp::kDiv>, nullptr,
                     "a / b with broadcasting (float32)"},
                    {"max", binaryKernel<BinaryOp::kMax>, nullptr,
                     "elementwise maximum with broadcasting, NaN propagates"},
                    {"min", binaryKernel<BinaryOp::kMin>, nullptr,
                     "elementwise minimum with broadcasting, NaN propagates"},
                });
}

} // namespace ember::cpu
