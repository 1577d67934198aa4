//===- all_gather_plan.cpp - all_gather's checks and sizes ----------------===//
#include "comm/kernels/all_gather_plan.h"

namespace ember::collective {

Result<AllGatherPlan> planAllGather(KernelContext &ctx, const Group &group) {
  const std::string &where = group.what;
  const int g = group.size();
  AllGatherPlan plan;
  const Tensor &x = ctx.input(0);
  if (!x.defined() || x.rank() < 1)
    return invalidArgument(where + ": x must have rank >= 1");
  const int64_t e = plan.rowElements = rowElements(x);
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> hdr,
      group.allGatherInts({x.dim(0), e, static_cast<int64_t>(x.dtype())},
                          " (batch sizes)"));
  plan.batches.resize(g);
  for (int q = 0; q < g; ++q) {
    plan.batches[q] = hdr[3 * q];
    plan.equalBatches = plan.equalBatches && plan.batches[q] == x.dim(0);
    if (hdr[3 * q + 1] != e ||
        hdr[3 * q + 2] != static_cast<int64_t>(x.dtype()))
      return invalidArgument(
          where + ": group position " + std::to_string(q) + " has rows of " +
          std::to_string(hdr[3 * q + 1]) + " elements of dtype code " +
          std::to_string(hdr[3 * q + 2]) + ", this rank " + x.describe());
  }
  plan.rowOff = prefixSums(plan.batches);
  plan.outputShape = x.shape();
  plan.outputShape[0] = plan.rowOff[g];
  return plan;
}

} // namespace ember::collective
