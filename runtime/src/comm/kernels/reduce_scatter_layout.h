//===- reduce_scatter_layout.h - reduce_scatter checks, layout -*- C++ -*-===//
//
// What the CPU and the CUDA reduce_scatter kernels both do before moving
// data: check x and the attributes, exchange (B, row elements, comm_dtype)
// with every group position, and lay out the row blocks.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_KERNELS_REDUCE_SCATTER_LAYOUT_H
#define EMBER_COMM_KERNELS_REDUCE_SCATTER_LAYOUT_H

#include "comm/kernels/collective_common.h"
#include "comm/kernels/reduction_attrs.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::collective {

/// reduce_scatter's attributes (isMax, codec) and the sizes and offsets of
/// its blocks.
struct ReduceScatterLayout : ReductionAttrs {
  int64_t localBatch = 0;       // B_me
  int64_t rowElements = 0;      // elements of one row of x
  std::vector<int64_t> batches; // B of every position (exchanged)
  std::vector<int64_t> rowOff;  // prefix sums of batches: x's row blocks
  bool equalBatches = true;     // every position has B_me rows
  Shape outputShape;            // [B_me, x's trailing dims...]
  size_t wireElementSize = 0;   // bytes of one element on the wire
};

/// Checks inputs 0 (x) and 1 (batch_ref) and the attributes, and exchanges
/// the header with the group (every error names group.what).
Result<ReduceScatterLayout> reduceScatterLayout(KernelContext &ctx,
                                                const Group &group);

} // namespace ember::collective

#endif // EMBER_COMM_KERNELS_REDUCE_SCATTER_LAYOUT_H
