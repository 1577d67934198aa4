//===- kjt_bucketize_kernel.cu - kjt_bucketize ----------------------------===//
//
// Row-wise bucketize on the device, without a host synchronization (every
// output's size is known from the input's): one thread per input segment
// (feature, sample) counts its ids per bucket, a device prefix sum turns the
// (bucket, feature, sample) counts into output positions, and the same
// thread places its ids in input order (a segment's ids are only touched by
// its own thread, so the order is FBGEMM's sequence order with no atomics).
// Long segments serialize on one thread; KJT segments are short (bags).
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/jagged/jagged_kernels.h"
#include "cuda/jagged/jagged_launch.h"
#include "kernels/shared/jagged_index.h"
#include "kernels/shared/kjt_kernel_attrs.h"
#include "kernels/shared/kjt_view.h"

namespace ember::cuda::jagged {

using ember::jagged::errorAt;

namespace {

__global__ void bucketizeCountKernel(int64_t FB, int64_t B,
                                     const int64_t *offsets, const void *ids,
                                     bool ids64, int64_t numIds,
                                     const int64_t *blockSizes,
                                     uint64_t numBuckets, int64_t *counts) {
  for (int64_t s = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; s < FB;
       s += int64_t{gridDim.x} * blockDim.x)
    bucketizeCount(s, B, FB, offsets, ids, ids64, numIds, blockSizes,
                   numBuckets, counts);
}

__global__ void bucketizeLengthKernel(int64_t n, const int64_t *counts,
                                      void *outLengths, bool lengths64) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < n;
       j += int64_t{gridDim.x} * blockDim.x)
    bucketizeLength(j, counts, outLengths, lengths64);
}

__global__ void
bucketizePlaceKernel(int64_t FB, int64_t B, const int64_t *offsets,
                     const void *ids, bool ids64, int64_t numIds,
                     const int64_t *blockSizes, uint64_t numBuckets,
                     int64_t *cursor, void *outIds, int64_t *permute,
                     const void *weights, void *outWeights, int weightBytes) {
  for (int64_t s = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; s < FB;
       s += int64_t{gridDim.x} * blockDim.x)
    bucketizePlace(s, B, FB, offsets, ids, ids64, numIds, blockSizes,
                   numBuckets, cursor, outIds, permute, weights, outWeights,
                   weightBytes);
}

} // namespace

Status runKjtBucketize(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, "kjt_bucketize"));
  auto attrsOr = ember::jagged::readBucketizeAttrs(ctx.attrs());
  if (!attrsOr.isOk())
    return attrsOr.status().withContext(where);
  const ember::jagged::BucketizeAttrs &a = *attrsOr;
  const int64_t F = static_cast<int64_t>(a.blockSizes.size());
  EMBER_ASSIGN_OR_RETURN(ember::jagged::KjtView kjt,
                         ember::jagged::checkKjt(ctx, 0, F, 0, "the KJT"));
  if (!ember::jagged::isIndexDType(kjt.values.dtype()))
    return errorAt(StatusCode::kInvalidArgument, where,
                   "values (input 0) must be int32 or int64 ids, got " +
                       kjt.values.describe());
  const int64_t n = kjt.values.numel(), B = kjt.batchSize, FB = F * B;
  const int64_t numLengths = a.numBuckets * FB;
  EMBER_ASSIGN_OR_RETURN(Tensor * values,
                         ctx.allocateOutput(0, kjt.values.dtype(), {n}));
  EMBER_ASSIGN_OR_RETURN(
      Tensor * lengths,
      ctx.allocateOutput(1, kjt.lengths.dtype(), {numLengths}));
  Tensor *weights = nullptr;
  if (kjt.weighted()) {
    EMBER_ASSIGN_OR_RETURN(weights,
                           ctx.allocateOutput(2, kjt.weights.dtype(), {n}));
  } else {
    EMBER_RETURN_IF_ERROR(ctx.setOutput(2, Tensor()));
  }
  EMBER_ASSIGN_OR_RETURN(Tensor * permute,
                         ctx.allocateOutput(3, DType::kInt64, {n}));

  EMBER_ASSIGN_OR_RETURN(int64_t * offsets, scratchInts(ctx, FB + 1));
  EMBER_RETURN_IF_ERROR(lengthsToOffsetsOnDevice(
      ctx, *env, kjt.lengths.data(), kjt.lengths.dtype() == DType::kInt64, FB,
      n, offsets, "the KJT lengths"));
  if (numLengths == 0)
    return Status::ok();
  EMBER_ASSIGN_OR_RETURN(int64_t * blockSizes,
                         uploadInts(ctx, *env, a.blockSizes));
  // cursor[0..numLengths]: counts in cursor[1..], then (scanned in place)
  // cursor[j] = the first output position of (bucket, feature, sample) j.
  EMBER_ASSIGN_OR_RETURN(int64_t * cursor, scratchInts(ctx, numLengths + 1));
  EMBER_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(
      cursor, 0, (numLengths + 1) * sizeof(int64_t), env->stream));
  const bool ids64 = kjt.values.dtype() == DType::kInt64;
  const uint64_t buckets = static_cast<uint64_t>(a.numBuckets);
  const int segBlocks = blocksFor(FB, *env);
  bucketizeCountKernel<<<segBlocks, kThreads, 0, env->stream>>>(
      FB, B, offsets, kjt.values.data(), ids64, n, blockSizes, buckets,
      cursor + 1);
  EMBER_RETURN_IF_ERROR(launchStatus("kjt_bucketize (counts)"));
  bucketizeLengthKernel<<<blocksFor(numLengths, *env), kThreads, 0,
                          env->stream>>>(numLengths, cursor + 1,
                                         lengths->data(),
                                         kjt.lengths.dtype() == DType::kInt64);
  EMBER_RETURN_IF_ERROR(launchStatus("kjt_bucketize (lengths)"));
  EMBER_RETURN_IF_ERROR(
      inclusiveScanInPlace(ctx, *env, cursor + 1, numLengths));
  bucketizePlaceKernel<<<segBlocks, kThreads, 0, env->stream>>>(
      FB, B, offsets, kjt.values.data(), ids64, n, blockSizes, buckets, cursor,
      values->data(), permute->data<int64_t>(),
      weights ? kjt.weights.data() : nullptr,
      weights ? weights->data() : nullptr, static_cast<int>(kjt.weightBytes()));
  return launchStatus("kjt_bucketize (place)");
}

} // namespace ember::cuda::jagged
