//===- kjt_from_bags_kernel.cu - kjt_from_bags ----------------------------===//
//
// All features in each launch (the features' pointers and sizes are one
// device table, uploaded as launch parameters): one thread per offset of
// every feature checks it and writes its bag's length; with num_rows, one
// thread per id checks it against its table (an error names the feature, the
// position and the sample); one thread per id copies it (and its weight) to
// the output. Without include_last_offset every feature's ids are all used
// and nothing is synchronized; with it, the ids the bags cover (each such
// feature's last offset) are read back once.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/jagged/jagged_kernels.h"
#include "cuda/jagged/jagged_launch.h"
#include "kernels/shared/jagged_index.h"
#include "kernels/shared/kjt_kernel_attrs.h"

#include <vector>

namespace ember::cuda::jagged {

namespace {

__global__ void fromBagsOffsetKernel(int64_t n, const int64_t *table, int64_t F,
                                     int64_t B, void *outLengths,
                                     bool lengths64, int64_t *used,
                                     ErrorSink sink) {
  const BagFeatures t = bagFeaturesAt(table, F);
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < n;
       g += int64_t{gridDim.x} * blockDim.x)
    fromBagsOffset(g, t, B, outLengths, lengths64, used, sink);
}

__global__ void fromBagsCheckIdKernel(int64_t n, const int64_t *table,
                                      int64_t F, int64_t B, ErrorSink sink) {
  const BagFeatures t = bagFeaturesAt(table, F);
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < n;
       g += int64_t{gridDim.x} * blockDim.x)
    fromBagsCheckId(g, t, B, sink);
}

__global__ void fromBagsCopyKernel(int64_t n, const int64_t *table, int64_t F,
                                   const int64_t *outBegin, void *outIds,
                                   int idBytes, void *outWeights) {
  const BagFeatures t = bagFeaturesAt(table, F);
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < n;
       g += int64_t{gridDim.x} * blockDim.x)
    fromBagsCopy(g, t, outBegin, outIds, idBytes, outWeights);
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

  std::vector<BagFeatureInfo> features(F);
  std::vector<int64_t> used(F); // the ids each feature's bags cover
  bool anyIncludeLast = false;
  int64_t totalOffsets = 0, totalIds = 0;
  for (int64_t f = 0; f < F; ++f) {
    const Tensor &ids = ctx.input(3 * f), &offsets = ctx.input(3 * f + 1);
    BagFeatureInfo &b = features[f];
    b.ids = ids.data();
    b.offsets = offsets.data();
    b.weights = in.weighted ? ctx.input(3 * f + 2).data() : nullptr;
    b.ids64 = ids.dtype() == DType::kInt64;
    b.offsets64 = offsets.dtype() == DType::kInt64;
    b.includeLast = a.includeLastOffset[f] != 0;
    b.numIds = ids.numel();
    b.numOffsets = offsets.numel();
    b.numRows = a.numRows.empty() ? -1 : a.numRows[f];
    anyIncludeLast |= b.includeLast;
    used[f] = B > 0 ? b.numIds : 0; // without include_last_offset
    totalOffsets += b.numOffsets;
    totalIds += b.numIds;
  }
  EMBER_ASSIGN_OR_RETURN(int64_t * table,
                         uploadInts(ctx, *env, fromBagsTable(features)));
  EMBER_ASSIGN_OR_RETURN(Tensor * lengths,
                         ctx.allocateOutput(1, a.lengthsDType, {F * B}));
  EMBER_ASSIGN_OR_RETURN(int64_t * usedDevice, scratchInts(ctx, F));
  // The offsets kernel writes the entries of include_last_offset features
  // only; all F are read back (compute-sanitizer's initcheck flagged the
  // copy of the others, unwritten).
  if (F > 0)
    EMBER_RETURN_IF_ERROR(cudaStatus(
        cudaMemsetAsync(usedDevice, 0, F * sizeof(int64_t), env->stream),
        "kjt_from_bags: clearing the per-feature id counts"));
  if (totalOffsets > 0) {
    fromBagsOffsetKernel<<<blocksFor(totalOffsets, *env), kThreads, 0,
                           env->stream>>>(
        totalOffsets, table, F, B, lengths->data(),
        a.lengthsDType == DType::kInt64, usedDevice, sinkOf(*env));
    EMBER_RETURN_IF_ERROR(launchStatus("kjt_from_bags (offsets)"));
  }
  if (!a.numRows.empty() && totalIds > 0) {
    fromBagsCheckIdKernel<<<blocksFor(totalIds, *env), kThreads, 0,
                            env->stream>>>(totalIds, table, F, B, sinkOf(*env));
    EMBER_RETURN_IF_ERROR(launchStatus("kjt_from_bags (ids)"));
  }
  if (anyIncludeLast) {
    // The ids each include_last_offset feature's bags cover: its last
    // offset (checked above; a device error is returned here).
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> read,
                           readBackInts(ctx, *env, usedDevice, F));
    for (int64_t f = 0; f < F; ++f)
      if (features[f].includeLast)
        used[f] = read[f];
  }
  std::vector<int64_t> outBegin(F + 1, 0);
  for (int64_t f = 0; f < F; ++f)
    outBegin[f + 1] = outBegin[f] + used[f];
  const int64_t total = outBegin[F];
  EMBER_ASSIGN_OR_RETURN(Tensor * values,
                         ctx.allocateOutput(0, in.idsDType, {total}));
  Tensor *weights = nullptr;
  if (in.weighted) {
    EMBER_ASSIGN_OR_RETURN(weights,
                           ctx.allocateOutput(2, DType::kFloat32, {total}));
  } else if (ctx.numOutputs() > 2) {
    EMBER_RETURN_IF_ERROR(ctx.setOutput(2, Tensor()));
  }
  if (total == 0)
    return Status::ok();
  EMBER_ASSIGN_OR_RETURN(int64_t * outBeginDevice,
                         uploadInts(ctx, *env, outBegin));
  fromBagsCopyKernel<<<blocksFor(totalIds, *env), kThreads, 0, env->stream>>>(
      totalIds, table, F, outBeginDevice, values->data(),
      static_cast<int>(dtypeSize(in.idsDType)),
      weights ? weights->data() : nullptr);
  return launchStatus("kjt_from_bags (copy)");
}

} // namespace ember::cuda::jagged
