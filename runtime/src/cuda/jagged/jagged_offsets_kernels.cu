//===- jagged_offsets_kernels.cu - lengths_to_offsets, jagged<->padded ----===//
//
// lengths_to_offsets: a validating device prefix sum (no synchronization).
// jagged_to_padded: offsets checked on the device, one thread per output
//   element (no synchronization: the output shape is [B, max_length, D...]).
// padded_to_jagged: offsets checked on the device; the number of output rows
//   (offsets[B]) is read back with one stream synchronization.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/jagged/jagged_kernels.h"
#include "cuda/jagged/jagged_launch.h"
#include "kernels/attributes.h"
#include "kernels/shared/jagged_index.h"
#include "kernels/shared/jagged_padding_checks.h"
#include "kernels/shared/kjt_kernel_attrs.h"

#include <cstring>
#include <vector>

namespace ember::cuda::jagged {

using ember::jagged::checkIndexVector;
using ember::jagged::checkOffsetsInput;
using ember::jagged::errorAt;

namespace {

__global__ void checkRowOffsetsKernel(int64_t n, const void *offsets, bool is64,
                                      int64_t limit, int64_t maxLength,
                                      int64_t *clamped, ErrorSink sink) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    checkRowOffset(i, offsets, is64, limit, maxLength, clamped, sink);
}

__global__ void toPaddedKernel(int64_t n, const void *values,
                               const int64_t *clamped, int64_t L,
                               int64_t rowElems, int elemBytes,
                               uint64_t padding, void *out) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n;
       e += int64_t{gridDim.x} * blockDim.x)
    toPaddedElement(e, values, clamped, L, rowElems, elemBytes, &padding, out);
}

__global__ void toJaggedKernel(int64_t n, const void *padded,
                               const int64_t *clamped, int64_t B, int64_t L,
                               int64_t rowElems, int elemBytes, void *out) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n;
       e += int64_t{gridDim.x} * blockDim.x)
    toJaggedElement(e, padded, clamped, B, L, rowElems, elemBytes, out);
}

/// Validates offsets [B+1] on the device into clamped int64 offsets.
Result<int64_t *> checkOffsetsOnDevice(KernelContext &ctx, const KernelEnv &env,
                                       const Tensor &offsets, int64_t limit,
                                       int64_t maxLength) {
  const int64_t n = offsets.numel();
  EMBER_ASSIGN_OR_RETURN(int64_t * clamped, scratchInts(ctx, n));
  checkRowOffsetsKernel<<<blocksFor(n, env), kThreads, 0, env.stream>>>(
      n, offsets.data(), offsets.dtype() == DType::kInt64, limit, maxLength,
      clamped, sinkOf(env));
  EMBER_RETURN_IF_ERROR(launchStatus("jagged offsets check"));
  return clamped;
}

} // namespace

Status runLengthsToOffsets(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, "lengths_to_offsets"));
  const Tensor &lengths = ctx.input(0);
  EMBER_RETURN_IF_ERROR(checkIndexVector(lengths, "input 0 (lengths)", where));
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out,
      ctx.allocateOutput(0, DType::kInt64, {lengths.numel() + 1}));
  return lengthsToOffsetsOnDevice(
      ctx, *env, lengths.data(), lengths.dtype() == DType::kInt64,
      lengths.numel(), -1, out->data<int64_t>(), "lengths");
}

Status runJaggedToPadded(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, "jagged_to_padded"));
  EMBER_ASSIGN_OR_RETURN(ember::jagged::JaggedToPaddedAttrs attrs,
                         ember::jagged::checkJaggedToPaddedInputs(ctx, where));
  const int64_t L = attrs.maxLength;
  const Tensor &values = ctx.input(0);
  const Tensor &offsets = ctx.input(1);
  EMBER_RETURN_IF_ERROR(checkOffsetsInput(offsets, where));
  const int64_t B = offsets.numel() - 1;
  std::vector<int64_t> dims = {B, L};
  int64_t rowElems = 1;
  for (int i = 1; i < values.rank(); ++i) {
    dims.push_back(values.dim(i));
    rowElems *= values.dim(i);
  }
  EMBER_ASSIGN_OR_RETURN(Shape shape,
                         Shape::fromDims(dims.data(), dims.size()));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, values.dtype(), shape));
  EMBER_ASSIGN_OR_RETURN(
      int64_t * clamped,
      checkOffsetsOnDevice(ctx, *env, offsets, values.dim(0), -1));
  const int64_t n = out->numel();
  if (n == 0)
    return Status::ok();
  const std::vector<uint8_t> pad =
      ember::jagged::paddingBytes(attrs.paddingValue, values.dtype());
  uint64_t padBits = 0;
  std::memcpy(&padBits, pad.data(), std::min(pad.size(), sizeof padBits));
  toPaddedKernel<<<blocksFor(n, *env), kThreads, 0, env->stream>>>(
      n, values.data(), clamped, L, rowElems,
      static_cast<int>(dtypeSize(values.dtype())), padBits, out->data());
  return launchStatus("jagged_to_padded");
}

Status runPaddedToJagged(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, "padded_to_jagged"));
  const Tensor &padded = ctx.input(0);
  EMBER_RETURN_IF_ERROR(ember::jagged::checkPaddedInput(padded, where));
  const Tensor &offsets = ctx.input(1);
  EMBER_RETURN_IF_ERROR(checkOffsetsInput(offsets, where));
  const int64_t B = padded.dim(0), L = padded.dim(1);
  EMBER_RETURN_IF_ERROR(
      ember::jagged::checkOffsetsMatchPadded(offsets.numel(), B, where));
  EMBER_ASSIGN_OR_RETURN(int64_t * clamped,
                         checkOffsetsOnDevice(ctx, *env, offsets, -1, L));
  // The output's rows: offsets[B], read back once the offsets are checked.
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> total,
                         readBackInts(ctx, *env, clamped + B, 1));
  std::vector<int64_t> dims = {total[0]};
  int64_t rowElems = 1;
  for (int i = 2; i < padded.rank(); ++i) {
    dims.push_back(padded.dim(i));
    rowElems *= padded.dim(i);
  }
  EMBER_ASSIGN_OR_RETURN(Shape shape,
                         Shape::fromDims(dims.data(), dims.size()));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, padded.dtype(), shape));
  const int64_t n = out->numel();
  if (n == 0)
    return Status::ok();
  toJaggedKernel<<<blocksFor(n, *env), kThreads, 0, env->stream>>>(
      n, padded.data(), clamped, B, L, rowElems,
      static_cast<int>(dtypeSize(padded.dtype())), out->data());
  return launchStatus("padded_to_jagged");
}

} // namespace ember::cuda::jagged
