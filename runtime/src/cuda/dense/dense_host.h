//===- dense_host.h - Host helpers of the CUDA dense kernels ----*- C++ -*-===//
#ifndef EMBER_CUDA_DENSE_DENSE_HOST_H
#define EMBER_CUDA_DENSE_DENSE_HOST_H

#include "cuda/cuda_kernels.h"
#include "cuda/dense/elementwise_device.cuh"
#include "cuda/kernel_env.h"
#include "ember/status.h"
#include "ember/tensor.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/broadcast.h"
#include "kernels/shared/strided_view.h"

namespace ember::cuda::dense {

/// ctx.gpu(), or an internal error when a CUDA kernel runs without one.
Result<KernelEnv *> envOf(KernelContext &ctx);

/// The float32 elements of a float32/float16/bfloat16 device tensor: a
/// float32 tensor as is, the others converted on the device into scratch.
/// Another dtype is the CPU kernel's error ("<name> must be float32, ...").
Result<const float *> deviceFloatInput(KernelContext &ctx, const Tensor &t,
                                       const char *name);

/// The device form of a CPU broadcast layout.
BroadcastIndex toBroadcastIndex(const cpu::BroadcastLayout &layout);

/// The copy of a strided view (slice, transpose) as a one-operand broadcast
/// index: output element i reads operand offset offsets(i)[0] (from the
/// view's base).
BroadcastIndex stridedIndex(const cpu::StridedView &view);

} // namespace ember::cuda::dense

#endif // EMBER_CUDA_DENSE_DENSE_HOST_H
