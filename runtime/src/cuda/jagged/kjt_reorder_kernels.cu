//===- kjt_reorder_kernels.cu - kjt_permute, kjt_split, kjt_concat --------===//
//
// kjt_permute: device offsets of the input's segments, the output keys'
//   value counts and their prefix sum, then one thread per output length
//   and per output value (a binary search finds its key). A permutation
//   that keeps every key once has N output values and runs without a host
//   synchronization; one that repeats or drops keys reads its total back.
// kjt_split: the parts' value ranges are read back (one synchronization;
//   none for a single part), then each part is a device-to-device copy.
// kjt_concat: every KJT's lengths are checked on the device against its
//   values (no synchronization); the outputs are device-to-device copies.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/jagged/jagged_kernels.h"
#include "cuda/jagged/jagged_launch.h"
#include "kernels/shared/jagged_index.h"
#include "kernels/shared/kjt_kernel_attrs.h"
#include "kernels/shared/kjt_view.h"

#include <vector>

namespace ember::cuda::jagged {

using ember::jagged::errorAt;
using ember::jagged::KjtView;

namespace {

__global__ void permuteKeyCountKernel(int64_t P, const int64_t *perm,
                                      const int64_t *offsets, int64_t B,
                                      int64_t *counts) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < P;
       i += int64_t{gridDim.x} * blockDim.x)
    permuteKeyCount(i, perm, offsets, B, counts);
}

__global__ void permuteLengthKernel(int64_t n, const int64_t *perm, int64_t B,
                                    const void *lengths, void *outLengths,
                                    int lengthBytes) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < n;
       j += int64_t{gridDim.x} * blockDim.x)
    permuteLength(j, perm, B, lengths, outLengths, lengthBytes);
}

__global__ void permuteValueKernel(int64_t n, const int64_t *perm,
                                   const int64_t *offsets, int64_t B,
                                   const int64_t *outKeyBegin, int64_t P,
                                   const void *values, int64_t numValues,
                                   void *outValues, int valueBytes,
                                   const void *weights, void *outWeights,
                                   int weightBytes) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < n;
       j += int64_t{gridDim.x} * blockDim.x)
    permuteValue(j, perm, offsets, B, outKeyBegin, P, values, numValues,
                 outValues, valueBytes, weights, outWeights, weightBytes);
}

/// Device offsets [K*B+1] of a checked KJT's segments (lengths validated
/// against its values on the device).
Result<int64_t *> kjtOffsets(KernelContext &ctx, const KernelEnv &env,
                             const KjtView &kjt, const std::string &what) {
  const int64_t count = kjt.lengths.numel();
  EMBER_ASSIGN_OR_RETURN(int64_t * offsets, scratchInts(ctx, count + 1));
  EMBER_RETURN_IF_ERROR(lengthsToOffsetsOnDevice(
      ctx, env, kjt.lengths.data(), kjt.lengths.dtype() == DType::kInt64, count,
      kjt.values.numel(), offsets, what + " lengths"));
  return offsets;
}

/// Output `index`, 1-D, on the device.
Result<Tensor *> allocate(KernelContext &ctx, int index, DType dtype,
                          int64_t numel) {
  return ctx.allocateOutput(index, dtype, {numel});
}

} // namespace

