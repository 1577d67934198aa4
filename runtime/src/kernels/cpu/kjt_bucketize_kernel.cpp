//===- kjt_bucketize_kernel.cpp - kjt_bucketize ---------------------------===//
//
// Row-wise sharding's input distribution: splits every id of a KJT into the
// bucket (rank) that owns its row, with FBGEMM's
// block_bucketize_sparse_features semantics (uniform blocks, sequence=True):
//
//   u = id as the unsigned type of its width (negative ids become huge)
//   ub = block_size[f] * num_buckets
//   u <  ub: bucket = u / block_size,  local id = u % block_size
//   u >= ub: bucket = u % num_buckets, local id = u / num_buckets
//
// (block_size 0 sends every id down the second, cyclic, branch.)
//
// inputs: 0 values [N] (int32/int64 ids), 1 lengths [F*B], 2 optional weights
// attrs:  block_sizes (F ints >= 0), num_buckets (>= 1)
// outputs: 0 values (local ids), 1 lengths [num_buckets*F*B] ordered
//          (bucket, feature, sample), 2 weights (or undefined),
//          3 unbucketize_permute [N] int64: for each input position, its
//          position in the bucketized values. Within a (bucket, feature,
//          sample) segment ids keep their input order.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/jagged_kernel_defs.h"
#include "kernels/kernel_context.h"
#include "kernels/shared/jagged_index.h"
#include "kernels/shared/kjt_kernel_attrs.h"
#include "kernels/shared/kjt_view.h"

#include <type_traits>

