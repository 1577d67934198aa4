//===- norm_device.cuh - softmax / layer_norm per-lane code -----*- C++ -*-===//
//
// Row kernels (softmax along the last axis, layer_norm) give one warp to a
// row: lane l handles elements l, l + 32, ...; the lanes' partial results are
// combined with a butterfly (__shfl_xor_sync), so every lane holds the
// total. Softmax along another axis gives one thread to a column
// (softmaxColumn). The per-lane functions below are the whole arithmetic;
// they match the CPU kernels' (max-subtracted exp, double sums for
// layer_norm's two-pass mean and variance).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_DENSE_NORM_DEVICE_CUH
#define EMBER_CUDA_DENSE_NORM_DEVICE_CUH

#include "cuda/host_device.h"

#include <cmath>
#include <cstdint>

namespace ember::cuda::dense {

constexpr int kWarp = 32;

EMBER_HD_INLINE float maxOf(float a, float b) {
  // std::max semantics of the CPU loop: mx = max(mx, x) keeps mx on NaN x.
  return a < b ? b : a;
}

//===----------------------------------------------------------------------===//
// softmax
//===----------------------------------------------------------------------===//

EMBER_HD_INLINE float softmaxLaneMax(const float *x, int64_t len, int lane) {
  float mx = -INFINITY;
  for (int64_t i = lane; i < len; i += kWarp)
    mx = maxOf(mx, x[i]);
  return mx;
}

/// The row max as the kernels use it (an all -inf row uses 0, like the CPU).
EMBER_HD_INLINE float softmaxShift(float rowMax) {
  return rowMax == -INFINITY ? 0.f : rowMax;
}

/// y = exp(x - shift) for the lane's elements; returns their sum.
EMBER_HD_INLINE float softmaxLaneExp(const float *x, float *y, int64_t len,
                                     int lane, float shift) {
  float sum = 0.f;
  for (int64_t i = lane; i < len; i += kWarp) {
    float e = expf(x[i] - shift);
    y[i] = e;
    sum += e;
  }
  return sum;
}

EMBER_HD_INLINE void softmaxLaneScale(float *y, int64_t len, int lane,
                                      float inv) {
  for (int64_t i = lane; i < len; i += kWarp)
    y[i] *= inv;
}

/// Softmax over `len` elements `stride` apart (one thread per column).
EMBER_HD_INLINE void softmaxColumn(const float *x, float *y, int64_t len,
                                   int64_t stride) {
  float mx = -INFINITY;
  for (int64_t i = 0; i < len; ++i)
    mx = maxOf(mx, x[i * stride]);
  mx = softmaxShift(mx);
  float sum = 0.f;
  for (int64_t i = 0; i < len; ++i) {
    float e = expf(x[i * stride] - mx);
    y[i * stride] = e;
    sum += e;
  }
  float inv = 1.f / sum;
  for (int64_t i = 0; i < len; ++i)
    y[i * stride] *= inv;
}

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

EMBER_HD_INLINE double layerNormLaneSum(const float *x, int64_t d, int lane) {
  double s = 0;
  for (int64_t i = lane; i < d; i += kWarp)
    s += x[i];
  return s;
}

EMBER_HD_INLINE double layerNormLaneSquares(const float *x, int64_t d, int lane,
                                            float mean) {
  double s = 0;
  for (int64_t i = lane; i < d; i += kWarp) {
    double c = double(x[i]) - double(mean);
    s += c * c;
  }
  return s;
}

EMBER_HD_INLINE float layerNormMean(double sum, int64_t d) {
  return static_cast<float>(sum / double(d));
}

EMBER_HD_INLINE float layerNormRstd(double squares, int64_t d, float eps) {
  return static_cast<float>(1.0 / sqrt(squares / double(d) + double(eps)));
}

EMBER_HD_INLINE void layerNormLaneWrite(const float *x, float *y, int64_t d,
                                        int lane, float mean, float rstd,
                                        const float *gamma, const float *beta) {
  for (int64_t i = lane; i < d; i += kWarp) {
    float v = (x[i] - mean) * rstd;
    if (gamma)
      v *= gamma[i];
    if (beta)
      v += beta[i];
    y[i] = v;
  }
}

} // namespace ember::cuda::dense

#endif // EMBER_CUDA_DENSE_NORM_DEVICE_CUH
