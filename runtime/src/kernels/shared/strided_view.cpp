//===- strided_view.cpp - slice and transpose as strided views ------------===//
#include "kernels/shared/strided_view.h"

#include "kernels/shared/dense_common.h"

#include <algorithm>
#include <string>

namespace ember::cpu {

Status validateSlice(const Attributes &attrs, int, int) {
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *starts,
                         findInts(attrs, "starts"));
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *ends,
                         findInts(attrs, "ends"));
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *axes,
                         findInts(attrs, "axes"));
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *steps,
                         findInts(attrs, "steps"));
  if (!starts || !ends)
    return invalidArgument("slice needs attributes 'starts' and 'ends'");
  size_t n = starts->size();
  if (ends->size() != n || (axes && axes->size() != n) ||
      (steps && steps->size() != n))
    return invalidArgument(
        "attributes 'starts', 'ends', 'axes' and 'steps' of slice "
        "must have the same length");
  if (steps)
    for (int64_t s : *steps)
      if (s == 0)
        return invalidArgument("attribute 'steps' of slice contains 0");
  return Status::ok();
}

Status validateTranspose(const Attributes &attrs, int, int) {
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *perm,
                         findInts(attrs, "perm"));
  if (!perm)
    return Status::ok();
  int64_t n = static_cast<int64_t>(perm->size());
  bool seen[Shape::kMaxRank] = {};
  bool ok = n <= Shape::kMaxRank;
  for (int64_t i = 0; ok && i < n; ++i) {
    int64_t p = (*perm)[i];
    ok = p >= 0 && p < n && !seen[p];
    if (ok)
      seen[p] = true;
  }
  if (!ok)
    return invalidArgument("attribute 'perm' is not a permutation of 0.." +
                           std::to_string(n - 1));
  return Status::ok();
}

Result<StridedView> sliceView(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateSlice(ctx.attrs(), 0, 0)));
  const Attributes &attrs = ctx.attrs();
  const std::vector<int64_t> &starts = **findInts(attrs, "starts");
  const std::vector<int64_t> &ends = **findInts(attrs, "ends");
  const std::vector<int64_t> *axes = *findInts(attrs, "axes");
  const std::vector<int64_t> *steps = *findInts(attrs, "steps");
  int rank = x.rank();
  int64_t inStrides[Shape::kMaxRank], strides[Shape::kMaxRank],
      dims[Shape::kMaxRank];
  contiguousStrides(x.shape(), inStrides);
  for (int k = 0; k < rank; ++k) {
    dims[k] = x.dim(k);
    strides[k] = inStrides[k];
  }
  bool seen[Shape::kMaxRank] = {};
  int64_t base = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (!axes && i >= static_cast<size_t>(rank))
      return kernelError(ctx, "slice: " + std::to_string(starts.size()) +
                                  " starts for x " + x.describe());
    EMBER_ASSIGN_OR_RETURN(
        int axis,
        normalizeAxis(ctx, axes ? (*axes)[i] : int64_t(i), rank, "axes"));
    if (seen[axis])
      return kernelError(ctx,
                         "slice: axis " + std::to_string(axis) + " repeats");
    seen[axis] = true;
    int64_t dim = x.dim(axis), step = steps ? (*steps)[i] : 1;
    int64_t start = starts[i], end = ends[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    int64_t len;
    if (dim == 0) {
      len = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      len = end > start ? (end - start - 1) / step + 1
                        : 0; // no overflow for huge steps
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      uint64_t magnitude =
          uint64_t{0} - static_cast<uint64_t>(step); // |step|, INT64_MIN too
      len = start > end
                ? static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) /
                                       magnitude) +
                      1
                : 0;
    }
    dims[axis] = len;
    // With one element the step is irrelevant (and a huge one would overflow).
    strides[axis] = len > 1 ? inStrides[axis] * step : 0;
    if (len > 0)
      base += start * inStrides[axis];
  }
  StridedView view;
  EMBER_ASSIGN_OR_RETURN(view.shape, Shape::fromDims(dims, rank));
  view.base = base;
  for (int k = 0; k < rank; ++k)
    view.strides[k] = strides[k];
  return view;
}

Result<StridedView> transposeView(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateTranspose(ctx.attrs(), 0, 0)));
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *perm,
                         findInts(ctx.attrs(), "perm"));
  int rank = x.rank();
  int64_t p[Shape::kMaxRank];
  if (perm) {
    bool seen[Shape::kMaxRank] = {};
    bool ok = static_cast<int>(perm->size()) == rank;
    for (int k = 0; ok && k < rank; ++k) {
      p[k] = (*perm)[k];
      ok = p[k] >= 0 && p[k] < rank && !seen[p[k]];
      if (ok)
        seen[p[k]] = true;
    }
    if (!ok)
      return kernelError(
          ctx, "transpose: attribute 'perm' is not a permutation of the " +
                   std::to_string(rank) + " dims of " + x.describe());
  } else {
    for (int k = 0; k < rank; ++k)
      p[k] = rank - 1 - k;
  }
  int64_t inStrides[Shape::kMaxRank], strides[Shape::kMaxRank],
      dims[Shape::kMaxRank];
  contiguousStrides(x.shape(), inStrides);
  for (int k = 0; k < rank; ++k) {
    dims[k] = x.dim(static_cast<int>(p[k]));
    strides[k] = inStrides[p[k]];
  }
  StridedView view;
  EMBER_ASSIGN_OR_RETURN(view.shape, Shape::fromDims(dims, rank));
  for (int k = 0; k < rank; ++k)
    view.strides[k] = strides[k];
  return view;
}

} // namespace ember::cpu