namespace ember::jagged {

Result<BucketizeAttrs> readBucketizeAttrs(const Attributes &attrs) {
  BucketizeAttrs a;
  EMBER_ASSIGN_OR_RETURN(a.blockSizes, attrs.getInts("block_sizes"));
  EMBER_ASSIGN_OR_RETURN(a.numBuckets, attrs.getInt("num_buckets"));
  if (a.blockSizes.empty())
    return invalidArgument(
        "attribute 'block_sizes' is empty (one per feature)");
  for (size_t f = 0; f < a.blockSizes.size(); ++f)
    if (a.blockSizes[f] < 0)
      return invalidArgument("block_sizes[" + std::to_string(f) +
                             "] is negative");
  if (a.numBuckets < 1)
    return invalidArgument("attribute 'num_buckets' must be >= 1, got " +
                           std::to_string(a.numBuckets));
  return a;
}

namespace {

Status validate(const Attributes &attrs, int, int) {
  return readBucketizeAttrs(attrs).status();
}

/// The bucket and local id of `id` (FBGEMM's uniform block bucketize).
template <typename IndexT>
inline void bucketOf(IndexT id, uint64_t blockSize, uint64_t numBuckets,
                     uint64_t &bucket, IndexT &local) {
  using U = std::make_unsigned_t<IndexT>;
  const uint64_t u = static_cast<U>(id);
  if (u < blockSize * numBuckets) {
    bucket = u / blockSize;
    local = static_cast<IndexT>(static_cast<U>(u % blockSize));
  } else {
    bucket = u % numBuckets;
    local = static_cast<IndexT>(static_cast<U>(u / numBuckets));
  }
}

template <typename IndexT, typename LengthT>
void bucketize(const KjtView &kjt, const BucketizeAttrs &a, IndexT *outValues,
               LengthT *outLengths, uint8_t *outWeights, int64_t *permute,
               std::vector<int64_t> &counts) {
  const int64_t F = kjt.numKeys, B = kjt.batchSize, FB = F * B;
  const uint64_t nb = static_cast<uint64_t>(a.numBuckets);
  const IndexT *ids = kjt.values.data<IndexT>();
  counts.assign(nb * FB + 1, 0);
  // Pass 1: how many ids each (bucket, feature, sample) segment gets.
  for (int64_t f = 0; f < F; ++f) {
    const uint64_t block = static_cast<uint64_t>(a.blockSizes[f]);
    for (int64_t s = f * B; s < (f + 1) * B; ++s)
      for (int64_t i = kjt.offsets[s]; i < kjt.offsets[s + 1]; ++i) {
        uint64_t bucket;
        IndexT local;
        bucketOf(ids[i], block, nb, bucket, local);
        ++counts[bucket * FB + s];
      }
  }
  for (int64_t j = 0; j < static_cast<int64_t>(nb) * FB; ++j)
    outLengths[j] = static_cast<LengthT>(counts[j]);
  // Exclusive scan: counts[j] becomes the next free position of segment j.
  int64_t sum = 0;
  for (int64_t j = 0; j < static_cast<int64_t>(nb) * FB; ++j) {
    int64_t c = counts[j];
    counts[j] = sum;
    sum += c;
  }
  // Pass 2: place every id.
  const size_t wb = kjt.weightBytes();
  for (int64_t f = 0; f < F; ++f) {
    const uint64_t block = static_cast<uint64_t>(a.blockSizes[f]);
    for (int64_t s = f * B; s < (f + 1) * B; ++s)
      for (int64_t i = kjt.offsets[s]; i < kjt.offsets[s + 1]; ++i) {
        uint64_t bucket;
        IndexT local;
        bucketOf(ids[i], block, nb, bucket, local);
        int64_t pos = counts[bucket * FB + s]++;
        outValues[pos] = local;
        permute[i] = pos;
        if (outWeights)
          std::memcpy(outWeights + pos * wb,
                      kjt.weights.data<uint8_t>() + i * wb, wb);
      }
  }
}

Status run(KernelContext &ctx) {
  const std::string where = ctx.location();
  auto attrsOr = readBucketizeAttrs(ctx.attrs());
  if (!attrsOr.isOk())
    return attrsOr.status().withContext(where);
  const BucketizeAttrs &a = *attrsOr;
  const int64_t F = static_cast<int64_t>(a.blockSizes.size());
  EMBER_ASSIGN_OR_RETURN(KjtView kjt, readKjt(ctx, 0, F, 0, "the KJT"));
  if (!isIndexDType(kjt.values.dtype()))
    return errorAt(StatusCode::kInvalidArgument, where,
                   "values (input 0) must be int32 or int64 ids, got " +
                       kjt.values.describe());
  const int64_t n = kjt.values.numel();
  const int64_t numLengths = a.numBuckets * F * kjt.batchSize;
  EMBER_ASSIGN_OR_RETURN(uint8_t * values,
                         allocateVector(ctx, 0, kjt.values.dtype(), n));
  EMBER_ASSIGN_OR_RETURN(
      uint8_t * lengths,
      allocateVector(ctx, 1, kjt.lengths.dtype(), numLengths));
  uint8_t *weights = nullptr;
  if (kjt.weighted()) {
    EMBER_ASSIGN_OR_RETURN(weights,
                           allocateVector(ctx, 2, kjt.weights.dtype(), n));
  } else {
    EMBER_RETURN_IF_ERROR(ctx.setOutput(2, Tensor()));
  }
  EMBER_ASSIGN_OR_RETURN(uint8_t * permute,
                         allocateVector(ctx, 3, DType::kInt64, n));
  int64_t *perm = reinterpret_cast<int64_t *>(permute);
  std::vector<int64_t> counts;
  const bool ids64 = kjt.values.dtype() == DType::kInt64;
  const bool lengths64 = kjt.lengths.dtype() == DType::kInt64;
  if (ids64 && lengths64)
    bucketize(kjt, a, reinterpret_cast<int64_t *>(values),
              reinterpret_cast<int64_t *>(lengths), weights, perm, counts);
  else if (ids64)
    bucketize(kjt, a, reinterpret_cast<int64_t *>(values),
              reinterpret_cast<int32_t *>(lengths), weights, perm, counts);
  else if (lengths64)
    bucketize(kjt, a, reinterpret_cast<int32_t *>(values),
              reinterpret_cast<int64_t *>(lengths), weights, perm, counts);
  else
    bucketize(kjt, a, reinterpret_cast<int32_t *>(values),
              reinterpret_cast<int32_t *>(lengths), weights, perm, counts);
  return Status::ok();
}

} // namespace

KernelEntry kjtBucketizeKernelEntry() {
  return {"kjt_bucketize", run, validate,
          "split a KJT's ids into row-wise shards (FBGEMM "
          "block_bucketize_sparse_features)"};
}

} // namespace ember::jagged