Status runKjtPermute(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, "kjt_permute"));
  auto attrsOr = ember::jagged::readPermuteAttrs(ctx.attrs());
  if (!attrsOr.isOk())
    return attrsOr.status().withContext(where);
  const ember::jagged::PermuteAttrs &a = *attrsOr;
  if (a.numKeys == 0 && a.batchSize == 0 && ctx.input(1).defined() &&
      ctx.input(1).numel() > 0)
    return errorAt(StatusCode::kInvalidArgument, where,
                   "num_keys/batch_size is 0 but the input has lengths");
  EMBER_ASSIGN_OR_RETURN(
      KjtView kjt,
      ember::jagged::checkKjt(ctx, 0, a.numKeys, a.batchSize, "the KJT"));
  const int64_t K = kjt.numKeys, B = kjt.batchSize,
                P = static_cast<int64_t>(a.permutation.size());
  std::vector<char> seen(K, 0);
  bool keepsEveryKeyOnce = P == K;
  for (int64_t i = 0; i < P; ++i) {
    const int64_t k = a.permutation[i];
    if (k >= K)
      return errorAt(StatusCode::kInvalidArgument, where,
                     "permutation[" + std::to_string(i) +
                         "] = " + std::to_string(k) + " but the input has " +
                         std::to_string(K) + " keys");
    if (seen[k])
      keepsEveryKeyOnce = false;
    seen[k] = 1;
  }
  EMBER_ASSIGN_OR_RETURN(int64_t * offsets,
                         kjtOffsets(ctx, *env, kjt, "the KJT"));
  EMBER_ASSIGN_OR_RETURN(int64_t * perm, uploadInts(ctx, *env, a.permutation));
  // outKeyBegin[0..P]: the exclusive prefix sum of the output keys' counts.
  EMBER_ASSIGN_OR_RETURN(int64_t * outKeyBegin, scratchInts(ctx, P + 1));
  EMBER_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(outKeyBegin, 0, sizeof(int64_t), env->stream));
  if (P > 0) {
    permuteKeyCountKernel<<<blocksFor(P, *env), kThreads, 0, env->stream>>>(
        P, perm, offsets, B, outKeyBegin + 1);
    EMBER_RETURN_IF_ERROR(launchStatus("kjt_permute (key counts)"));
    EMBER_RETURN_IF_ERROR(inclusiveScanInPlace(ctx, *env, outKeyBegin + 1, P));
  }
  int64_t total = kjt.values.numel();
  if (!keepsEveryKeyOnce) {
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                           readBackInts(ctx, *env, outKeyBegin + P, 1));
    total = sizes[0];
  }
  EMBER_ASSIGN_OR_RETURN(Tensor * values,
                         allocate(ctx, 0, kjt.values.dtype(), total));
  EMBER_ASSIGN_OR_RETURN(Tensor * lengths,
                         allocate(ctx, 1, kjt.lengths.dtype(), P * B));
  Tensor *weights = nullptr;
  if (kjt.weighted()) {
    EMBER_ASSIGN_OR_RETURN(weights,
                           allocate(ctx, 2, kjt.weights.dtype(), total));
  } else if (ctx.numOutputs() > 2) {
    EMBER_RETURN_IF_ERROR(ctx.setOutput(2, Tensor()));
  }
  if (P * B > 0) {
    permuteLengthKernel<<<blocksFor(P * B, *env), kThreads, 0, env->stream>>>(
        P * B, perm, B, kjt.lengths.data(), lengths->data(),
        static_cast<int>(dtypeSize(kjt.lengths.dtype())));
    EMBER_RETURN_IF_ERROR(launchStatus("kjt_permute (lengths)"));
  }
  if (total > 0) {
    permuteValueKernel<<<blocksFor(total, *env), kThreads, 0, env->stream>>>(
        total, perm, offsets, B, outKeyBegin, P, kjt.values.data(),
        kjt.values.numel(), values->data(), static_cast<int>(kjt.valueBytes()),
        weights ? kjt.weights.data() : nullptr,
        weights ? weights->data() : nullptr,
        static_cast<int>(kjt.weightBytes()));
    EMBER_RETURN_IF_ERROR(launchStatus("kjt_permute (values)"));
  }
  return Status::ok();
}

