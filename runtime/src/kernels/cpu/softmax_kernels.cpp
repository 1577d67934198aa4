//===- softmax_kernels.cpp - softmax along one axis -----------------------===//
//
// softmax(x)[.., i, ..] = exp(x_i - max) / sum_j exp(x_j - max) along `axis`
// (default -1), ONNX opset 13 / torch semantics. Subtracting the max keeps it
// finite for any finite input. float32 out.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/softmax_shape.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ember::cpu {
namespace {

/// Softmax of one contiguous row of n elements.
void softmaxRow(const float *x, float *y, int64_t n) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i)
    mx = std::max(mx, x[i]);
  if (mx == -std::numeric_limits<float>::infinity())
    mx = 0.f; // an all -inf row gives NaN like torch; keep exp() finite here
  float sum = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - mx);
    sum += y[i];
  }
  float inv = 1.f / sum;
  for (int64_t i = 0; i < n; ++i)
    y[i] *= inv;
}

/// Softmax over the middle dim of an [len, inner] block for lanes
/// [l0, l1) of `inner` (strided rows).
void softmaxLanes(const float *x, float *y, int64_t len, int64_t inner,
                  int64_t l0, int64_t l1) {
  constexpr int kLanes = 64;
  float mx[kLanes], sum[kLanes];
  for (int64_t base = l0; base < l1; base += kLanes) {
    int64_t w = std::min<int64_t>(kLanes, l1 - base);
    for (int64_t j = 0; j < w; ++j) {
      mx[j] = -std::numeric_limits<float>::infinity();
      sum[j] = 0.f;
    }
    for (int64_t i = 0; i < len; ++i)
      for (int64_t j = 0; j < w; ++j)
        mx[j] = std::max(mx[j], x[i * inner + base + j]);
    for (int64_t j = 0; j < w; ++j)
      if (mx[j] == -std::numeric_limits<float>::infinity())
        mx[j] = 0.f;
    for (int64_t i = 0; i < len; ++i)
      for (int64_t j = 0; j < w; ++j) {
        float e = std::exp(x[i * inner + base + j] - mx[j]);
        y[i * inner + base + j] = e;
        sum[j] += e;
      }
    for (int64_t j = 0; j < w; ++j)
      sum[j] = 1.f / sum[j];
    for (int64_t i = 0; i < len; ++i)
      for (int64_t j = 0; j < w; ++j)
        y[i * inner + base + j] *= sum[j];
  }
}

Status softmaxKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(SoftmaxShape s, softmaxShape(ctx));
  const Tensor &x = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(const float *in, floatInput(ctx, x, "softmax: x"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, DType::kFloat32, x.shape()));
  float *o = out->data<float>();
  const int64_t outer = s.outer, inner = s.inner, len = s.len;
  if (x.numel() == 0)
    return Status::ok();
  if (inner == 1) {
    parallelFor(ctx, outer, grainFor(len * 8), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r)
        softmaxRow(in + r * len, o + r * len, len);
    });
  } else {
    parallelFor(ctx, outer, grainFor(len * inner * 8),
                [&](int64_t b, int64_t e) {
                  for (int64_t r = b; r < e; ++r)
                    softmaxLanes(in + r * len * inner, o + r * len * inner, len,
                                 inner, 0, inner);
                });
  }
  return Status::ok();
}

} // namespace

Status registerSoftmaxKernels(KernelRegistry &registry) {
  return addKernels(
      registry, {{"softmax", softmaxKernel, validateSoftmax,
                  "numerically stable softmax along attr axis (default -1)"}});
}

} // namespace ember::cpu
