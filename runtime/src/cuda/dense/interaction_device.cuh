//===- interaction_device.cuh - dot_interaction per-thread code -*- C++ -*-===//
//
// dot_interaction on the GPU is one fused kernel (interaction.cu): a block
// per sample copies the sample's F+1 rows (dense row, then the F pooled
// embeddings) into shared memory with a padded row stride, then each thread
// computes output columns: col < D copies the dense row, column D + p is
// the dot product of the pair p. interactionPair maps p to (i, j) in the CPU
// kernel's order (kernels/cpu/interaction_kernels.cpp):
//   dlrm:     for i, for j in [0, i - diag]   (lower triangle, row by row)
//   torchrec: for i, for j in [i + diag, n)   (upper triangle, row by row)
// with diag = 0 under self_interaction, else 1; n = F + 1.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_DENSE_INTERACTION_DEVICE_CUH
#define EMBER_CUDA_DENSE_INTERACTION_DEVICE_CUH

#include "cuda/host_device.h"

#include <cmath>
#include <cstdint>

namespace ember::cuda::dense {

/// Number of pairs of n rows.
EMBER_HD_INLINE int64_t interactionPairs(int64_t n, bool self) {
  return self ? n * (n + 1) / 2 : n * (n - 1) / 2;
}

/// First pair index of row i (dlrm order).
EMBER_HD_INLINE int64_t dlrmRowStart(int64_t i, bool self) {
  return self ? i * (i + 1) / 2 : i * (i - 1) / 2;
}

/// First pair index of row i (torchrec order); m = n - diag.
EMBER_HD_INLINE int64_t torchrecRowStart(int64_t i, int64_t m) {
  return i * m - i * (i - 1) / 2;
}

/// Pair p (0 <= p < interactionPairs(n, self)) -> rows (i, j) of the Gram
/// matrix. A floating-point estimate of the row, then exact integer fix-ups.
EMBER_HD_INLINE void interactionPair(int64_t p, int64_t n, bool self,
                                     bool torchrecOrder, int64_t &i,
                                     int64_t &j) {
  int64_t diag = self ? 0 : 1;
  if (!torchrecOrder) {
    double s = sqrt(1.0 + 8.0 * static_cast<double>(p));
    i = static_cast<int64_t>(self ? (s - 1.0) / 2.0 : (s + 1.0) / 2.0);
    if (i > n - 1)
      i = n - 1;
    if (i < 0)
      i = 0;
    while (i > 0 && dlrmRowStart(i, self) > p)
      --i;
    while (i + 1 < n && dlrmRowStart(i + 1, self) <= p)
      ++i;
    j = p - dlrmRowStart(i, self);
    return;
  }
  int64_t m = n - diag;
  double b = 2.0 * static_cast<double>(m) + 1.0;
  double disc = b * b - 8.0 * static_cast<double>(p);
  i = static_cast<int64_t>((b - sqrt(disc > 0 ? disc : 0.0)) / 2.0);
  if (i > m - 1)
    i = m - 1;
  if (i < 0)
    i = 0;
  while (i > 0 && torchrecRowStart(i, m) > p)
    --i;
  while (i + 1 < m && torchrecRowStart(i + 1, m) <= p)
    ++i;
  j = i + diag + (p - torchrecRowStart(i, m));
}

/// Output column `col` of one sample: row 0 is `denseRow`, row r >= 1 is
/// sparseRows + (r - 1) * ld (ld = D in global memory, D + 1 in the padded
/// shared-memory tile).
EMBER_HD_INLINE float interactionValue(const float *denseRow,
                                       const float *sparseRows, int64_t ld,
                                       int64_t n, int64_t d, bool self,
                                       bool torchrecOrder, int64_t col) {
  if (col < d)
    return denseRow[col];
  int64_t i, j;
  interactionPair(col - d, n, self, torchrecOrder, i, j);
  const float *a = i == 0 ? denseRow : sparseRows + (i - 1) * ld;
  const float *b = j == 0 ? denseRow : sparseRows + (j - 1) * ld;
  float s = 0.f;
  for (int64_t k = 0; k < d; ++k)
    s += a[k] * b[k];
  return s;
}

/// The shared-memory tile of one sample: row r at tile + r * (d + 1).
EMBER_HD_INLINE void interactionLoadTile(const float *dense,
                                         const float *sparse, int64_t n,
                                         int64_t d, float *tile, int64_t e) {
  int64_t r = e / d, k = e % d;
  tile[r * (d + 1) + k] = r == 0 ? dense[k] : sparse[(r - 1) * d + k];
}

} // namespace ember::cuda::dense

#endif // EMBER_CUDA_DENSE_INTERACTION_DEVICE_CUH
