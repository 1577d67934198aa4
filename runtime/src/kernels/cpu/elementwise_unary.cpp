//===- elementwise_unary.cpp - relu sigmoid tanh neg exp log sqrt abs identity ===//
//
// Float unary math over float32 (float16/bfloat16 inputs are converted, the
// result is float32). `identity` works for every dtype and aliases its input.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/cpu/elementwise_walk.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/elementwise_activation.h"

#include <cmath>

namespace ember::cpu {
namespace {

enum class UnaryOp { kRelu, kSigmoid, kTanh, kNeg, kExp, kLog, kSqrt, kAbs };

template <UnaryOp Op> inline float unaryValue(float x) {
  if constexpr (Op == UnaryOp::kRelu)
    return reluValue(x);
  if constexpr (Op == UnaryOp::kSigmoid)
    return sigmoidValue(x);
  if constexpr (Op == UnaryOp::kTanh)
    return std::tanh(x);
  if constexpr (Op == UnaryOp::kNeg)
    return -x;
  if constexpr (Op == UnaryOp::kExp)
    return std::exp(x);
  if constexpr (Op == UnaryOp::kLog)
    return std::log(x);
  if constexpr (Op == UnaryOp::kSqrt)
    return std::sqrt(x);
  if constexpr (Op == UnaryOp::kAbs)
    return std::fabs(x);
  return x;
}

template <UnaryOp Op> Status unaryKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(const float *in, floatInput(ctx, x, "x"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, DType::kFloat32, x.shape()));
  float *o = out->data<float>();
  parallelFor(ctx, x.numel(), kElementwiseSpan, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      o[i] = unaryValue<Op>(in[i]);
  });
  return Status::ok();
}

Status identityKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  return ctx.setOutput(0, ctx.input(0));
}

} // namespace

Status registerUnaryKernels(KernelRegistry &registry) {
  return addKernels(
      registry,
      {
          {"relu", unaryKernel<UnaryOp::kRelu>, nullptr,
           "max(x, 0) (float32; NaN stays NaN)"},
          {"sigmoid", unaryKernel<UnaryOp::kSigmoid>, nullptr,
           "1 / (1 + exp(-x)) (float32)"},
          {"tanh", unaryKernel<UnaryOp::kTanh>, nullptr, "tanh(x) (float32)"},
          {"neg", unaryKernel<UnaryOp::kNeg>, nullptr, "-x (float32)"},
          {"exp", unaryKernel<UnaryOp::kExp>, nullptr, "exp(x) (float32)"},
          {"log", unaryKernel<UnaryOp::kLog>, nullptr, "natural log (float32)"},
          {"sqrt", unaryKernel<UnaryOp::kSqrt>, nullptr,
           "square root (float32)"},
          {"abs", unaryKernel<UnaryOp::kAbs>, nullptr,
           "absolute value (float32)"},
          {"identity", identityKernel, nullptr,
           "aliases its input (any dtype, no copy)"},
      });
}

} // namespace ember::cpu
