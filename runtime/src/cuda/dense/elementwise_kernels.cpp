//===- elementwise_kernels.cpp - Unary, binary, comparison, where on CUDA -===//
//
// The contracts of kernels/cpu/elementwise_{unary,binary,compare}.cpp: float
// math in float32 (float16/bfloat16 inputs converted on the device first),
// int32/int64 add/sub/mul/max/min wrapping, comparisons to bool, where of
// any dtype; numpy broadcasting through the CPU's BroadcastLayout.
//
//===----------------------------------------------------------------------===//
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/dense_registration.h"
#include "kernels/shared/dense_common.h"

namespace ember::cuda::dense {
namespace {

using cpu::kernelError;

template <int Op> Status unaryKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(const float *in, deviceFloatInput(ctx, x, "x"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, DType::kFloat32, x.shape()));
  return cpu::atLocation(
      ctx, launchUnary(*env, Op, in, out->data<float>(), x.numel()));
}

const char *binaryName(int op) {
  static const char *names[] = {"add", "sub", "mul", "div", "max", "min"};
  return names[op];
}

template <int Op> Status binaryKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::BinaryOperands ops, cpu::binaryOperands(ctx));
  const Tensor &a = *ops.a, &b = *ops.b;
  const Shape &outShape = ops.outShape;
  BroadcastIndex ix =
      toBroadcastIndex(cpu::makeBroadcastLayout(outShape, ops.shapes, 2));
  int64_t n = outShape.numel();
  if (cpu::isFloatLike(a.dtype()) && cpu::isFloatLike(b.dtype())) {
    EMBER_ASSIGN_OR_RETURN(const float *pa, deviceFloatInput(ctx, a, "a"));
    EMBER_ASSIGN_OR_RETURN(const float *pb, deviceFloatInput(ctx, b, "b"));
    EMBER_ASSIGN_OR_RETURN(Tensor * out,
                           cpu::allocateOutput(ctx, DType::kFloat32, outShape));
    return cpu::atLocation(
        ctx, launchBinary<float>(*env, ix, Op, pa, pb, out->data<float>(), n));
  }
  constexpr bool allowsIntegers = Op != kBinaryDiv;
  if (allowsIntegers && a.dtype() == b.dtype() &&
      (a.dtype() == DType::kInt64 || a.dtype() == DType::kInt32)) {
    EMBER_ASSIGN_OR_RETURN(Tensor * out,
                           cpu::allocateOutput(ctx, a.dtype(), outShape));
    if (a.dtype() == DType::kInt64)
      return cpu::atLocation(
          ctx,
          launchBinary<int64_t>(*env, ix, Op, a.data<int64_t>(),
                                b.data<int64_t>(), out->data<int64_t>(), n));
    return cpu::atLocation(
        ctx, launchBinary<int32_t>(*env, ix, Op, a.data<int32_t>(),
                                   b.data<int32_t>(), out->data<int32_t>(), n));
  }
  std::string allowed =
      allowsIntegers
          ? "both float32/float16/bfloat16 or both int32 or both int64"
          : "float32/float16/bfloat16";
  return kernelError(ctx, std::string(binaryName(Op)) + ": operands must be " +
                              allowed + ", got a " + a.describe() + " and b " +
                              b.describe());
}

