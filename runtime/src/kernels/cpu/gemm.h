//===- gemm.h - float32 GEMM with a fused bias/activation epilogue -*- C++
//-*-===//
//
// C[m, n] = A[m, k] · op(B) (+ bias[n]) then activation, row-major, through
// OpenBLAS cblas_sgemm. op(B) is B[k, n] or, with transB, B[n, k]ᵀ.
//
// Threading: by default (GemmThreading::kRuntimePool) OpenBLAS runs
// single-threaded and the runtime's pool splits C into row blocks (or column
// blocks when m <= 32) whose sizes depend on the shape only, so any thread
// count gives bit-identical results; each block's bias and activation are
// applied right after its GEMM while it is still in cache, and concurrent
// Session::run calls never oversubscribe the cores. GemmThreading::kOpenBlas
// instead sets OpenBLAS's own pool to the runtime pool's size and calls sgemm
// once (kept for measurement; see docs/kernels-dense.md for the numbers).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_CPU_GEMM_H
#define EMBER_KERNELS_CPU_GEMM_H

#include "kernels/shared/elementwise_activation.h"

#include <cstdint>

namespace ember {
class ThreadPool;
namespace cpu {

enum class GemmThreading { kRuntimePool, kOpenBlas };

/// Process-wide choice (default kRuntimePool).
void setGemmThreading(GemmThreading mode);
GemmThreading gemmThreading();

struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const float *a = nullptr; // [m, k], leading dimension lda
  int64_t lda = 0;
  const float *b = nullptr; // [k, n] (ldb) or, with transB, [n, k] (ldb)
  int64_t ldb = 0;
  bool transB = false;
  float *c = nullptr; // [m, n], leading dimension ldc
  int64_t ldc = 0;
  const float *bias = nullptr; // [n] or nullptr
  Activation activation = Activation::kNone;
};

/// A linear layer's GEMM on dense row-major operands: y [m, n] = x [m, k] · W
/// (+ bias [n]) then act, W [n, k] when transposeWeight (torch's layout) else
/// [k, n].
inline GemmArgs linearGemm(int64_t m, int64_t n, int64_t k,
                           bool transposeWeight, const float *x, const float *w,
                           const float *bias, float *y,
                           Activation act = Activation::kNone) {
  GemmArgs g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = x;
  g.lda = k;
  g.b = w;
  g.ldb = transposeWeight ? k : n;
  g.transB = transposeWeight;
  g.c = y;
  g.ldc = n;
  g.bias = bias;
  g.activation = act;
  return g;
}

/// Runs the GEMM and its epilogue. `pool` may be nullptr: everything then runs
/// on the calling thread (used when the caller parallelizes over batches).
void runGemm(ThreadPool *pool, const GemmArgs &args);

} // namespace cpu
} // namespace ember

#endif // EMBER_KERNELS_CPU_GEMM_H
