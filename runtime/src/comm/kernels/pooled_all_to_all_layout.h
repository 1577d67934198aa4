//===- pooled_all_to_all_layout.h - pooled_all_to_all's layout --*- C++ -*-===//
//
// What the CPU and the CUDA pooled_all_to_all kernels both do before moving
// data: check x and the attributes, exchange (B, D, dtype, comm_dtype) with
// every group position, and lay out the row and column blocks.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_KERNELS_POOLED_ALL_TO_ALL_LAYOUT_H
#define EMBER_COMM_KERNELS_POOLED_ALL_TO_ALL_LAYOUT_H

#include "comm/kernels/collective_common.h"
#include "comm/kernels/comm_codec.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::collective {

/// The sizes and offsets of pooled_all_to_all's blocks.
struct PooledAllToAllLayout {
  std::vector<int64_t> dims;    // D of every position (dim_per_rank)
  std::vector<int64_t> batches; // B of every position (exchanged)
  std::vector<int64_t> rowOff;  // prefix sums of batches: x's row blocks
  std::vector<int64_t> colOff;  // prefix sums of dims: the output's columns
  int64_t localBatch = 0;       // B_me
  CommCodec codec = CommCodec::kNone;
  size_t wireElementSize = 0; // bytes of one element on the wire
};

/// Checks inputs 0 (x) and 1 (batch_ref) and the attributes, and exchanges
/// the header with the group (every error names group.what).
Result<PooledAllToAllLayout> pooledAllToAllLayout(KernelContext &ctx,
                                                  const Group &group);

} // namespace ember::collective

#endif // EMBER_COMM_KERNELS_POOLED_ALL_TO_ALL_LAYOUT_H