template <int Op> Status compareKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::BinaryOperands ops, cpu::binaryOperands(ctx));
  const Tensor &a = *ops.a, &b = *ops.b;
  const Shape &outShape = ops.outShape;
  BroadcastIndex ix =
      toBroadcastIndex(cpu::makeBroadcastLayout(outShape, ops.shapes, 2));
  int64_t n = outShape.numel();
  auto run = [&](auto tag, const void *pa, const void *pb) -> Status {
    using T = decltype(tag);
    EMBER_ASSIGN_OR_RETURN(Tensor * out,
                           cpu::allocateOutput(ctx, DType::kBool, outShape));
    return cpu::atLocation(ctx, launchCompare<T>(*env, ix, Op,
                                                 static_cast<const T *>(pa),
                                                 static_cast<const T *>(pb),
                                                 out->data<uint8_t>(), n));
  };
  if (cpu::isFloatLike(a.dtype()) && cpu::isFloatLike(b.dtype())) {
    EMBER_ASSIGN_OR_RETURN(const float *pa, deviceFloatInput(ctx, a, "a"));
    EMBER_ASSIGN_OR_RETURN(const float *pb, deviceFloatInput(ctx, b, "b"));
    return run(float(), pa, pb);
  }
  if (a.dtype() == b.dtype()) {
    switch (a.dtype()) {
    case DType::kInt64:
      return run(int64_t(), a.data(), b.data());
    case DType::kInt32:
      return run(int32_t(), a.data(), b.data());
    case DType::kInt8:
      return run(int8_t(), a.data(), b.data());
    case DType::kUInt8:
    case DType::kBool:
      return run(uint8_t(), a.data(), b.data());
    case DType::kFloat64:
      return run(double(), a.data(), b.data());
    default:
      break;
    }
  }
  return kernelError(ctx,
                     "comparison operands must have the same dtype (or both be "
                     "float32/float16/bfloat16), got a " +
                         a.describe() + " and b " + b.describe());
}

Status whereKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 0, "condition"));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 1, "a"));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 2, "b"));
  const Tensor &c = ctx.input(0), &a = ctx.input(1), &b = ctx.input(2);
  if (c.dtype() != DType::kBool && c.dtype() != DType::kUInt8)
    return kernelError(ctx,
                       "where: condition must be bool, got " + c.describe());
  if (a.dtype() != b.dtype())
    return kernelError(ctx, "where: a and b must have the same dtype, got a " +
                                a.describe() + " and b " + b.describe());
  Shape shapes[3] = {c.shape(), a.shape(), b.shape()};
  Result<Shape> outShape = cpu::broadcastShapes(shapes, 3);
  if (!outShape.isOk())
    return kernelError(ctx, "where: " + outShape.status().message());
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, a.dtype(), *outShape));
  if (out->numel() == 0)
    return Status::ok();
  BroadcastIndex ix =
      toBroadcastIndex(cpu::makeBroadcastLayout(*outShape, shapes, 3));
  return cpu::atLocation(
      ctx,
      launchWhere(*env, ix, c.data<uint8_t>(), a.data(), b.data(), out->data(),
                  static_cast<int>(dtypeSize(a.dtype())), out->numel()));
}

} // namespace

Status registerElementwiseKernels(KernelRegistry &r) {
  constexpr const char *kHow = "grid-stride elementwise";
  return addCudaKernels(
      r, {
             {"relu", unaryKernel<kUnaryRelu>, kHow},
             {"sigmoid", unaryKernel<kUnarySigmoid>, kHow},
             {"tanh", unaryKernel<kUnaryTanh>, kHow},
             {"neg", unaryKernel<kUnaryNeg>, kHow},
             {"exp", unaryKernel<kUnaryExp>, kHow},
             {"log", unaryKernel<kUnaryLog>, kHow},
             {"sqrt", unaryKernel<kUnarySqrt>, kHow},
             {"abs", unaryKernel<kUnaryAbs>, kHow},
             {"add", binaryKernel<kBinaryAdd>, kHow},
             {"sub", binaryKernel<kBinarySub>, kHow},
             {"mul", binaryKernel<kBinaryMul>, kHow},
             {"div", binaryKernel<kBinaryDiv>, kHow},
             {"max", binaryKernel<kBinaryMax>, kHow},
             {"min", binaryKernel<kBinaryMin>, kHow},
             {"equal", compareKernel<kCompareEqual>, kHow},
             {"greater", compareKernel<kCompareGreater>, kHow},
             {"greater_equal", compareKernel<kCompareGreaterEqual>, kHow},
             {"where", whereKernel, kHow},
         });
}

} // namespace ember::cuda::dense
