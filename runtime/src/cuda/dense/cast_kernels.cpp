//===- cast_kernels.cpp - cast on CUDA ------------------------------------===//
//
// kernels/cpu/cast.h's conversion rules, one device kernel for every dtype
// pair (cast.cu). The same dtype aliases the input, as on the CPU.
//
//===----------------------------------------------------------------------===//
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/dense_registration.h"
#include "kernels/shared/dense_common.h"

namespace ember::cuda::dense {
namespace {

Status castKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(const KernelDef *cpuDef, cpuKernelDef("cast"));
  EMBER_RETURN_IF_ERROR(
      cpu::atLocation(ctx, cpuDef->validate(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  DType to = *parseDType(*ctx.attrs().getString("to"));
  if (to == x.dtype())
    return ctx.setOutput(0, x);
  EMBER_ASSIGN_OR_RETURN(Tensor * out, cpu::allocateOutput(ctx, to, x.shape()));
  return cpu::atLocation(
      ctx, launchCast(*env, x.data(), static_cast<int>(x.dtype()), out->data(),
                      static_cast<int>(to), x.numel()));
}

} // namespace

Status registerCastKernels(KernelRegistry &r) {
  return addCudaKernels(
      r, {{"cast", castKernel, "one kernel, dtypes switched at run time"}});
}

} // namespace ember::cuda::dense
