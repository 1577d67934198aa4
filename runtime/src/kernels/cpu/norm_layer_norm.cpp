//===- norm_layer_norm.cpp - layer_norm -----------------------------------===//
//
// y = (x - mean) / sqrt(var + epsilon) * gamma + beta over the trailing dims
// starting at `axis` (default -1), with the biased variance (torch
// nn.LayerNorm, ONNX LayerNormalization). gamma and beta are optional and
// have the normalized shape (or are 1-D with as many elements). Two-pass mean
// and variance with double accumulation.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/layer_norm_shape.h"

#include <cmath>

namespace ember::cpu {
namespace {

Status layerNormKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(LayerNormShape s, layerNormShape(ctx));
  const Tensor &x = ctx.input(0);
  const int axis = s.axis;
  const float eps = s.epsilon;
  const int64_t rows = s.rows, d = s.d;

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
  return addKernels(
      registry,
      {{"layer_norm", layerNormKernel, validateLayerNorm,
        "layer normalization over dims [axis:] with optional gamma, beta"}});
}

} // namespace ember::cpu
