//===- all_gather_layout.h - all_gather's checks and layout -----*- C++ -*-===//
//
// What the CPU and the CUDA all_gather kernels both do before moving data:
// check x, exchange (B, row elements, dtype) with every group position, and
// lay out the output's row blocks.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_KERNELS_ALL_GATHER_LAYOUT_H
#define EMBER_COMM_KERNELS_ALL_GATHER_LAYOUT_H

#include "comm/kernels/collective_common.h"

#include <cstdint>
#include <vector>

namespace ember::collective {

/// The sizes and offsets of all_gather's buffers.
struct AllGatherLayout {
  int64_t rowElements = 0;      // elements of one row of x
  std::vector<int64_t> batches; // B of every position (exchanged)
  std::vector<int64_t> rowOff;  // prefix sums of batches: the output's rows
  bool equalBatches = true;     // every position has as many rows as x
  Shape outputShape;            // [sum B, x's trailing dims...]
};

/// Checks input 0 (x) and exchanges the header with the group (every error
/// names group.what).
Result<AllGatherLayout> allGatherLayout(KernelContext &ctx, const Group &group);

} // namespace ember::collective

#endif // EMBER_COMM_KERNELS_ALL_GATHER_LAYOUT_H
