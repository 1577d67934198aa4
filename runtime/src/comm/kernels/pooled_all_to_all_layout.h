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

/// A run of received columns that lands in one range of the output:
/// position `position`'s columns [sourceColumn, sourceColumn + width) go to
/// output columns [outputColumn, outputColumn + width).
struct PooledSegment {
  int position = 0;
  int64_t sourceColumn = 0;
  int64_t width = 0;
  int64_t outputColumn = 0;
};

/// The sizes and offsets of pooled_all_to_all's blocks.
struct PooledAllToAllLayout {
  std::vector<int64_t> dims;    // D of every position (dim_per_rank)
  std::vector<int64_t> batches; // B of every position (exchanged)
  std::vector<int64_t> rowOff;  // prefix sums of batches: x's row blocks
  std::vector<int64_t> colOff;  // prefix sums of dims: the received blocks
  /// Where the received columns go, ordered by output column (together they
  /// tile [0, sum D)): one per non-empty position in position order, or the
  /// plan's segment_dims / segment_columns.
  std::vector<PooledSegment> segments;
  int64_t localBatch = 0; // B_me
  CommCodec codec = CommCodec::kNone;
  size_t wireElementSize = 0; // bytes of one element on the wire
};

/// The segments of the output from the attributes 'segment_dims' and
/// 'segment_columns' (both or neither; neither: the wire order) for the
/// positions' column counts `dims`, ordered by output column. Refuses
/// segments that do not cut each position's columns in order (positive
/// widths summing to its D) or that leave a column of [0, sum D) uncovered
/// or covered twice, naming the attribute and the segment.
Result<std::vector<PooledSegment>>
pooledSegments(const Attributes &attrs, const std::vector<int64_t> &dims);

/// The segments as the CUDA unpack reads them (pooledSourceIndex in
/// cuda/collectives/collective_device.cuh): n + 1 output column starts (the
/// last one sum D), then each segment's index in the staging buffer of its
/// row 0's first element (position q's [bMe, dims[q]] block at bMe times
/// the columns of the positions before it), then each segment's staging
/// row length dims[q]. `segments` ordered by output column.
std::vector<int64_t> pooledUnpackTable(const std::vector<PooledSegment> &segments,
                                       const std::vector<int64_t> &dims,
                                       int64_t bMe);

/// Checks inputs 0 (x) and 1 (batch_ref) and the attributes, and exchanges
/// the header with the group (every error names group.what).
Result<PooledAllToAllLayout> pooledAllToAllLayout(KernelContext &ctx,
                                                  const Group &group);

} // namespace ember::collective

#endif // EMBER_COMM_KERNELS_POOLED_ALL_TO_ALL_LAYOUT_H
