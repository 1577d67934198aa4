//===- kjt_from_bags_kernel.cu - kjt_from_bags ----------------------------===//
//
// Per feature (one launch each): one thread per offset checks it and writes
// its bag's length; with num_rows, one thread per id checks it against the
// table (an error names the feature, the position and the sample). The ids
// and weights are device-to-device copies. Without include_last_offset every
// feature's ids are all used and nothing is synchronized; with it, the ids
// the bags cover (each such feature's last offset) are read back once.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/jagged/jagged_kernels.h"
#include "cuda/jagged/jagged_launch.h"
#include "kernels/cpu/jagged_index.h"
#include "kernels/cpu/kjt_kernel_attrs.h"

#include <vector>

namespace ember::cuda::jagged {

namespace {

__global__ void fromBagsOffsetKernel(int64_t numOffsets, int64_t f, int64_t B,
                                     const void *offsets, bool offsets64,
                                     bool includeLast, int64_t numIds,
                                     void *outLengths, bool lengths64,
                                     int64_t *used, ErrorSink sink) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
       i < numOffsets; i += int64_t{gridDim.x} * blockDim.x)
    fromBagsOffset(i, f, B, offsets, offsets64, numOffsets, includeLast, numIds,
                   outLengths, lengths64, used, sink);
}

__global__ void fromBagsCheckIdKernel(int64_t numIds, int64_t f, int64_t B,
                                      const void *ids, bool ids64,
                                      const void *offsets, bool offsets64,
                                      bool includeLast, int64_t numRows,
                                      ErrorSink sink) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < numIds;
       i += int64_t{gridDim.x} * blockDim.x)
    fromBagsCheckId(i, f, B, ids, ids64, offsets, offsets64, includeLast,
                    numIds, numRows, sink);
}

} // namespace

Status runKjtFromBags(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, "kjt_from_bags"));
  auto attrsOr = ember::jagged::readFromBagsAttrs(ctx.attrs(), ctx.numInputs());
  if (!attrsOr.isOk())
    return attrsOr.status().withContext(where);
  const ember::jagged::FromBagsAttrs &a = *attrsOr;
  const int64_t F = static_cast<int64_t>(a.includeLastOffset.size());
  EMBER_ASSIGN_OR_RETURN(ember::jagged::FromBagsInputs in,
                         ember::jagged::readFromBagsInputs(ctx, a, false));
  const int64_t B = in.batchSize;
  const bool lengths64 = a.lengthsDType == DType::kInt64;
  const size_t lb = dtypeSize(a.lengthsDType);
  EMBER_ASSIGN_OR_RETURN(Tensor * lengths,
                         ctx.allocateOutput(1, a.lengthsDType, {F * B}));
  EMBER_ASSIGN_OR_RETURN(int64_t * used, scratchInts(ctx, F));

  bool anyIncludeLast = false;
  std::vector<int64_t> usedIds(F);
  for (int64_t f = 0; f < F; ++f) {
    const Tensor &ids = ctx.input(3 * f), &offsets = ctx.input(3 * f + 1);
    const bool includeLast = a.includeLastOffset[f] != 0;
    const bool offsets64 = offsets.dtype() == DType::kInt64;
    const int64_t numOffsets = offsets.numel(), numIds = ids.numel();
    anyIncludeLast |= includeLast;
    usedIds[f] = B > 0 ? numIds : 0; // without include_last_offset
    if (numOffsets > 0) {
      fromBagsOffsetKernel<<<blocksFor(numOffsets, *env), kThreads, 0,
                             env->stream>>>(
          numOffsets, f, B, offsets.data(), offsets64, includeLast, numIds,
          lengths->data<uint8_t>() + f * B * lb, lengths64, used + f,
          sinkOf(*env));
      EMBER_RETURN_IF_ERROR(launchStatus("kjt_from_bags (offsets)"));
    }
    if (!a.numRows.empty() && numIds > 0) {
      fromBagsCheckIdKernel<<<blocksFor(numIds, *env), kThreads, 0,
                              env->stream>>>(
          numIds, f, B, ids.data(), ids.dtype() == DType::kInt64,
          offsets.data(), offsets64, includeLast, a.numRows[f], sinkOf(*env));
      EMBER_RETURN_IF_ERROR(launchStatus("kjt_from_bags (ids)"));
    }
  }
  if (anyIncludeLast) {
    // The ids each include_last_offset feature's bags cover: its last offset.
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> read,
                           readBackInts(ctx, *env, used, F));
    for (int64_t f = 0; f < F; ++f)
      if (a.includeLastOffset[f] != 0)
        usedIds[f] = read[f];
  }
  int64_t total = 0;
  for (int64_t u : usedIds)
    total += u;
  EMBER_ASSIGN_OR_RETURN(Tensor * values,
                         ctx.allocateOutput(0, in.idsDType, {total}));
  Tensor *weights = nullptr;
  if (in.weighted) {
    EMBER_ASSIGN_OR_RETURN(weights,
                           ctx.allocateOutput(2, DType::kFloat32, {total}));
  } else if (ctx.numOutputs() > 2) {
    EMBER_RETURN_IF_ERROR(ctx.setOutput(2, Tensor()));
  }
  const size_t idBytes = dtypeSize(in.idsDType);
  uint8_t *v = values->data<uint8_t>();
  uint8_t *w = weights ? weights->data<uint8_t>() : nullptr;
  for (int64_t f = 0; f < F; ++f) {
    EMBER_RETURN_IF_ERROR(
        copyDevice(*env, v, ctx.input(3 * f).data(), usedIds[f] * idBytes));
    v += usedIds[f] * idBytes;
    if (w) {
      EMBER_RETURN_IF_ERROR(copyDevice(*env, w, ctx.input(3 * f + 2).data(),
                                       usedIds[f] * sizeof(float)));
      w += usedIds[f] * sizeof(float);
    }
  }
  return Status::ok();
}

} // namespace ember::cuda::jagged
