//===- pooled_all_to_all_layout.cpp - pooled_all_to_all's layout ----------===//
#include "comm/kernels/pooled_all_to_all_layout.h"

namespace ember::collective {

Result<PooledAllToAllLayout> pooledAllToAllLayout(KernelContext &ctx,
                                                  const Group &group) {
  const std::string &where = group.what;
  const int g = group.size(), me = group.position;
  PooledAllToAllLayout layout;
  auto dimsOr = perMemberInts(ctx.attrs(), "dim_per_rank", g);
  if (!dimsOr)
    return dimsOr.status().withContext(where);
  layout.dims = std::move(*dimsOr);
  const std::vector<int64_t> &dims = layout.dims;
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
  const CommCodec codec = layout.codec = *codecOr;
  if (codec != CommCodec::kNone && x.dtype() != DType::kFloat32)
    return invalidArgument(where + ": comm_dtype \"" + commCodecName(codec) +
                           "\" needs float32 x, not " + x.describe());
  EMBER_ASSIGN_OR_RETURN(layout.localBatch, localBatch(ctx, ref, where));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> hdr,
                         group.allGatherInts({layout.localBatch, x.dim(1),
                                              static_cast<int64_t>(x.dtype()),
                                              static_cast<int64_t>(codec)},
                                             " (batch sizes)"));
  layout.batches.resize(g);
  for (int q = 0; q < g; ++q) {
    layout.batches[q] = hdr[4 * q];
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
  layout.rowOff = prefixSums(layout.batches);
  layout.colOff = prefixSums(dims);
  if (dims[me] != 0 && x.dim(0) != layout.rowOff[g])
    return invalidArgument(where + ": x has " + std::to_string(x.dim(0)) +
                           " rows but the group's batch sizes sum to " +
                           std::to_string(layout.rowOff[g]));
  layout.wireElementSize = codec != CommCodec::kNone ? 2 : dtypeSize(x.dtype());
  return layout;
}

} // namespace ember::collective
