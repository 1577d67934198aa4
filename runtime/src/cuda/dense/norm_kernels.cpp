//===- norm_kernels.cpp - softmax and layer_norm on CUDA ------------------===//
//
// The contracts of kernels/cpu/softmax_kernels.cpp and norm_layer_norm.cpp;
// the device code is norm.cu / norm_device.cuh.
//
//===----------------------------------------------------------------------===//
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/dense_registration.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/layer_norm_shape.h"
#include "kernels/shared/softmax_shape.h"

namespace ember::cuda::dense {
namespace {

Status softmaxKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::SoftmaxShape s, cpu::softmaxShape(ctx));
  const Tensor &x = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(const float *in,
                         deviceFloatInput(ctx, x, "softmax: x"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, DType::kFloat32, x.shape()));
  const int64_t outer = s.outer, inner = s.inner, len = s.len;
  if (x.numel() == 0)
    return Status::ok();
  if (inner == 1)
    return cpu::atLocation(
        ctx, launchSoftmaxRows(*env, in, out->data<float>(), outer, len));
  return cpu::atLocation(ctx, launchSoftmaxColumns(*env, in, out->data<float>(),
                                                   outer, len, inner));
}

Status layerNormKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::LayerNormShape s, cpu::layerNormShape(ctx));
  const Tensor &x = ctx.input(0);
  const int axis = s.axis;
  const float eps = s.epsilon;
  const int64_t rows = s.rows, d = s.d;
  const float *gamma = nullptr, *beta = nullptr;
  if (ctx.numInputs() > 1 && ctx.input(1).defined()) {
    EMBER_RETURN_IF_ERROR(
        cpu::checkAffine(ctx, ctx.input(1), "gamma", x, axis, d));
    EMBER_ASSIGN_OR_RETURN(
        gamma, deviceFloatInput(ctx, ctx.input(1), "layer_norm: gamma"));
  }
  if (ctx.numInputs() > 2 && ctx.input(2).defined()) {
    EMBER_RETURN_IF_ERROR(
        cpu::checkAffine(ctx, ctx.input(2), "beta", x, axis, d));
    EMBER_ASSIGN_OR_RETURN(
        beta, deviceFloatInput(ctx, ctx.input(2), "layer_norm: beta"));
  }
  EMBER_ASSIGN_OR_RETURN(const float *in,
                         deviceFloatInput(ctx, x, "layer_norm: x"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, DType::kFloat32, x.shape()));
  return cpu::atLocation(ctx, launchLayerNorm(*env, in, out->data<float>(),
                                              rows, d, eps, gamma, beta));
}

} // namespace

Status registerNormKernels(KernelRegistry &r) {
  return addCudaKernels(
      r, {{"softmax", softmaxKernel,
           "warp per row (last axis), thread per column otherwise"},
          {"layer_norm", layerNormKernel, "warp per row, double sums"}});
}

} // namespace ember::cuda::dense
