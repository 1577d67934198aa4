//===- gemm_kernels.cpp - linear, matmul ----------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/cpu/gemm.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/broadcast.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/gemm_shapes.h"

#include <string>

namespace ember::cpu {
namespace {

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

Status linearKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(LinearShape s, linearShape(ctx));
  const int64_t n = s.n, k = s.k;
  EMBER_ASSIGN_OR_RETURN(const float *px, floatInput(ctx, *s.x, "linear: x"));
  EMBER_ASSIGN_OR_RETURN(const float *pw,
                         floatInput(ctx, *s.weight, "linear: weight"));
  const float *pb = nullptr;
  if (s.bias) {
    EMBER_ASSIGN_OR_RETURN(pb, floatInput(ctx, *s.bias, "linear: bias"));
  }

  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, DType::kFloat32, s.outShape));
  runGemm(&ctx.threadPool(), linearGemm(s.m, n, k, s.transposeWeight, px, pw,
                                        pb, out->data<float>(), s.activation));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

/// Runs one GEMM per broadcast batch. Batch b of a starts at
/// aBatchOffset(b) * m * k (likewise for b). Parallelizes over batches when
/// there are many small ones, inside each GEMM otherwise.
Status batchedGemm(KernelContext &ctx, const BroadcastLayout &batches,
                   int64_t numBatches, const float *a, const float *b, float *c,
                   int64_t m, int64_t n, int64_t k) {
  if (numBatches == 0 || m == 0 || n == 0)
    return Status::ok();
  int last = batches.rank - 1;
  int64_t inner = batches.inner();
  auto one = [&](int64_t batch, ThreadPool *pool) {
    int64_t off[kMaxBroadcastOperands];
    batches.rowOffsets(batch / inner, off);
    int64_t col = batch % inner;
    runGemm(pool,
            linearGemm(m, n, k, /*transposeWeight=*/false,
                       a + (off[0] + col * batches.strides[0][last]) * m * k,
                       b + (off[1] + col * batches.strides[1][last]) * k * n,
                       /*bias=*/nullptr, c + batch * m * n));
  };
  int threads = ctx.threadPool().size();
  double perBatch = 2.0 * double(m) * double(n) * double(k > 0 ? k : 1);
  bool acrossBatches = gemmThreading() == GemmThreading::kRuntimePool &&
                       numBatches >= threads && perBatch < 4e6;
  if (acrossBatches) {
    parallelFor(ctx, numBatches,
                grainFor(static_cast<int64_t>(perBatch), 1 << 20),
                [&](int64_t b0, int64_t b1) {
                  for (int64_t i = b0; i < b1; ++i)
                    one(i, nullptr);
                });
  } else {
    for (int64_t i = 0; i < numBatches; ++i)
      one(i, &ctx.threadPool());
  }
  return Status::ok();
}

Status matmulKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(MatmulShape s, matmulShape(ctx));
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  EMBER_ASSIGN_OR_RETURN(const float *pa, floatInput(ctx, a, "matmul: a"));
  EMBER_ASSIGN_OR_RETURN(const float *pb, floatInput(ctx, b, "matmul: b"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, DType::kFloat32, s.outShape));
  BroadcastLayout layout = makeBroadcastLayout(s.batch, s.batchShapes, 2);
  return batchedGemm(ctx, layout, s.batch.numel(), pa, pb, out->data<float>(),
                     s.m, s.n, s.k);
}

} // namespace

Status registerGemmKernels(KernelRegistry &registry) {
  return addKernels(
      registry,
      {
          {"linear", linearKernel, validateLinear,
           "x[M,K] · weight[N,K]ᵀ (+ bias[N]) then activation (OpenBLAS "
           "sgemm)"},
          {"matmul", matmulKernel, nullptr,
           "ONNX MatMul: [..., M, K] · [..., K, N] with broadcast batch dims"},
      });
}

} // namespace ember::cpu