Status runKjtSplit(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, "kjt_split"));
  auto countsOr =
      ember::jagged::readSplitKeyCounts(ctx.attrs(), ctx.numOutputs());
  if (!countsOr.isOk())
    return countsOr.status().withContext(where);
  const std::vector<int64_t> &counts = *countsOr;
  const int64_t S = static_cast<int64_t>(counts.size());
  int64_t F = 0;
  for (int64_t c : counts)
    F += c;
  EMBER_ASSIGN_OR_RETURN(KjtView kjt,
                         ember::jagged::checkKjt(ctx, 0, F, 0, "the KJT"));
  const int64_t B = kjt.batchSize;
  EMBER_ASSIGN_OR_RETURN(int64_t * offsets,
                         kjtOffsets(ctx, *env, kjt, "the KJT"));
  // partBegin[s]: the first value of part s (partBegin[S] = N).
  std::vector<int64_t> partBegin = {0, kjt.values.numel()};
  if (S > 1) {
    std::vector<int64_t> positions(S + 1, 0);
    for (int64_t s = 0; s < S; ++s)
      positions[s + 1] = positions[s] + counts[s] * B;
    EMBER_ASSIGN_OR_RETURN(int64_t * devPositions,
                           uploadInts(ctx, *env, positions));
    EMBER_ASSIGN_OR_RETURN(int64_t * begins, scratchInts(ctx, S + 1));
    EMBER_RETURN_IF_ERROR(
        gatherInts(*env, offsets, devPositions, S + 1, begins));
    EMBER_ASSIGN_OR_RETURN(partBegin, readBackInts(ctx, *env, begins, S + 1));
  }
  const size_t vb = kjt.valueBytes(), wb = kjt.weightBytes();
  const size_t lb = dtypeSize(kjt.lengths.dtype());
  int64_t firstKey = 0;
  for (int64_t s = 0; s < S; ++s) {
    const int out = 3 * static_cast<int>(s);
    const int64_t begin = partBegin[s], count = partBegin[s + 1] - begin;
    EMBER_ASSIGN_OR_RETURN(Tensor * values,
                           allocate(ctx, out, kjt.values.dtype(), count));
    EMBER_ASSIGN_OR_RETURN(
        Tensor * lengths,
        allocate(ctx, out + 1, kjt.lengths.dtype(), counts[s] * B));
    EMBER_RETURN_IF_ERROR(copyDevice(*env, values->data(),
                                     kjt.values.data<uint8_t>() + begin * vb,
                                     count * vb));
    EMBER_RETURN_IF_ERROR(copyDevice(
        *env, lengths->data(), kjt.lengths.data<uint8_t>() + firstKey * B * lb,
        counts[s] * B * lb));
    if (kjt.weighted()) {
      EMBER_ASSIGN_OR_RETURN(
          Tensor * weights, allocate(ctx, out + 2, kjt.weights.dtype(), count));
      EMBER_RETURN_IF_ERROR(copyDevice(*env, weights->data(),
                                       kjt.weights.data<uint8_t>() + begin * wb,
                                       count * wb));
    } else {
      EMBER_RETURN_IF_ERROR(ctx.setOutput(out + 2, Tensor()));
    }
    firstKey += counts[s];
  }
  return Status::ok();
}

Status runKjtConcat(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, "kjt_concat"));
  auto attrsOr = ember::jagged::readConcatAttrs(ctx.attrs(), ctx.numInputs());
  if (!attrsOr.isOk())
    return attrsOr.status().withContext(where);
  EMBER_ASSIGN_OR_RETURN(
      std::vector<KjtView> kjts,
      ember::jagged::readConcatInputs(ctx, *attrsOr, ember::jagged::checkKjt));
  int64_t totalValues = 0, totalLengths = 0;
  for (size_t k = 0; k < kjts.size(); ++k) {
    // Validates the KJT's lengths against its values (device errors).
    EMBER_RETURN_IF_ERROR(
        kjtOffsets(ctx, *env, kjts[k], "KJT " + std::to_string(k)).status());
    totalValues += kjts[k].values.numel();
    totalLengths += kjts[k].lengths.numel();
  }
  const KjtView &first = kjts.front();
  EMBER_ASSIGN_OR_RETURN(Tensor * values,
                         allocate(ctx, 0, first.values.dtype(), totalValues));
  EMBER_ASSIGN_OR_RETURN(Tensor * lengths,
                         allocate(ctx, 1, first.lengths.dtype(), totalLengths));
  Tensor *weights = nullptr;
  if (first.weighted()) {
    EMBER_ASSIGN_OR_RETURN(
        weights, allocate(ctx, 2, first.weights.dtype(), totalValues));
  } else if (ctx.numOutputs() > 2) {
    EMBER_RETURN_IF_ERROR(ctx.setOutput(2, Tensor()));
  }
  uint8_t *v = values->data<uint8_t>(), *l = lengths->data<uint8_t>();
  uint8_t *w = weights ? weights->data<uint8_t>() : nullptr;
  for (const KjtView &kjt : kjts) {
    EMBER_RETURN_IF_ERROR(
        copyDevice(*env, v, kjt.values.data(), kjt.values.nbytes()));
    v += kjt.values.nbytes();
    EMBER_RETURN_IF_ERROR(
        copyDevice(*env, l, kjt.lengths.data(), kjt.lengths.nbytes()));
    l += kjt.lengths.nbytes();
    if (w) {
      EMBER_RETURN_IF_ERROR(
          copyDevice(*env, w, kjt.weights.data(), kjt.weights.nbytes()));
      w += kjt.weights.nbytes();
    }
  }
  return Status::ok();
}

} // namespace ember::cuda::jagged
