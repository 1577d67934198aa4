//===- gemm_kernels.cpp - linear, matmul on CUDA --------------------------===//
//
// The contracts of kernels/cpu/gemm_kernels.cpp (same shape checks and
// messages); the products run through cuBLASLt (gemm_lt.h). matmul's batch
// dims broadcast: when b has no batch of its own and a is not broadcast, the
// batches fold into M (one GEMM); otherwise one strided-batched call per row
// of the broadcast layout's outer dims (stride 0 for a shared operand).
//
//===----------------------------------------------------------------------===//
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_registration.h"
#include "cuda/dense/gemm_lt.h"
#include "kernels/shared/broadcast.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/gemm_shapes.h"

namespace ember::cuda::dense {
namespace {

Status linearKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::LinearShape s, cpu::linearShape(ctx));
  EMBER_ASSIGN_OR_RETURN(const float *px,
                         deviceFloatInput(ctx, *s.x, "linear: x"));
  EMBER_ASSIGN_OR_RETURN(const float *pw,
                         deviceFloatInput(ctx, *s.weight, "linear: weight"));
  const float *pb = nullptr;
  if (s.bias) {
    EMBER_ASSIGN_OR_RETURN(pb, deviceFloatInput(ctx, *s.bias, "linear: bias"));
  }
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, DType::kFloat32, s.outShape));
  LtGemm g = linearGemm(s.m, s.n, s.k, s.transposeWeight, px, pw, pb,
                        out->data<float>(), static_cast<int>(s.activation));
  return cpu::atLocation(ctx, runLtGemm(*env, g, "linear"));
}

Status matmulKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::MatmulShape s, cpu::matmulShape(ctx));
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  EMBER_ASSIGN_OR_RETURN(const float *pa,
                         deviceFloatInput(ctx, a, "matmul: a"));
  EMBER_ASSIGN_OR_RETURN(const float *pb,
                         deviceFloatInput(ctx, b, "matmul: b"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, DType::kFloat32, s.outShape));
  cpu::BroadcastLayout layout =
      cpu::makeBroadcastLayout(s.batch, s.batchShapes, 2);
  for (const LtGemm &g : planBroadcastGemm(layout, s.batch.numel(), pa, pb,
                                           out->data<float>(), s.m, s.n, s.k))
    EMBER_RETURN_IF_ERROR(cpu::atLocation(ctx, runLtGemm(*env, g, "matmul")));
  return Status::ok();
}

} // namespace

Status registerGemmKernels(KernelRegistry &r) {
  return addCudaKernels(
      r, {{"linear", linearKernel, "cuBLASLt fp32, bias/relu epilogue"},
          {"matmul", matmulKernel, "cuBLASLt fp32 strided-batched"}});
}

} // namespace ember::cuda::dense
