//===- kjt_view.h - A keyed jagged tensor's inputs, checked ----*- C++ -*-===//
//
// The KJT kernels take a KJT as up to three consecutive inputs: values [N]
// (any dtype, usually int32/int64 ids), lengths [F*B] (int32/int64,
// key-major: the B lengths of key 0, then key 1, ...) and optional weights
// [N] (any dtype, usually float32). KjtView checks them and holds the
// int64 offsets of every (key, sample) segment.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_KJT_VIEW_H
#define EMBER_KERNELS_SHARED_KJT_VIEW_H

#include "ember/status.h"
#include "ember/tensor.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ember {
class KernelContext;
}

namespace ember::jagged {

struct KjtView {
  Tensor values, lengths, weights; // weights may be undefined
  int64_t numKeys = 0, batchSize = 0;
  std::vector<int64_t> offsets; // numKeys * batchSize + 1 entries

  bool weighted() const { return weights.defined(); }
  /// First value of key k (its segment is [keyBegin(k), keyBegin(k + 1))).
  int64_t keyBegin(int64_t k) const { return offsets[k * batchSize]; }
  size_t valueBytes() const { return dtypeSize(values.dtype()); }
  size_t weightBytes() const {
    return weighted() ? dtypeSize(weights.dtype()) : 0;
  }
};

/// Checks the KJT's inputs at first, first+1, first+2 (dims, dtypes, the
/// number of keys and samples) without reading their data: `offsets` stays
/// empty. The CUDA kernels use it for device tensors.
Result<KjtView> checkKjt(const KernelContext &ctx, int first, int64_t numKeys,
                         int64_t batchSize, const std::string &what);

/// Reads the KJT at inputs first, first+1, first+2 (weights optional: absent
/// when first+2 is past the inputs or undefined). Exactly one of numKeys and
/// batchSize must be positive (or batchSize 0 with empty lengths); the other
/// is derived from lengths.numel(). `what` names the KJT in errors.
Result<KjtView> readKjt(const KernelContext &ctx, int first, int64_t numKeys,
                        int64_t batchSize, const std::string &what);

/// memcpy that accepts empty (possibly null) ranges.
inline void copyBytes(void *dst, const void *src, size_t n) {
  if (n > 0)
    std::memcpy(dst, src, n);
}

/// Allocates output `index` with `dtype` and `numel` elements (1-D) and
/// returns its data.
Result<uint8_t *> allocateVector(KernelContext &ctx, int index, DType dtype,
                                 int64_t numel);

} // namespace ember::jagged

#endif // EMBER_KERNELS_SHARED_KJT_VIEW_H
