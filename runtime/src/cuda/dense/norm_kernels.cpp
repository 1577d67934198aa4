//===- norm_kernels.cpp - softmax and layer_norm on CUDA ------------------===//
//
// The contracts of kernels/cpu/softmax_kernels.cpp and norm_layer_norm.cpp;
// the device code is norm.cu / norm_device.cuh.
//
//===----------------------------------------------------------------------===//
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/dense_registration.h"
#include "kernels/cpu/dense_common.h"

namespace ember::cuda::dense {
namespace {

Status softmaxKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(const KernelDef *cpuDef, cpuKernelDef("softmax"));
  EMBER_RETURN_IF_ERROR(
      cpu::atLocation(ctx, cpuDef->validate(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  if (x.rank() < 1)
    return cpu::kernelError(ctx, "softmax: x must have rank >= 1, got " +
                                     x.describe());
  EMBER_ASSIGN_OR_RETURN(int axis,
                         cpu::normalizeAxis(ctx, ctx.attrs().getInt("axis", -1),
                                            x.rank(), "axis"));
  EMBER_ASSIGN_OR_RETURN(const float *in,
                         deviceFloatInput(ctx, x, "softmax: x"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, DType::kFloat32, x.shape()));
  int64_t outer = 1, inner = 1, len = x.dim(axis);
  for (int i = 0; i < axis; ++i)
    outer *= x.dim(i);
  for (int i = axis + 1; i < x.rank(); ++i)
    inner *= x.dim(i);
  if (x.numel() == 0)
    return Status::ok();
  if (inner == 1)
    return cpu::atLocation(
        ctx, launchSoftmaxRows(*env, in, out->data<float>(), outer, len));
  return cpu::atLocation(ctx, launchSoftmaxColumns(*env, in, out->data<float>(),
                                                   outer, len, inner));
}

/// gamma/beta: the normalized shape x.shape[axis:], or 1-D of as many
/// elements (the CPU kernel's rule and message).
Status checkAffine(KernelContext &ctx, const Tensor &t, const char *name,
                   const Tensor &x, int axis, int64_t d) {
  bool ok = t.numel() == d;
  if (ok && t.rank() != 1) {
    ok = t.rank() == x.rank() - axis;
    for (int i = 0; ok && i < t.rank(); ++i)
      ok = t.dim(i) == x.dim(axis + i);
  }
  if (!ok)
    return cpu::kernelError(
        ctx, std::string("layer_norm: ") + name + " " + t.describe() +
                 " does not match the normalized dims of x " + x.describe() +
                 " from axis " + std::to_string(axis));
  return Status::ok();
}

Status layerNormKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(const KernelDef *cpuDef, cpuKernelDef("layer_norm"));
  EMBER_RETURN_IF_ERROR(
      cpu::atLocation(ctx, cpuDef->validate(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  if (x.rank() < 1)
    return cpu::kernelError(ctx, "layer_norm: x must have rank >= 1, got " +
                                     x.describe());
  EMBER_ASSIGN_OR_RETURN(int axis,
                         cpu::normalizeAxis(ctx, ctx.attrs().getInt("axis", -1),
                                            x.rank(), "axis"));
  float eps = static_cast<float>(ctx.attrs().getFloat("epsilon", 1e-5));
  int64_t rows = 1, d = 1;
  for (int i = 0; i < axis; ++i)
    rows *= x.dim(i);
  for (int i = axis; i < x.rank(); ++i)
    d *= x.dim(i);
  const float *gamma = nullptr, *beta = nullptr;
  if (ctx.numInputs() > 1 && ctx.input(1).defined()) {
    EMBER_RETURN_IF_ERROR(checkAffine(ctx, ctx.input(1), "gamma", x, axis, d));
    EMBER_ASSIGN_OR_RETURN(
        gamma, deviceFloatInput(ctx, ctx.input(1), "layer_norm: gamma"));
  }
  if (ctx.numInputs() > 2 && ctx.input(2).defined()) {
    EMBER_RETURN_IF_ERROR(checkAffine(ctx, ctx.input(2), "beta", x, axis, d));
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
  EMBER_ASSIGN_OR_RETURN(
      KernelDef softmax,
      cudaDefLike("softmax", softmaxKernel,
                  "warp per row (last axis), thread per column otherwise"));
  EMBER_RETURN_IF_ERROR(r.add(std::move(softmax)));
  EMBER_ASSIGN_OR_RETURN(
      KernelDef norm,
      cudaDefLike("layer_norm", layerNormKernel, "warp per row, double sums"));
  return r.add(std::move(norm));
}

} // namespace ember::cuda::dense
