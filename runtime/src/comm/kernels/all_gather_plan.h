//===- all_gather_plan.h - all_gather's checks and sizes --------*- C++ -*-===//
//
// What the CPU and the CUDA all_gather kernels both do before moving data:
// check x, exchange (B, row elements, dtype) with every group position, and
// lay out the output's row blocks.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_KERNELS_ALL_GATHER_PLAN_H
#define EMBER_COMM_KERNELS_ALL_GATHER_PLAN_H

#include "comm/kernels/collective_common.h"

#include <cstdint>
#include <vector>

namespace ember::collective {

struct AllGatherPlan {
  int64_t rowElements = 0;      // elements of one row of x
  std::vector<int64_t> batches; // B of every position (exchanged)
  std::vector<int64_t> rowOff;  // prefix sums of batches: the output's rows
  bool equalBatches = true;     // every position has as many rows as x
  Shape outputShape;            // [sum B, x's trailing dims...]
};

/// Checks input 0 (x) and exchanges the header with the group (every error
/// names group.what).
Result<AllGatherPlan> planAllGather(KernelContext &ctx, const Group &group);

} // namespace ember::collective

#endif // EMBER_COMM_KERNELS_ALL_GATHER_PLAN_H
