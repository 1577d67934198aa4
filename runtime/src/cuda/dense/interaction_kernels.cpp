//===- interaction_kernels.cpp - dot_interaction on CUDA ------------------===//
//
// kernels/cpu/interaction_kernels.cpp's contract; one fused kernel
// (interaction.cu, interaction_device.cuh).
//
//===----------------------------------------------------------------------===//
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/dense_registration.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/interaction_shape.h"

namespace ember::cuda::dense {
namespace {

Status dotInteractionKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::InteractionShape s, cpu::interactionShape(ctx));
  const Tensor &dense = ctx.input(0), &sparse = ctx.input(1);
  const bool self = s.self, torchrecOrder = s.torchrecOrder;
  const int64_t b = s.batch, d = s.dim, n = s.rows, pairs = s.pairs;
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
  return addCudaKernels(r,
                        {{"dot_interaction", dotInteractionKernel,
                          "fused: block per sample, rows in shared memory"}});
}

} // namespace ember::cuda::dense
