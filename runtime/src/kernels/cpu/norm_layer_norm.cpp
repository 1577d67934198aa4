//===- norm_layer_norm.cpp - layer_norm -----------------------------------===//
//
// y = (x - mean) / sqrt(var + epsilon) * gamma + beta over the trailing dims
// starting at `axis` (default -1), with the biased variance (torch
// nn.LayerNorm, ONNX LayerNormalization). gamma and beta are optional and
// have the normalized shape (or are 1-D with as many elements). Two-pass mean
// and variance with double accumulation.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_common.h"
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"

#include <cmath>

namespace ember::cpu {
namespace {

Status validateLayerNorm(const Attributes &attrs, int, int) {
  EMBER_RETURN_IF_ERROR(validateIntAttr(attrs, "axis"));
  if (attrs.has("epsilon")) {
    EMBER_ASSIGN_OR_RETURN(double eps, attrs.getFloat("epsilon"));
    if (!(eps >= 0))
      return invalidArgument("attribute 'epsilon' must be >= 0, got " +
                             std::to_string(eps));
  }
  return Status::ok();
}

/// gamma/beta must hold the normalized shape x.shape[axis:], or be 1-D of
/// the same element count.
Status checkAffine(KernelContext &ctx, const Tensor &t, const char *name,
                   const Tensor &x, int axis, int64_t d) {
  bool ok = t.numel() == d;
  if (ok && t.rank() != 1) {
    ok = t.rank() == x.rank() - axis;
    for (int i = 0; ok && i < t.rank(); ++i)
      ok = t.dim(i) == x.dim(axis + i);
  }
  if (!ok)
    return kernelError(ctx,
                       std::string("layer_norm: ") + name + " " + t.describe() +
                           " does not match the normalized dims of x " +
                           x.describe() + " from axis " + std::to_string(axis));
  return Status::ok();
}

Status layerNormKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateLayerNorm(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  if (x.rank() < 1)
    return kernelError(ctx, "layer_norm: x must have rank >= 1, got " +
                                x.describe());
  EMBER_ASSIGN_OR_RETURN(
      int axis,
      normalizeAxis(ctx, ctx.attrs().getInt("axis", -1), x.rank(), "axis"));
  float eps = static_cast<float>(ctx.attrs().getFloat("epsilon", 1e-5));
  int64_t rows = 1, d = 1;
  for (int i = 0; i < axis; ++i)
    rows *= x.dim(i);
  for (int i = axis; i < x.rank(); ++i)
    d *= x.dim(i);

  const float *gamma = nullptr, *beta = nullptr;
  if (ctx.numInputs() > 1 && ctx.input(1).defined()) {
    EMBER_RETURN_IF_ERROR(checkAffine(ctx, ctx.input(1), "gamma", x, axis, d));
    EMBER_ASSIGN_OR_RETURN(gamma,
                           floatInput(ctx, ctx.input(1), "layer_norm: gamma"));
  }
  if (ctx.numInputs() > 2 && ctx.input(2).defined()) {
    EMBER_RETURN_IF_ERROR(checkAffine(ctx, ctx.input(2), "beta", x, axis, d));
    EMBER_ASSIGN_OR_RETURN(beta,
                           floatInput(ctx, ctx.input(2), "layer_norm: beta"));
  }
  EMBER_ASSIGN_OR_RETURN(const float *in, floatInput(ctx, x, "layer_norm: x"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, DType::kFloat32, x.shape()));
  float *o = out->data<float>();
  if (d == 0)
    return Status::ok();
  parallelFor(ctx, rows, grainFor(d * 4), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float *xr = in + r * d;
      float *yr = o + r * d;
      double sum = 0;
      for (int64_t i = 0; i < d; ++i)
        sum += xr[i];
      float mean = static_cast<float>(sum / double(d));
      double sq = 0;
      for (int64_t i = 0; i < d; ++i) {
        double c = double(xr[i]) - double(mean);
        sq += c * c;
      }
      float rstd =
          static_cast<float>(1.0 / std::sqrt(sq / double(d) + double(eps)));
      for (int64_t i = 0; i < d; ++i) {
        float v = (xr[i] - mean) * rstd;
        if (gamma)
          v *= gamma[i];
        if (beta)
          v += beta[i];
        yr[i] = v;
      }
    }
  });
  return Status::ok();
}

} // namespace

Status registerNormKernels(KernelRegistry &registry) {
  KernelDef def;
  def.name = "layer_norm";
  def.run = layerNormKernel;
  def.validate = validateLayerNorm;
  def.minInputs = 1;
  def.maxInputs = 3;
  def.summary =
      "layer normalization over dims [axis:] with optional gamma, beta";
  return registry.add(std::move(def));
}

} // namespace ember::cpu
