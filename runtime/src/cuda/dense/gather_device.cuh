//===- gather_device.cuh - gather / gather_elements per-element code -*- C++
//-*-===//
//
// A thread per output element. An index outside [-dim, dim) is not read
// through: the element is written as zero and the function returns false
// with the index and its position, so the kernel can raise
// DeviceErrorCode::kIndexOutOfRange (the run then fails with OutOfRange, as
// the CPU kernel does before writing anything).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_DENSE_GATHER_DEVICE_CUH
#define EMBER_CUDA_DENSE_GATHER_DEVICE_CUH

#include "cuda/host_device.h"

#include <cstdint>

namespace ember::cuda::dense {

EMBER_HD_INLINE int64_t loadIndex(const void *indices, bool wide, int64_t i) {
  return wide ? static_cast<const int64_t *>(indices)[i]
              : static_cast<int64_t>(static_cast<const int32_t *>(indices)[i]);
}

/// gather: output [outer, n, inner] (n = indices.numel()); element u.
template <typename T>
EMBER_HD_INLINE bool gatherElement(const T *data, const void *indices,
                                   bool wide, int64_t n, int64_t inner,
                                   int64_t axisDim, T *out, int64_t u,
                                   int64_t &badIndex, int64_t &badPosition) {
  int64_t t = u % inner, row = u / inner;
  int64_t j = row % n, o = row / n;
  int64_t idx = loadIndex(indices, wide, j);
  if (idx < -axisDim || idx >= axisDim) {
    out[u] = T();
    badIndex = idx;
    badPosition = j;
    return false;
  }
  if (idx < 0)
    idx += axisDim;
  out[u] = data[(o * axisDim + idx) * inner + t];
  return true;
}

/// gather_elements: output (= indices) shape `dims` (rank dims), data
/// strides `dataStrides`; element u.
template <typename T>
EMBER_HD_INLINE bool gatherElementsElement(const T *data, const void *indices,
                                           bool wide, const int64_t *dims,
                                           const int64_t *dataStrides, int rank,
                                           int axis, int64_t axisDim, T *out,
                                           int64_t u, int64_t &badIndex) {
  int64_t rem = u, off = 0;
  for (int k = rank - 1; k >= 0; --k) {
    int64_t c = rem % dims[k];
    rem /= dims[k];
    if (k == axis) {
      c = loadIndex(indices, wide, u);
      if (c < -axisDim || c >= axisDim) {
        out[u] = T();
        badIndex = c;
        return false;
      }
      if (c < 0)
        c += axisDim;
    }
    off += c * dataStrides[k];
  }
  out[u] = data[off];
  return true;
}

} // namespace ember::cuda::dense

#endif // EMBER_CUDA_DENSE_GATHER_DEVICE_CUH
