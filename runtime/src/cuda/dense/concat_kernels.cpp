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
#include "kernels/cpu/dense_common.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace ember::cuda::dense {
namespace {

Status concatKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(const KernelDef *cpuDef, cpuKernelDef("concat"));
  EMBER_RETURN_IF_ERROR(
      cpu::atLocation(ctx, cpuDef->validate(ctx.attrs(), 0, 0)));
  int count = ctx.numInputs();
  for (int i = 0; i < count; ++i)
    EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, i, "concat operand"));
  const Tensor &first = ctx.input(0);
  if (first.rank() < 1)
    return cpu::kernelError(ctx, "concat: inputs must have rank >= 1, got " +
                                     first.describe());
  EMBER_ASSIGN_OR_RETURN(int axis,
                         cpu::normalizeAxis(ctx, *ctx.attrs().getInt("axis"),
                                            first.rank(), "axis"));
  Shape outShape = first.shape();
  outShape[axis] = 0;
  for (int i = 0; i < count; ++i) {
    const Tensor &t = ctx.input(i);
    bool ok = t.dtype() == first.dtype() && t.rank() == first.rank();
    for (int k = 0; ok && k < t.rank(); ++k)
      ok = k == axis || t.dim(k) == first.dim(k);
    if (!ok)
      return cpu::kernelError(
          ctx, "concat: input " + std::to_string(i) + " " + t.describe() +
                   " does not match input 0 " + first.describe() +
                   " outside axis " + std::to_string(axis));
    outShape[axis] += t.dim(axis);
  }
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, first.dtype(), outShape));
  if (out->numel() == 0)
    return Status::ok();
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < axis; ++k)
    outer *= outShape[k];
  for (int k = axis + 1; k < outShape.rank(); ++k)
    inner *= outShape[k];
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
  EMBER_ASSIGN_OR_RETURN(
      KernelDef def,
      cudaDefLike("concat", concatKernel, "one launch per 64 inputs"));
  return r.add(std::move(def));
}

} // namespace ember::cuda::dense
