//===- all_gather_layout.cpp - all_gather's checks and layout -------------===//
#include "comm/kernels/all_gather_layout.h"

namespace ember::collective {

Result<AllGatherLayout> allGatherLayout(KernelContext &ctx,
                                        const Group &group) {
  const std::string &where = group.what;
  const int g = group.size();
  AllGatherLayout layout;
  const Tensor &x = ctx.input(0);
  if (!x.defined() || x.rank() < 1)
    return invalidArgument(where + ": x must have rank >= 1");
  const int64_t e = layout.rowElements = rowElements(x);
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> hdr,
      group.allGatherInts({x.dim(0), e, static_cast<int64_t>(x.dtype())},
                          " (batch sizes)"));
  layout.batches.resize(g);
  for (int q = 0; q < g; ++q) {
    layout.batches[q] = hdr[3 * q];
    layout.equalBatches = layout.equalBatches && layout.batches[q] == x.dim(0);
    if (hdr[3 * q + 1] != e ||
        hdr[3 * q + 2] != static_cast<int64_t>(x.dtype()))
      return invalidArgument(
          where + ": group position " + std::to_string(q) + " has rows of " +
          std::to_string(hdr[3 * q + 1]) + " elements of dtype code " +
          std::to_string(hdr[3 * q + 2]) + ", this rank " + x.describe());
  }
  layout.rowOff = prefixSums(layout.batches);
  layout.outputShape = x.shape();
  layout.outputShape[0] = layout.rowOff[g];
  return layout;
}

} // namespace ember::collective
