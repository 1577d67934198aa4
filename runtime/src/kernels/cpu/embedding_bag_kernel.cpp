//===- embedding_bag_kernel.cpp - embedding_bag ---------------------------===//
//
// inputs: 0 table, 1 indices [N], 2 offsets, 3 optional per_sample_weights
// attrs:  pooling, format, dim, padding_idx, include_last_offset,
//         feature_names (optional, one name, for messages)
// output: [B, dim] float32
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/embedding_kernel_defs.h"
#include "kernels/cpu/embedding_lookup_outcome.h"
#include "kernels/cpu/embedding_pool.h"
#include "kernels/kernel_context.h"
#include "kernels/shared/embedding_attrs.h"
#include "kernels/shared/embedding_input_checks.h"
#include "kernels/shared/embedding_table.h"
#include "kernels/shared/jagged_index.h"
#include "threading/thread_pool.h"

#include <algorithm>

namespace ember::embedding {

namespace {

Status validate(const Attributes &attrs, int numInputs, int numOutputs) {
  return readBagAttrs(attrs).status();
}

Status run(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(EmbeddingBagInputs in, checkEmbeddingBagInputs(ctx));
  const BagAttrs &a = in.attrs;
  const TableView &table = in.table;
  const Tensor &indices = ctx.input(1);
  const Tensor &offsets = ctx.input(2);
  const Tensor noWeights;
  const Tensor &weights = ctx.numInputs() > 3 ? ctx.input(3) : noWeights;
  const int64_t numIds = indices.numel();
  const int64_t numBags = in.numBags;
  EMBER_ASSIGN_OR_RETURN(void *scratch,
                         ctx.scratch((numBags + 1) * sizeof(int64_t)));
  int64_t *bagOffsets = static_cast<int64_t *>(scratch);
  EMBER_RETURN_IF_ERROR(jagged::normalizeBagOffsets(
      offsets, numIds, a.includeLastOffset, bagOffsets, where));
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out,
      ctx.allocateOutput(0, DType::kFloat32, {numBags, table.dim}));
  if (numBags == 0)
    return Status::ok();

  const BoundsCheckMode mode = ctx.boundsCheck();
  PoolJob base;
  base.table = table;
  base.ids = indices.data();
  base.idsAre64 = indices.dtype() == DType::kInt64;
  base.weights = weights.defined() ? weights.data<float>() : nullptr;
  base.outStride = table.dim;
  base.pooling = a.pooling;
  base.paddingIdx = a.paddingIdx;
  base.checkBounds = mode != BoundsCheckMode::kIgnore;
  base.stopAtInvalid = mode == BoundsCheckMode::kFatal;
  base.quantizedSums = ctx.quantizedSums();
  float *outData = out->data<float>();
  LookupOutcome outcome;
  // Runs of bags with equal numbers of ids, not of bags.
  parallelForBagsByIds(ctx.threadPool(), bagOffsets, numBags, table.dim,
                       [&](int64_t begin, int64_t end) {
                         PoolJob job = base;
                         job.offsets = bagOffsets + begin;
                         job.numBags = end - begin;
                         job.out = outData + begin * table.dim;
                         outcome.merge(poolBags(job), 0);
                       });
  if (outcome.stopped()) {
    int64_t pos = outcome.firstPos();
    // The bag holding position pos: the last b with bagOffsets[b] <= pos.
    int64_t bag = std::upper_bound(bagOffsets, bagOffsets + numBags + 1, pos) -
                  bagOffsets - 1;
    std::string feature = a.featureName.empty()
                              ? std::string("the indices")
                              : "feature '" + a.featureName + "'";
    return jagged::errorAt(StatusCode::kOutOfRange, where,
                           "id " + std::to_string(outcome.firstId()) +
                               " at position " + std::to_string(pos) +
                               " (bag " + std::to_string(bag) + ") of " +
                               feature + " is out of range for a table of " +
                               std::to_string(table.rows) + " rows");
  }
  if (outcome.invalidIds() > 0)
    ctx.reportInvalidIds(outcome.invalidIds());
  return Status::ok();
}

} // namespace

KernelEntry embeddingBagKernelEntry() {
  return {"embedding_bag", run, validate,
          "pooled lookup (sum/mean/max) of bags of ids in one table, "
          "PyTorch F.embedding_bag semantics"};
}

} // namespace ember::embedding
