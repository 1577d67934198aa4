//===- dense_host.cpp - Host helpers of the CUDA dense kernels ------------===//
#include "cuda/dense/dense_host.h"

#include "cuda/dense/dense_launch.h"
#include "kernels/shared/dense_common.h"

namespace ember::cuda::dense {

Result<KernelEnv *> envOf(KernelContext &ctx) {
  KernelEnv *env = ctx.gpu();
  if (!env)
    return internalError(ctx.location() +
                         ": a CUDA kernel ran without a CUDA device context");
  return env;
}

Result<const float *> deviceFloatInput(KernelContext &ctx, const Tensor &t,
                                       const char *name) {
  if (t.dtype() == DType::kFloat32)
    return t.data<float>();
  if (t.dtype() != DType::kFloat16 && t.dtype() != DType::kBFloat16)
    return cpu::kernelError(ctx, std::string(name) +
                                     " must be float32, float16 or bfloat16, "
                                     "got " +
                                     t.describe());
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  int64_t n = t.numel();
  EMBER_ASSIGN_OR_RETURN(void *mem,
                         ctx.scratch(static_cast<size_t>(n > 0 ? n : 1) * 4));
  EMBER_RETURN_IF_ERROR(cpu::atLocation(
      ctx,
      launchCast(*env, t.data(), static_cast<int>(t.dtype()), mem, kF32, n)));
  return static_cast<const float *>(mem);
}

BroadcastIndex toBroadcastIndex(const cpu::BroadcastLayout &layout) {
  BroadcastIndex ix;
  ix.rank = layout.rank;
  ix.count = layout.count;
  for (int i = 0; i < layout.rank; ++i) {
    ix.dims[i] = layout.dims[i];
    for (int k = 0; k < layout.count; ++k)
      ix.strides[k][i] = layout.strides[k][i];
  }
  return ix;
}

BroadcastIndex stridedIndex(const cpu::StridedView &view) {
  BroadcastIndex ix;
  ix.count = 1;
  int rank = view.shape.rank();
  if (rank == 0) {
    ix.rank = 1;
    ix.dims[0] = 1;
    ix.strides[0][0] = 0;
    return ix;
  }
  ix.rank = rank;
  for (int i = 0; i < rank; ++i) {
    ix.dims[i] = view.shape[i];
    ix.strides[0][i] = view.strides[i];
  }
  return ix;
}

} // namespace ember::cuda::dense
