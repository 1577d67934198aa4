//===- cross_kernels.cpp - dcn_cross on CUDA ------------------------------===//
//
// kernels/cpu/cross_kernels.cpp's contract: out = x0 * (xl·Wᵀ + bias) + xl
// (full rank) or x0 * ((xl·Vᵀ)·Wᵀ + bias) + xl (low rank). The GEMMs run
// through cuBLASLt with the bias in the epilogue; one elementwise kernel
// does the combine in place.
//
//===----------------------------------------------------------------------===//
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/dense_registration.h"
#include "cuda/dense/gemm_lt.h"
#include "kernels/shared/cross_shape.h"
#include "kernels/shared/dense_common.h"

namespace ember::cuda::dense {
namespace {

Status crossKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::CrossShape s, cpu::crossShape(ctx));
  const bool lowRank = s.lowRank;
  const Tensor &x0 = ctx.input(0), &xl = ctx.input(1);
  const Tensor *bias = s.bias;
  const int64_t b = s.batch, d = s.dim, rank = s.rank;
  EMBER_ASSIGN_OR_RETURN(const float *p0,
                         deviceFloatInput(ctx, x0, "dcn_cross: x0"));
  EMBER_ASSIGN_OR_RETURN(const float *pl,
                         deviceFloatInput(ctx, xl, "dcn_cross: xl"));
  const float *pb = nullptr;
  if (bias) {
    EMBER_ASSIGN_OR_RETURN(pb, deviceFloatInput(ctx, *bias, "dcn_cross: bias"));
  }
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, DType::kFloat32, x0.shape()));
  float *o = out->data<float>();
  if (b == 0 || d == 0)
    return Status::ok();

  // Linear layers with torch's [out, in] weights: o = lhs · rhsᵀ + bias.
  LtGemm g;
  if (lowRank) {
    EMBER_ASSIGN_OR_RETURN(const float *pv,
                           deviceFloatInput(ctx, ctx.input(2), "dcn_cross: V"));
    EMBER_ASSIGN_OR_RETURN(const float *pw,
                           deviceFloatInput(ctx, ctx.input(3), "dcn_cross: W"));
    size_t tBytes =
        static_cast<size_t>(b * (rank > 0 ? rank : 1)) * sizeof(float);
    EMBER_ASSIGN_OR_RETURN(void *mem, ctx.scratch(tBytes));
    float *t = static_cast<float *>(mem);
    // t [B, r] = xl · Vᵀ, then o = t · Wᵀ + bias
    EMBER_RETURN_IF_ERROR(cpu::atLocation(
        ctx,
        runLtGemm(*env, linearGemm(b, rank, d, true, pl, pv, nullptr, t, 0),
                  "dcn_cross")));
    g = linearGemm(b, d, rank, true, t, pw, pb, o, 0);
  } else {
    EMBER_ASSIGN_OR_RETURN(
        const float *pw,
        deviceFloatInput(ctx, ctx.input(2), "dcn_cross: weight"));
    g = linearGemm(b, d, d, true, pl, pw, pb, o, 0);
  }
  EMBER_RETURN_IF_ERROR(cpu::atLocation(ctx, runLtGemm(*env, g, "dcn_cross")));
  return cpu::atLocation(ctx, launchCrossCombine(*env, p0, pl, o, b * d));
}

} // namespace

Status registerCrossKernels(KernelRegistry &r) {
  return addCudaKernels(r,
                        {{"dcn_cross", crossKernel,
                          "cuBLASLt fp32 with bias epilogue + fused combine"}});
}

} // namespace ember::cuda::dense
