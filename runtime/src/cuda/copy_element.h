//===- copy_element.h - Type-blind element copies in kernels ----*- C++ -*-===//
//
// dst[di] = src[si] for elements of `bytes` bytes, for kernels that move
// tensors of any dtype (KJT reorders, collectives' unpacking). Host and
// device code (EMBER_HD): the emulation tests run it on the CPU too.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_COPY_ELEMENT_H
#define EMBER_CUDA_COPY_ELEMENT_H

#include "cuda/host_device.h"

#include <cstdint>

namespace ember::cuda {

EMBER_HD_INLINE void copyElement(void *dst, int64_t di, const void *src,
                                 int64_t si, int bytes) {
  switch (bytes) {
  case 1:
    static_cast<uint8_t *>(dst)[di] = static_cast<const uint8_t *>(src)[si];
    break;
  case 2:
    static_cast<uint16_t *>(dst)[di] = static_cast<const uint16_t *>(src)[si];
    break;
  case 4:
    static_cast<uint32_t *>(dst)[di] = static_cast<const uint32_t *>(src)[si];
    break;
  case 8:
    static_cast<uint64_t *>(dst)[di] = static_cast<const uint64_t *>(src)[si];
    break;
  default:
    for (int k = 0; k < bytes; ++k)
      static_cast<uint8_t *>(dst)[di * bytes + k] =
          static_cast<const uint8_t *>(src)[si * bytes + k];
  }
}

} // namespace ember::cuda

#endif // EMBER_CUDA_COPY_ELEMENT_H
