//===- interaction_kernels.cpp - dot_interaction on CUDA ------------------===//
//
// kernels/cpu/interaction_kernels.cpp's contract; one fused kernel
// (interaction.cu, interaction_device.cuh).
//
//===----------------------------------------------------------------------===//
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/dense_registration.h"
#include "kernels/cpu/dense_common.h"

namespace ember::cuda::dense {
namespace {

Status dotInteractionKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(const KernelDef *cpuDef,
                         cpuKernelDef("dot_interaction"));
  EMBER_RETURN_IF_ERROR(
      cpu::atLocation(ctx, cpuDef->validate(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 0, "dense"));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 1, "sparse"));
  const Tensor &dense = ctx.input(0), &sparse = ctx.input(1);
  int64_t f = *ctx.attrs().getInt("num_features");
  bool self = ctx.attrs().getInt("self_interaction", 0) != 0;
  bool torchrecOrder =
      ctx.attrs().getString("pair_order", "dlrm") == "torchrec";
  EMBER_RETURN_IF_ERROR(
      cpu::requireRank(ctx, dense, "dot_interaction: dense", 2));
  EMBER_RETURN_IF_ERROR(
      cpu::requireRank(ctx, sparse, "dot_interaction: sparse", 2));
  int64_t b = dense.dim(0), d = dense.dim(1);
  if (sparse.dim(0) != b || sparse.dim(1) != f * d)
    return cpu::kernelError(
        ctx, "dot_interaction: sparse must be [" + std::to_string(b) + ", " +
                 std::to_string(f) + " * " + std::to_string(d) +
                 "] (batch, num_features * dense width), got " +
                 sparse.describe() + " with dense " + dense.describe());
  int64_t n = f + 1;
  int64_t pairs = self ? n * (n + 1) / 2 : n * (n - 1) / 2;
  EMBER_ASSIGN_OR_RETURN(
      const float *pd, deviceFloatInput(ctx, dense, "dot_interaction: dense"));
  EMBER_ASSIGN_OR_RETURN(
      const float *ps,
      deviceFloatInput(ctx, sparse, "dot_interaction: sparse"));
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out, cpu::allocateOutput(ctx, DType::kFloat32, {b, d + pairs}));
  return cpu::atLocation(ctx,
                         launchDotInteraction(*env, pd, ps, out->data<float>(),
                                              b, n, d, self, torchrecOrder));
}

} // namespace

Status registerInteractionKernels(KernelRegistry &r) {
  EMBER_ASSIGN_OR_RETURN(
      KernelDef def,
      cudaDefLike("dot_interaction", dotInteractionKernel,
                  "fused: block per sample, rows in shared memory"));
  return r.add(std::move(def));
}

} // namespace ember::cuda::dense
