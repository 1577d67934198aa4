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
#include "kernels/cpu/dense_common.h"
#include "kernels/cpu/dense_registration.h"
#include "kernels/cpu/gemm.h"
#include "kernels/kernel_registry.h"

namespace ember::cpu {
namespace {

Status validateCross(const Attributes &attrs, int numInputs, int) {
  EMBER_RETURN_IF_ERROR(validateBoolAttr(attrs, "low_rank"));
  bool lowRank = attrs.getInt("low_rank", 0) != 0;
  int minInputs = lowRank ? 4 : 3, maxInputs = lowRank ? 5 : 4;
  if (numInputs != 0 && (numInputs < minInputs || numInputs > maxInputs))
    return invalidArgument(
        std::string("dcn_cross") +
        (lowRank ? " (low_rank) takes x0, xl, V, W and an optional bias"
                 : " takes x0, xl, weight and an optional bias") +
        ", got " + std::to_string(numInputs) + " inputs");
  return Status::ok();
}

Status crossKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(
      atLocation(ctx, validateCross(ctx.attrs(), ctx.numInputs(), 1)));
  bool lowRank = ctx.attrs().getInt("low_rank", 0) != 0;
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x0"));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "xl"));
  const Tensor &x0 = ctx.input(0), &xl = ctx.input(1);
  EMBER_RETURN_IF_ERROR(requireRank(ctx, x0, "dcn_cross: x0", 2));
  if (xl.shape() != x0.shape())
    return kernelError(ctx, "dcn_cross: xl " + xl.describe() +
                                " must have the shape of x0 " + x0.describe());
  int64_t b = x0.dim(0), d = x0.dim(1);
  int biasIndex = lowRank ? 4 : 3;
  const Tensor *bias =
      ctx.numInputs() > biasIndex && ctx.input(biasIndex).defined()
          ? &ctx.input(biasIndex)
          : nullptr;
  if (bias &&
      !(bias->numel() == d &&
        (bias->rank() == 1 || (bias->rank() == 2 && bias->dim(1) == 1))))
    return kernelError(ctx, "dcn_cross: bias must be [" + std::to_string(d) +
                                "] or [" + std::to_string(d) + ", 1], got " +
                                bias->describe());
  int64_t rank = 0;
  if (lowRank) {
    EMBER_RETURN_IF_ERROR(requireInput(ctx, 2, "V"));
    EMBER_RETURN_IF_ERROR(requireInput(ctx, 3, "W"));
    const Tensor &v = ctx.input(2), &w = ctx.input(3);
    rank = v.rank() == 2 ? v.dim(0) : -1;
    if (v.rank() != 2 || v.dim(1) != d)
      return kernelError(ctx, "dcn_cross: V must be [r, " + std::to_string(d) +
                                  "], got " + v.describe());
    if (w.rank() != 2 || w.dim(0) != d || w.dim(1) != rank)
      return kernelError(ctx, "dcn_cross: W must be [" + std::to_string(d) +
                                  ", " + std::to_string(rank) +
                                  "] (D, r of V), got " + w.describe());
  } else {
    EMBER_RETURN_IF_ERROR(requireInput(ctx, 2, "weight"));
    const Tensor &w = ctx.input(2);
    if (w.rank() != 2 || w.dim(0) != d || w.dim(1) != d)
      return kernelError(ctx, "dcn_cross: weight must be [" +
                                  std::to_string(d) + ", " + std::to_string(d) +
                                  "], got " + w.describe());
  }
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

  GemmArgs g; // o = lhs · rhsᵀ with rhs [D, K]
  g.m = b;
  g.n = d;
  g.transB = true;
  g.c = o;
  g.ldc = d;
  g.bias = pb;
  if (lowRank) {
    EMBER_ASSIGN_OR_RETURN(const float *pv,
                           floatInput(ctx, ctx.input(2), "dcn_cross: V"));
    EMBER_ASSIGN_OR_RETURN(const float *pw,
                           floatInput(ctx, ctx.input(3), "dcn_cross: W"));
    EMBER_ASSIGN_OR_RETURN(
        void *mem, ctx.scratch(static_cast<size_t>(b * rank) * sizeof(float)));
    float *t = static_cast<float *>(mem);
    GemmArgs first; // t [B, r] = xl · Vᵀ
    first.m = b;
    first.n = rank;
    first.k = d;
    first.a = pl;
    first.lda = d;
    first.b = pv;
    first.ldb = d;
    first.transB = true;
    first.c = t;
    first.ldc = rank;
    runGemm(&ctx.threadPool(), first);
    g.k = rank;
    g.a = t;
    g.lda = rank;
    g.b = pw;
    g.ldb = rank;
  } else {
    EMBER_ASSIGN_OR_RETURN(const float *pw,
                           floatInput(ctx, ctx.input(2), "dcn_cross: weight"));
    g.k = d;
    g.a = pl;
    g.lda = d;
    g.b = pw;
    g.ldb = d;
  }
  runGemm(&ctx.threadPool(), g); // o = xl·Wᵀ + bias
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
  KernelDef def;
  def.name = "dcn_cross";
  def.run = crossKernel;
  def.validate = validateCross;
  def.minInputs = 3;
  def.maxInputs = 5;
  def.summary =
      "DCN-v2 cross layer x0 * (xl·Wᵀ + b) + xl, full or low rank (V, W)";
  return registry.add(std::move(def));
}

} // namespace ember::cpu
