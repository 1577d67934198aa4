//===- gemm_lt.h - float32 (batched) GEMM through cuBLASLt ------*- C++ -*-===//
//
// C[m, n] = A[m, k] · op(B) (+ bias[n]) then activation, row-major, for
// `batch` matrices `stride*` elements apart (a stride may be 0: the operand
// is shared). cuBLASLt is column-major, so it computes Cᵀ = op(B)ᵀ · Aᵀ on
// the same memory. Bias and ReLU go into cuBLASLt's epilogue (BIAS,
// RELU_BIAS, RELU); sigmoid and tanh run as one extra elementwise kernel.
// K = 0 writes act(bias) (zeros without bias).
//
// Precision: CUBLAS_COMPUTE_32F (full fp32, results within 1e-5 relative of
// the CPU). EMBER_CUDA_TF32=1 in the environment selects
// CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores, ~1e-3 relative) for the
// process.
//
// The heuristic's choice of algorithm is cached per (device, shape, layout,
// epilogue, alignment) for the process; the descriptors are made per call
// (cheap host objects), so concurrent runs never share mutable state.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_DENSE_GEMM_LT_H
#define EMBER_CUDA_DENSE_GEMM_LT_H

#include "cuda/kernel_env.h"
#include "ember/status.h"
#include "kernels/shared/broadcast.h"

#include <cstdint>
#include <vector>

namespace ember::cuda::dense {

struct LtGemm {
  int64_t m = 0, n = 0, k = 0;
  const float *a = nullptr; // [m, k], row stride lda
  int64_t lda = 0;
  const float *b = nullptr; // [k, n] (ldb) or, with transB, [n, k] (ldb)
  int64_t ldb = 0;
  bool transB = false;
  float *c = nullptr; // [m, n], row stride ldc (== n unless noted)
  int64_t ldc = 0;
  int64_t batch = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0; // elements between batches
  const float *bias = nullptr;                   // [n] or nullptr
  int activation = 0;                            // cpu::Activation
};

/// One column-major matrix as runLtGemm describes it to cuBLASLt.
struct LtMatrix {
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0, stride = 0; // stride between batches (elements)
};

/// cuBLASLt's view of a row-major LtGemm: D[n, m] = op(A)[n, k] · B[k, m]
/// (column-major) where A is the memory of g.b (transposed when transA),
/// B the memory of g.a and D the memory of g.c.
struct LtCallShape {
  bool transA = false;
  LtMatrix a, b, d;
};
LtCallShape describeLtCall(const LtGemm &g);

/// The GEMMs of C[batch] = A[batch] · B[batch] for broadcast batch dims
/// (matmul): batches folded into M when b is shared and a is
/// not broadcast, else one strided-batched GEMM per outer row of the layout.
std::vector<LtGemm> planBroadcastGemm(const cpu::BroadcastLayout &batches,
                                      int64_t numBatches, const float *a,
                                      const float *b, float *c, int64_t m,
                                      int64_t n, int64_t k);

/// linear's GEMM: y[m, n] = x[m, k] · W (+ bias) then act, W [n, k] when
/// transposeWeight (torch's layout) else [k, n].
LtGemm linearGemm(int64_t m, int64_t n, int64_t k, bool transposeWeight,
                  const float *x, const float *w, const float *bias, float *y,
                  int activation);

/// Enqueues the GEMM(s) on env.stream. `what` names the kernel in errors.
Status runLtGemm(const KernelEnv &env, const LtGemm &g, const char *what);

/// True when EMBER_CUDA_TF32=1 (read once).
bool tf32Enabled();

} // namespace ember::cuda::dense

#endif // EMBER_CUDA_DENSE_GEMM_LT_H
