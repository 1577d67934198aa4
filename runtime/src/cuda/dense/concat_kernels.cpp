//===- concat_kernels.cpp - concat on CUDA --------------------------------===//
//
// kernels/cpu/shape_concat.cpp's contract (any dtype, attr axis). The copy
// moves the widest unit (up to 16 bytes) that divides every input's row
// bytes and address, kConcatChunk inputs per launch (concat_device.cuh).
//
//===----------------------------------------------------------------------===//
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/dense_registration.h"
#include "kernels/shared/concat_shape.h"
#include "kernels/shared/dense_common.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace ember::cuda::dense {
namespace {

Status concatKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::ConcatShape s, cpu::concatShape(ctx));
  const int count = ctx.numInputs();
  const Tensor &first = ctx.input(0);
  const int axis = s.axis;
  const Shape &outShape = s.outShape;
  const int64_t outer = s.outer, inner = s.inner;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, first.dtype(), outShape));
  if (out->numel() == 0)
    return Status::ok();
  int64_t es = static_cast<int64_t>(dtypeSize(first.dtype()));
  std::vector<const void *> src(count);
  std::vector<int64_t> rowBytes(count);
  std::unique_ptr<bool[]> empty(new bool[count]);
  for (int i = 0; i < count; ++i) {
    const Tensor &t = ctx.input(i);
    src[i] = t.data();
    rowBytes[i] = t.dim(axis) * inner * es;
    empty[i] = t.numel() == 0;
  }
  int unit = concatUnitBytes(out->data(), src.data(), rowBytes.data(),
                             empty.get(), count);
  int64_t rowUnits = outShape[axis] * inner * es / unit;
  int64_t colBase = 0;
  for (int begin = 0; begin < count; begin += kConcatChunk) {
    int end = std::min(count, begin + kConcatChunk);
    ConcatChunk chunk = makeConcatChunk(src.data(), rowBytes.data(), begin, end,
                                        unit, colBase, rowUnits);
    EMBER_RETURN_IF_ERROR(cpu::atLocation(
        ctx, launchConcat(*env, chunk, out->data(), unit, outer)));
    colBase += chunk.colStart[chunk.count];
  }
  return Status::ok();
}

} // namespace

Status registerConcatKernels(KernelRegistry &r) {
  return addCudaKernels(r,
                        {{"concat", concatKernel, "one launch per 64 inputs"}});
}

} // namespace ember::cuda::dense
