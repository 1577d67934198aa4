//===- shape_strided_copy.cpp - Copy a strided view into a dense tensor ---===//
#include "kernels/cpu/shape_strided_copy.h"

#include "kernels/shared/dense_common.h"

#include <cstring>

namespace ember::cpu {
namespace {

template <typename T>
void copySpan(const char *in, int64_t stride, char *out, int64_t n) {
  const T *src = reinterpret_cast<const T *>(in);
  T *dst = reinterpret_cast<T *>(out);
  for (int64_t i = 0; i < n; ++i)
    dst[i] = src[i * stride];
}

} // namespace

void stridedCopy(KernelContext &ctx, const void *in, int64_t inBase,
                 const int64_t *inStrides, void *out, const Shape &outShape,
                 size_t elemSize) {
  if (outShape.numel() == 0)
    return;
  // Drop size-1 dims and merge dims that are contiguous in the input.
  int64_t dims[Shape::kMaxRank], strides[Shape::kMaxRank];
  int rank = 0;
  for (int i = 0; i < outShape.rank(); ++i) {
    if (outShape[i] == 1)
      continue;
    if (rank > 0 && strides[rank - 1] == inStrides[i] * outShape[i]) {
      dims[rank - 1] *= outShape[i];
      strides[rank - 1] = inStrides[i];
      continue;
    }
    dims[rank] = outShape[i];
    strides[rank] = inStrides[i];
    ++rank;
  }
  if (rank == 0) {
    dims[0] = 1;
    strides[0] = 0;
    rank = 1;
  }
  int64_t inner = dims[rank - 1], innerStride = strides[rank - 1];
  int64_t rows = 1;
  for (int i = 0; i < rank - 1; ++i)
    rows *= dims[i];
  const char *src = static_cast<const char *>(in);
  char *dst = static_cast<char *>(out);
  int64_t es = static_cast<int64_t>(elemSize);
  parallelFor(
      ctx, rows, grainFor(inner * es, 1 << 16), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          int64_t off = inBase, rem = r;
          for (int i = rank - 2; i >= 0; --i) {
            off += (rem % dims[i]) * strides[i];
            rem /= dims[i];
          }
          const char *s = src + off * es;
          char *d = dst + r * inner * es;
          if (innerStride == 1) {
            std::memcpy(d, s, static_cast<size_t>(inner * es));
            continue;
          }
          switch (elemSize) {
          case 1:
            copySpan<uint8_t>(s, innerStride, d, inner);
            break;
          case 2:
            copySpan<uint16_t>(s, innerStride, d, inner);
            break;
          case 4:
            copySpan<uint32_t>(s, innerStride, d, inner);
            break;
          case 8:
            copySpan<uint64_t>(s, innerStride, d, inner);
            break;
          default:
            for (int64_t i = 0; i < inner; ++i)
              std::memcpy(d + i * es, s + i * innerStride * es, elemSize);
          }
        }
      });
}

} // namespace ember::cpu
