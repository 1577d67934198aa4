//===- all_reduce_layout.h - all_reduce's checks and chunks -----*- C++ -*-===//
//
// What the CPU and the CUDA all_reduce kernels both do before moving data:
// check x and the attributes, exchange (elements, comm_dtype) with every
// group position, and split the elements into near-equal chunks (position p
// reduces chunk p).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_KERNELS_ALL_REDUCE_LAYOUT_H
#define EMBER_COMM_KERNELS_ALL_REDUCE_LAYOUT_H

#include "comm/kernels/collective_common.h"
#include "comm/kernels/reduction_attrs.h"

#include <cstdint>
#include <vector>

namespace ember::collective {

/// all_reduce's attributes (isMax, codec), size and chunks.
struct AllReduceLayout : ReductionAttrs {
  int64_t numElements = 0; // x.numel(), the same on every position
  // g + 1 bounds: position p owns the elements [chunk[p], chunk[p + 1]).
  std::vector<int64_t> chunk;
};

/// Checks input 0 (x) and the attributes, and exchanges the header with the
/// group (every error names group.what).
Result<AllReduceLayout> allReduceLayout(KernelContext &ctx, const Group &group);

} // namespace ember::collective

#endif // EMBER_COMM_KERNELS_ALL_REDUCE_LAYOUT_H
