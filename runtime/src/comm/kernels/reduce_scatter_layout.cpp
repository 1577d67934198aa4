//===- reduce_scatter_layout.cpp - reduce_scatter's checks, layout --------===//
#include "comm/kernels/reduce_scatter_layout.h"

namespace ember::collective {

Result<ReduceScatterLayout> reduceScatterLayout(KernelContext &ctx,
                                                const Group &group) {
  const std::string &where = group.what;
  EMBER_ASSIGN_OR_RETURN(ReductionAttrs r,
                         readReductionAttrs(ctx.attrs(), where));
  ReduceScatterLayout layout;
  static_cast<ReductionAttrs &>(layout) = r;
  const CommCodec codec = r.codec;
  const int g = group.size();
  const Tensor &x = ctx.input(0), &ref = ctx.input(1);
  if (!x.defined() || x.rank() < 1 || x.dtype() != DType::kFloat32)
    return invalidArgument(where + ": x must be float32 of rank >= 1, not " +
                           (x.defined() ? x.describe() : "absent"));
  EMBER_ASSIGN_OR_RETURN(const int64_t bMe, localBatch(ctx, ref, where));
  layout.localBatch = bMe;
  const int64_t e = layout.rowElements = rowElements(x);
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> hdr,
      group.allGatherInts({bMe, e, static_cast<int64_t>(codec)},
                          " (batch sizes)"));
  layout.batches.resize(g);
  for (int q = 0; q < g; ++q) {
    layout.batches[q] = hdr[3 * q];
    layout.equalBatches = layout.equalBatches && layout.batches[q] == bMe;
    if (hdr[3 * q + 1] != e)
      return invalidArgument(where + ": group position " + std::to_string(q) +
                             " has rows of " + std::to_string(hdr[3 * q + 1]) +
                             " elements, this rank " + std::to_string(e));
    if (hdr[3 * q + 2] != static_cast<int64_t>(codec))
      return invalidArgument(where + ": group position " + std::to_string(q) +
                             " sends comm_dtype code " +
                             std::to_string(hdr[3 * q + 2]) + ", this rank " +
                             commCodecName(codec));
  }
  layout.rowOff = prefixSums(layout.batches);
  if (x.dim(0) != layout.rowOff[g])
    return invalidArgument(where + ": x has " + std::to_string(x.dim(0)) +
                           " rows but the group's batch sizes sum to " +
                           std::to_string(layout.rowOff[g]));
  layout.outputShape = x.shape();
  layout.outputShape[0] = bMe;
  layout.wireElementSize = codec != CommCodec::kNone ? 2 : sizeof(float);
  return layout;
}

} // namespace ember::collective
