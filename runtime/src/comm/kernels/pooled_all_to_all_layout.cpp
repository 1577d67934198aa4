//===- pooled_all_to_all_layout.cpp - pooled_all_to_all's layout ----------===//
#include "comm/kernels/pooled_all_to_all_layout.h"

#include <algorithm>
#include <numeric>

namespace ember::collective {

Result<std::vector<PooledSegment>>
pooledSegments(const Attributes &attrs, const std::vector<int64_t> &dims) {
  std::vector<PooledSegment> segments;
  const bool hasWidths = attrs.has("segment_dims"),
             hasColumns = attrs.has("segment_columns");
  if (!hasWidths && !hasColumns) {
    int64_t column = 0;
    for (size_t q = 0; q < dims.size(); ++q) {
      if (dims[q] > 0)
        segments.push_back({static_cast<int>(q), 0, dims[q], column});
      column += dims[q];
    }
    return segments;
  }
  if (!hasWidths || !hasColumns)
    return invalidArgument(
        std::string("attributes 'segment_dims' and 'segment_columns' go "
                    "together, but only '") +
        (hasWidths ? "segment_dims" : "segment_columns") + "' is given");
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> widths,
                         attrs.getInts("segment_dims"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> columns,
                         attrs.getInts("segment_columns"));
  if (widths.size() != columns.size())
    return invalidArgument("attribute 'segment_dims' has " +
                           std::to_string(widths.size()) +
                           " entries but 'segment_columns' has " +
                           std::to_string(columns.size()));
  int64_t total = 0;
  for (int64_t d : dims)
    total += d;
  size_t s = 0;
  for (size_t q = 0; q < dims.size(); ++q) {
    int64_t column = 0;
    while (column < dims[q]) {
      if (s == widths.size())
        return invalidArgument(
            "attribute 'segment_dims' ends at position " + std::to_string(q) +
            "'s column " + std::to_string(column) + " of its " +
            std::to_string(dims[q]) + " (dim_per_rank)");
      const int64_t width = widths[s];
      if (width <= 0 || width > dims[q] - column)
        return invalidArgument(
            "attribute 'segment_dims'[" + std::to_string(s) +
            "] = " + std::to_string(width) + " does not fit position " +
            std::to_string(q) + "'s columns (" +
            std::to_string(dims[q] - column) + " of its dim_per_rank " +
            std::to_string(dims[q]) + " left)");
      if (columns[s] < 0 || columns[s] > total - width)
        return invalidArgument(
            "attribute 'segment_columns'[" + std::to_string(s) +
            "] = " + std::to_string(columns[s]) + ": segment " +
            std::to_string(s) + " of " + std::to_string(width) +
            " columns would leave the output's " + std::to_string(total));
      segments.push_back({static_cast<int>(q), column, width, columns[s]});
      column += width;
      ++s;
    }
  }
  if (s != widths.size())
    return invalidArgument("attribute 'segment_dims' has " +
                           std::to_string(widths.size()) +
                           " segments but the positions' columns end after " +
                           std::to_string(s));
  // In range, and the widths sum to the total: no overlap means an exact
  // tiling.
  std::vector<size_t> order(segments.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // By output column, ties in wire order (std::sort with the index as the
  // tie-break: libstdc++'s stable_sort buffer is deprecated under clang 22).
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return segments[a].outputColumn < segments[b].outputColumn ||
           (segments[a].outputColumn == segments[b].outputColumn && a < b);
  });
  std::vector<PooledSegment> sorted;
  sorted.reserve(segments.size());
  for (size_t k = 0; k < order.size(); ++k) {
    const PooledSegment &seg = segments[order[k]];
    if (k > 0) {
      const PooledSegment &prev = sorted.back();
      if (seg.outputColumn < prev.outputColumn + prev.width)
        return invalidArgument(
            "attribute 'segment_columns': segments " +
            std::to_string(order[k - 1]) + " and " + std::to_string(order[k]) +
            " overlap (output columns [" + std::to_string(prev.outputColumn) +
            ", " + std::to_string(prev.outputColumn + prev.width) + ") and [" +
            std::to_string(seg.outputColumn) + ", " +
            std::to_string(seg.outputColumn + seg.width) + "))");
    }
    sorted.push_back(seg);
  }
  return sorted;
}

std::vector<int64_t> pooledUnpackTable(const std::vector<PooledSegment> &segments,
                                       const std::vector<int64_t> &dims,
                                       int64_t bMe) {
  const size_t n = segments.size();
  const std::vector<int64_t> colOff = prefixSums(dims);
  std::vector<int64_t> table(3 * n + 1);
  for (size_t s = 0; s < n; ++s) {
    const PooledSegment &seg = segments[s];
    table[s] = seg.outputColumn;
    table[n + 1 + s] = bMe * colOff[seg.position] + seg.sourceColumn;
    table[2 * n + 1 + s] = dims[seg.position];
  }
  table[n] = colOff.back();
  return table;
}

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
  auto segmentsOr = pooledSegments(ctx.attrs(), dims);
  if (!segmentsOr)
    return segmentsOr.status().withContext(where);
  layout.segments = std::move(*segmentsOr);
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
