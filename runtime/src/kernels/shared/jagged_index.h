//===- jagged_index.h - Reading and checking index tensors -----*- C++ -*-===//
//
// Helpers shared by the embedding and jagged/KJT kernels: index tensors
// (ids, lengths, offsets) are 1-D int32 or int64; these read them as int64 and
// turn lengths or offsets into validated int64 offsets, with errors that name
// the tensor and the position.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_JAGGED_INDEX_H
#define EMBER_KERNELS_SHARED_JAGGED_INDEX_H

#include "ember/status.h"
#include "ember/tensor.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace ember::jagged {

inline bool isIndexDType(DType dtype) {
  return dtype == DType::kInt32 || dtype == DType::kInt64;
}

/// Element i of an int32 or int64 tensor, as int64.
inline int64_t indexAt(const Tensor &t, int64_t i) {
  return t.dtype() == DType::kInt32 ? int64_t{t.data<int32_t>()[i]}
                                    : t.data<int64_t>()[i];
}

/// Checks that `t` is defined, 1-D and int32 or int64. `what` names it
/// ("input 1 (indices)"); `where` is the kernel's location.
Status checkIndexVector(const Tensor &t, std::string_view what,
                        const std::string &where);

/// Checks an optional per-value weights input: absent, or 1-D float32 with
/// `numValues` elements.
Status checkWeights(const Tensor &weights, int64_t numValues,
                    std::string_view what, const std::string &where);

/// Writes the exclusive cumulative sum of `lengths` (K entries) to
/// offsets[0..K] (offsets[0] = 0). Fails on a negative length, naming its
/// position.
Status lengthsToOffsets(const Tensor &lengths, int64_t *offsets,
                        std::string_view what, const std::string &where);

/// Validates PyTorch-style bag offsets against `numValues` ids and writes
/// numBags + 1 int64 offsets to `out` (numBags = offsets.numel() - 1 when
/// includeLastOffset, else offsets.numel(), the last bag then ending at
/// numValues). Offsets must start at 0, be non-decreasing and end at most at
/// numValues; errors name the bag.
Status normalizeBagOffsets(const Tensor &offsets, int64_t numValues,
                           bool includeLastOffset, int64_t *out,
                           const std::string &where);

/// Number of bags normalizeBagOffsets produces for these offsets (may be
/// negative for an empty offsets tensor with include_last_offset: an error).
inline int64_t numBagsOf(const Tensor &offsets, bool includeLastOffset) {
  return includeLastOffset ? offsets.numel() - 1 : offsets.numel();
}

/// "where: message".
inline Status errorAt(StatusCode code, const std::string &where,
                      const std::string &message) {
  return Status(code, where + ": " + message);
}

} // namespace ember::jagged

#endif // EMBER_KERNELS_SHARED_JAGGED_INDEX_H
