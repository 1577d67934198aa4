//===- pooled_all_to_all_plan.cpp - pooled_all_to_all's checks and sizes --===//
#include "comm/kernels/pooled_all_to_all_plan.h"

namespace ember::collective {

Result<PooledAllToAllPlan> planPooledAllToAll(KernelContext &ctx,
                                              const Group &group) {
  const std::string &where = group.what;
  const int g = group.size(), me = group.position;
  PooledAllToAllPlan plan;
  auto dimsOr = perMemberInts(ctx.attrs(), "dim_per_rank", g);
  if (!dimsOr)
    return dimsOr.status().withContext(where);
  plan.dims = std::move(*dimsOr);
  const std::vector<int64_t> &dims = plan.dims;
  const Tensor &x = ctx.input(0), &ref = ctx.input(1);
  if (!x.defined() || x.rank() != 2)
    return invalidArgument(where + ": x must have rank 2 [B_total, D], not " +
                           (x.defined() ? x.describe() : "absent"));
  if (x.dim(1) != dims[me])
    return invalidArgument(where + ": x has " + std::to_string(x.dim(1)) +
                           " columns but dim_per_rank[" + std::to_string(me) +
                           "] is " + std::to_string(dims[me]));
  auto codecOr = commCodec(ctx.attrs());
  if (!codecOr)
    return codecOr.status().withContext(where);
  const CommCodec codec = plan.codec = *codecOr;
  if (codec != CommCodec::kNone && x.dtype() != DType::kFloat32)
    return invalidArgument(where + ": comm_dtype \"" + commCodecName(codec) +
                           "\" needs float32 x, not " + x.describe());
  EMBER_ASSIGN_OR_RETURN(plan.localBatch, localBatch(ctx, ref, where));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> hdr,
                         group.allGatherInts({plan.localBatch, x.dim(1),
                                              static_cast<int64_t>(x.dtype()),
                                              static_cast<int64_t>(codec)},
                                             " (batch sizes)"));
  plan.batches.resize(g);
  for (int q = 0; q < g; ++q) {
    plan.batches[q] = hdr[4 * q];
    if (hdr[4 * q + 1] != dims[q] ||
        hdr[4 * q + 2] != static_cast<int64_t>(x.dtype()) ||
        hdr[4 * q + 3] != static_cast<int64_t>(codec))
      return invalidArgument(
          where + ": group position " + std::to_string(q) + " sends " +
          std::to_string(hdr[4 * q + 1]) + " columns of dtype code " +
          std::to_string(hdr[4 * q + 2]) + " (comm_dtype code " +
          std::to_string(hdr[4 * q + 3]) + "), but dim_per_rank says " +
          std::to_string(dims[q]) + " and this rank has " +
          std::string(dtypeName(x.dtype())) + " (comm_dtype " +
          commCodecName(codec) + ")");
  }
  plan.rowOff = prefixSums(plan.batches);
  plan.colOff = prefixSums(dims);
  if (dims[me] != 0 && x.dim(0) != plan.rowOff[g])
    return invalidArgument(where + ": x has " + std::to_string(x.dim(0)) +
                           " rows but the group's batch sizes sum to " +
                           std::to_string(plan.rowOff[g]));
  plan.wireElementSize = codec != CommCodec::kNone ? 2 : dtypeSize(x.dtype());
  return plan;
}

} // namespace ember::collective
