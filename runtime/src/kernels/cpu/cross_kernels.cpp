//===- cross_kernels.cpp - dcn_cross (one DCN-v2 cross layer) -------------===//
//
// TorchRec CrossNet / LowRankCrossNet, one layer per instruction:
//   full rank (low_rank 0): inputs x0 [B,D], xl [B,D], weight [D,D], bias
//     out = x0 * (xl · weightᵀ + bias) + xl      (CrossNet: kernels[l] · x_l)
//   low rank (low_rank 1):  inputs x0, xl, V [r,D], W [D,r], bias
//     out = x0 * ((xl · Vᵀ) · Wᵀ + bias) + xl    (LowRankCrossNet:
//                                                 W_kernels[l] · (V_kernels[l]
//                                                 · x_l))
// bias is [D] or [D, 1] (TorchRec stores [D, 1]) and may be left out (zero).
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/cpu/gemm.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/cross_shape.h"
#include "kernels/shared/dense_common.h"

namespace ember::cpu {
namespace {

Status crossKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(CrossShape s, crossShape(ctx));
  const bool lowRank = s.lowRank;
  const Tensor &x0 = ctx.input(0), &xl = ctx.input(1);
  const Tensor *bias = s.bias;
  const int64_t b = s.batch, d = s.dim, rank = s.rank;
  EMBER_ASSIGN_OR_RETURN(const float *p0, floatInput(ctx, x0, "dcn_cross: x0"));
  EMBER_ASSIGN_OR_RETURN(const float *pl, floatInput(ctx, xl, "dcn_cross: xl"));
  const float *pb = nullptr;
  if (bias) {
    EMBER_ASSIGN_OR_RETURN(pb, floatInput(ctx, *bias, "dcn_cross: bias"));
  }
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, DType::kFloat32, x0.shape()));
  float *o = out->data<float>();
  if (b == 0 || d == 0)
    return Status::ok();

  // Linear layers with torch's [out, in] weights: o = lhs · rhsᵀ + bias.
  GemmArgs g;
  if (lowRank) {
    EMBER_ASSIGN_OR_RETURN(const float *pv,
                           floatInput(ctx, ctx.input(2), "dcn_cross: V"));
    EMBER_ASSIGN_OR_RETURN(const float *pw,
                           floatInput(ctx, ctx.input(3), "dcn_cross: W"));
    EMBER_ASSIGN_OR_RETURN(
        void *mem, ctx.scratch(static_cast<size_t>(b * rank) * sizeof(float)));
    float *t = static_cast<float *>(mem);
    // t [B, r] = xl · Vᵀ, then o = t · Wᵀ + bias
    runGemm(&ctx.threadPool(),
            linearGemm(b, rank, d, true, pl, pv, nullptr, t));
    g = linearGemm(b, d, rank, true, t, pw, pb, o);
  } else {
    EMBER_ASSIGN_OR_RETURN(const float *pw,
                           floatInput(ctx, ctx.input(2), "dcn_cross: weight"));
    g = linearGemm(b, d, d, true, pl, pw, pb, o);
  }
  runGemm(&ctx.threadPool(), g);
  parallelFor(ctx, b, grainFor(d), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      float *y = o + r * d;
      const float *a = p0 + r * d, *c = pl + r * d;
      for (int64_t i = 0; i < d; ++i)
        y[i] = a[i] * y[i] + c[i];
    }
  });
  return Status::ok();
}

} // namespace

Status registerCrossKernels(KernelRegistry &registry) {
  return addKernels(
      registry,
      {{"dcn_cross", crossKernel, validateCross,
        "DCN-v2 cross layer x0 * (xl·Wᵀ + b) + xl, full or low rank (V, W)"}});
}

} // namespace ember::cpu
