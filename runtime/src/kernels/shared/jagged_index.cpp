//===- jagged_index.cpp - Reading and checking index tensors --------------===//
#include "kernels/shared/jagged_index.h"

namespace ember::jagged {

Status checkIndexVector(const Tensor &t, std::string_view what,
                        const std::string &where) {
  if (!t.defined())
    return errorAt(StatusCode::kInvalidArgument, where,
                   std::string(what) + " is required but absent");
  if (t.rank() != 1)
    return errorAt(StatusCode::kInvalidArgument, where,
                   std::string(what) + " must be 1-D, got " + t.describe());
  if (!isIndexDType(t.dtype()))
    return errorAt(StatusCode::kInvalidArgument, where,
                   std::string(what) + " must be int32 or int64, got " +
                       t.describe());
  return Status::ok();
}

Status checkWeights(const Tensor &weights, int64_t numValues,
                    std::string_view what, const std::string &where) {
  if (!weights.defined())
    return Status::ok();
  if (weights.dtype() != DType::kFloat32 || weights.rank() != 1 ||
      weights.dim(0) != numValues)
    return errorAt(StatusCode::kInvalidArgument, where,
                   std::string(what) + " must be float32[" +
                       std::to_string(numValues) + "] (one per value), got " +
                       weights.describe());
  return Status::ok();
}

template <typename T>
static Status lengthsToOffsetsImpl(const T *lengths, int64_t k,
                                   int64_t *offsets, std::string_view what,
                                   const std::string &where) {
  int64_t sum = 0;
  offsets[0] = 0;
  for (int64_t i = 0; i < k; ++i) {
    int64_t len = lengths[i];
    if (len < 0)
      return errorAt(StatusCode::kInvalidArgument, where,
                     std::string(what) + "[" + std::to_string(i) +
                         "] is negative (" + std::to_string(len) + ")");
    sum += len;
    offsets[i + 1] = sum;
  }
  return Status::ok();
}

Status lengthsToOffsets(const Tensor &lengths, int64_t *offsets,
                        std::string_view what, const std::string &where) {
  if (lengths.dtype() == DType::kInt32)
    return lengthsToOffsetsImpl(lengths.data<int32_t>(), lengths.numel(),
                                offsets, what, where);
  return lengthsToOffsetsImpl(lengths.data<int64_t>(), lengths.numel(), offsets,
                              what, where);
}

Status normalizeBagOffsets(const Tensor &offsets, int64_t numValues,
                           bool includeLastOffset, int64_t *out,
                           const std::string &where) {
  int64_t numBags = numBagsOf(offsets, includeLastOffset);
  if (numBags < 0)
    return errorAt(StatusCode::kInvalidArgument, where,
                   "offsets must have at least one entry with "
                   "include_last_offset=1 (B + 1 entries for B bags)");
  if (numBags == 0 && !includeLastOffset) { // offsets = []: no bags
    out[0] = 0;
    return Status::ok();
  }
  int64_t prev = 0;
  for (int64_t b = 0; b <= numBags; ++b) {
    int64_t o = (b < offsets.numel()) ? indexAt(offsets, b) : numValues;
    if (b == 0 && o != 0)
      return errorAt(StatusCode::kInvalidArgument, where,
                     "offsets[0] must be 0, got " + std::to_string(o));
    if (o < prev)
      return errorAt(StatusCode::kInvalidArgument, where,
                     "offsets decrease at bag " + std::to_string(b - 1) +
                         ": offsets[" + std::to_string(b - 1) +
                         "] = " + std::to_string(prev) + " > offsets[" +
                         std::to_string(b) + "] = " + std::to_string(o));
    if (o > numValues)
      return errorAt(StatusCode::kOutOfRange, where,
                     "offsets[" + std::to_string(b) +
                         "] = " + std::to_string(o) + " (end of bag " +
                         std::to_string(b - 1) + ") is past the " +
                         std::to_string(numValues) + " indices");
    out[b] = o;
    prev = o;
  }
  return Status::ok();
}

} // namespace ember::jagged
