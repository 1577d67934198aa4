//===- interaction_kernels.cpp - dot_interaction (DLRM) -------------------===//
//
// Inputs dense [B, D] and sparse [B, F*D] (F pooled embeddings per sample);
// T = concat(dense, sparse) seen as [B, F+1, D] and Z = T·Tᵀ per sample.
// Output [B, D + P] = concat(dense, the pairs of Z):
//   pair_order "dlrm" (default; the DLRM reference's li/lj):
//     for i in 0..F, for j in 0..i-1 (self_interaction: 0..i): Z[i][j]
//   pair_order "torchrec" (TorchRec InteractionArch's triu_indices(offset=1)):
//     for i in 0..F, for j in i+1..F (self_interaction: i..F): Z[i][j]
// P = (F+1)F/2, or (F+1)(F+2)/2 with self_interaction. Z is symmetric, so
// both orders hold the same values; their order differs once F >= 3 (F >= 2
// with self_interaction). Each dot product is computed once, directly.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/interaction_shape.h"

#include <cstring>

namespace ember::cpu {
namespace {

/// Dot product with 16 independent partial sums (vectorizes without
/// reassociation flags: two 8-wide registers with AVX2).
__attribute__((always_inline)) inline float dot(const float *a, const float *b,
                                                int64_t n) {
  float acc[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int l = 0; l < 16; ++l)
      acc[l] += a[i + l] * b[i + l];
  for (int l = 0; l < 8; ++l)
    acc[l] += acc[l + 8];
  float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
            ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i)
    s += a[i] * b[i];
  return s;
}

/// One sample: copies the dense row and writes its pairs. (Register-blocking
/// four partners per load of row i was tried and did not vectorize: 5x
/// slower.)
__attribute__((always_inline)) inline void
interactSample(const float *denseRow, const float *sparseRow, int64_t n,
               int64_t d, bool self, bool torchrecOrder, float *y) {
  auto row = [&](int64_t i) {
    return i == 0 ? denseRow : sparseRow + (i - 1) * d;
  };
  if (d > 0)
    std::memcpy(y, denseRow, static_cast<size_t>(d) * sizeof(float));
  float *z = y + d;
  int64_t diag = self ? 0 : 1;
  for (int64_t i = 0; i < n; ++i) {
    // dlrm: j in [0, i - diag]; torchrec: j in [i + diag, n). Ascending j.
    int64_t jb = torchrecOrder ? i + diag : 0,
            je = torchrecOrder ? n : i - diag + 1;
    const float *a = row(i);
    for (int64_t j = jb; j < je; ++j)
      *z++ = dot(a, row(j), d);
  }
}

struct InteractionJob {
  const float *dense, *sparse;
  float *out;
  int64_t n, d, width;
  bool self, torchrecOrder;
};

void interactSamples(const InteractionJob &job, int64_t b0, int64_t b1) {
  for (int64_t s = b0; s < b1; ++s)
    interactSample(job.dense + s * job.d, job.sparse + s * (job.n - 1) * job.d,
                   job.n, job.d, job.self, job.torchrecOrder,
                   job.out + s * job.width);
}

/// The same loop compiled for AVX2 + FMA; chosen once per process when the
/// CPU has both, so a machine always computes the same bits.
__attribute__((target("avx2,fma"))) void
interactSamplesAvx2(const InteractionJob &job, int64_t b0, int64_t b1) {
  for (int64_t s = b0; s < b1; ++s)
    interactSample(job.dense + s * job.d, job.sparse + s * (job.n - 1) * job.d,
                   job.n, job.d, job.self, job.torchrecOrder,
                   job.out + s * job.width);
}

bool cpuHasAvx2Fma() {
  static const bool has =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

Status dotInteractionKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(InteractionShape s, interactionShape(ctx));
  const Tensor &dense = ctx.input(0), &sparse = ctx.input(1);
  const bool self = s.self, torchrecOrder = s.torchrecOrder;
  const int64_t b = s.batch, d = s.dim, n = s.rows, pairs = s.pairs;
  EMBER_ASSIGN_OR_RETURN(const float *pd,
                         floatInput(ctx, dense, "dot_interaction: dense"));
  EMBER_ASSIGN_OR_RETURN(const float *ps,
                         floatInput(ctx, sparse, "dot_interaction: sparse"));
  int64_t width = d + pairs;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, DType::kFloat32, {b, width}));
  float *o = out->data<float>();
  InteractionJob job{pd, ps, o, n, d, width, self, torchrecOrder};
  bool avx2 = cpuHasAvx2Fma();
  parallelFor(ctx, b, grainFor(pairs * d + d), [&](int64_t b0, int64_t b1) {
    if (avx2)
      interactSamplesAvx2(job, b0, b1);
    else
      interactSamples(job, b0, b1);
  });
  return Status::ok();
}

} // namespace

Status registerInteractionKernels(KernelRegistry &registry) {
  return addKernels(
      registry, {{"dot_interaction", dotInteractionKernel, validateInteraction,
                  "DLRM dot interaction: [B,D] + [B,F*D] -> [B, D + pairs]"}});
}

} // namespace ember::cpu
