//===- gemm_kernels.cpp - linear, matmul, batch_matmul on CUDA ------------===//
//
// The contracts of kernels/cpu/gemm_kernels.cpp (same shape checks and
// messages); the products run through cuBLASLt (gemm_lt.h). matmul's batch
// dims broadcast: when b has no batch of its own and a is not broadcast, the
// batches fold into M (one GEMM); otherwise one strided-batched call per row
// of the broadcast layout's outer dims (stride 0 for a shared operand).
//
//===----------------------------------------------------------------------===//
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_registration.h"
#include "cuda/dense/gemm_lt.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/dense_common.h"
#include "kernels/cpu/elementwise_activation.h"

namespace ember::cuda::dense {
namespace {

using cpu::kernelError;

Status linearKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(const KernelDef *cpuDef, cpuKernelDef("linear"));
  EMBER_RETURN_IF_ERROR(
      cpu::atLocation(ctx, cpuDef->validate(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 0, "x"));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 1, "weight"));
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  bool transposeWeight = ctx.attrs().getInt("transpose_weight", 1) != 0;
  cpu::Activation act =
      *cpu::parseActivation(ctx.attrs().getString("activation", "none"));
  if (x.rank() < 1)
    return kernelError(ctx,
                       "linear: x must have rank >= 1, got " + x.describe());
  if (w.rank() != 2)
    return kernelError(ctx,
                       "linear: weight must have rank 2, got " + w.describe());
  int64_t k = x.dim(x.rank() - 1);
  int64_t wk = transposeWeight ? w.dim(1) : w.dim(0);
  int64_t n = transposeWeight ? w.dim(0) : w.dim(1);
  if (wk != k)
    return kernelError(ctx, "linear: x " + x.describe() +
                                " has K = " + std::to_string(k) +
                                " but weight " + w.describe() +
                                (transposeWeight ? " ([N, K])" : " ([K, N])") +
                                " has K = " + std::to_string(wk));
  const Tensor *bias =
      ctx.numInputs() > 2 && ctx.input(2).defined() ? &ctx.input(2) : nullptr;
  if (bias && (bias->rank() != 1 || bias->dim(0) != n))
    return kernelError(ctx, "linear: bias must be [" + std::to_string(n) +
                                "], got " + bias->describe());
  EMBER_ASSIGN_OR_RETURN(const float *px,
                         deviceFloatInput(ctx, x, "linear: x"));
  EMBER_ASSIGN_OR_RETURN(const float *pw,
                         deviceFloatInput(ctx, w, "linear: weight"));
  const float *pb = nullptr;
  if (bias) {
    EMBER_ASSIGN_OR_RETURN(pb, deviceFloatInput(ctx, *bias, "linear: bias"));
  }
  Shape outShape = x.shape();
  outShape[x.rank() - 1] = n;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, DType::kFloat32, outShape));
  int64_t m = 1; // every dim of x but the last
  for (int i = 0; i + 1 < x.rank(); ++i)
    m *= x.dim(i);
  LtGemm g = linearGemm(m, n, k, transposeWeight, px, pw, pb,
                        out->data<float>(), static_cast<int>(act));
  return cpu::atLocation(ctx, runLtGemm(*env, g, "linear"));
}

/// C[batch] = A[batch] · op(B[batch]) for broadcast batch dims.
Status broadcastGemm(const KernelEnv &env, const cpu::BroadcastLayout &batches,
                     int64_t numBatches, const float *a, const float *b,
                     float *c, int64_t m, int64_t n, int64_t k, bool transB,
                     const char *what) {
  for (const LtGemm &g :
       planBroadcastGemm(batches, numBatches, a, b, c, m, n, k, transB))
    EMBER_RETURN_IF_ERROR(runLtGemm(env, g, what));
  return Status::ok();
}

Status matmulKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 0, "a"));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 1, "b"));
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  if (a.rank() < 1 || b.rank() < 1)
    return kernelError(ctx, "matmul: operands must have rank >= 1, got a " +
                                a.describe() + " and b " + b.describe());
  bool aVector = a.rank() == 1, bVector = b.rank() == 1;
  int64_t m = aVector ? 1 : a.dim(a.rank() - 2);
  int64_t k = a.dim(a.rank() - 1);
  int64_t kb = bVector ? b.dim(0) : b.dim(b.rank() - 2);
  int64_t n = bVector ? 1 : b.dim(b.rank() - 1);
  if (k != kb)
    return kernelError(ctx, "matmul: inner dimensions differ: a " +
                                a.describe() + " and b " + b.describe());
  Shape aBatch, bBatch;
  {
    int64_t dims[Shape::kMaxRank];
    int ra = aVector ? 0 : a.rank() - 2, rb = bVector ? 0 : b.rank() - 2;
    for (int i = 0; i < ra; ++i)
      dims[i] = a.dim(i);
    aBatch = *Shape::fromDims(dims, ra);
    for (int i = 0; i < rb; ++i)
      dims[i] = b.dim(i);
    bBatch = *Shape::fromDims(dims, rb);
  }
  Shape batchShapes[2] = {aBatch, bBatch};
  Result<Shape> batch = cpu::broadcastShapes(batchShapes, 2);
  if (!batch.isOk())
    return kernelError(ctx, "matmul: batch dims of a " + a.describe() +
                                " and b " + b.describe() + ": " +
                                batch.status().message());
  int64_t outDims[Shape::kMaxRank];
  int r = 0;
  for (int64_t d : *batch)
    outDims[r++] = d;
  if (!aVector)
    outDims[r++] = m;
  if (!bVector)
    outDims[r++] = n;
  if (r > Shape::kMaxRank)
    return kernelError(ctx, "matmul: result rank exceeds " +
                                std::to_string(Shape::kMaxRank));
  EMBER_ASSIGN_OR_RETURN(Shape outShape, Shape::fromDims(outDims, r));
  EMBER_ASSIGN_OR_RETURN(const float *pa,
                         deviceFloatInput(ctx, a, "matmul: a"));
  EMBER_ASSIGN_OR_RETURN(const float *pb,
                         deviceFloatInput(ctx, b, "matmul: b"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, DType::kFloat32, outShape));
  cpu::BroadcastLayout layout =
      cpu::makeBroadcastLayout(*batch, batchShapes, 2);
  return cpu::atLocation(ctx, broadcastGemm(*env, layout, batch->numel(), pa,
                                            pb, out->data<float>(), m, n, k,
                                            /*transB=*/false, "matmul"));
}

Status batchMatmulKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(const KernelDef *cpuDef, cpuKernelDef("batch_matmul"));
  EMBER_RETURN_IF_ERROR(
      cpu::atLocation(ctx, cpuDef->validate(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 0, "a"));
  EMBER_RETURN_IF_ERROR(cpu::requireInput(ctx, 1, "b"));
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  bool transB = ctx.attrs().getInt("transpose_b", 0) != 0;
  EMBER_RETURN_IF_ERROR(cpu::requireRank(ctx, a, "batch_matmul: a", 3));
  EMBER_RETURN_IF_ERROR(cpu::requireRank(ctx, b, "batch_matmul: b", 3));
  int64_t batches = a.dim(0), m = a.dim(1), k = a.dim(2);
  int64_t kb = transB ? b.dim(2) : b.dim(1), n = transB ? b.dim(1) : b.dim(2);
  if (b.dim(0) != batches || kb != k)
    return kernelError(ctx, std::string("batch_matmul: a ") + a.describe() +
                                " and b " + b.describe() +
                                (transB ? " ([B, N, K])" : " ([B, K, N])") +
                                " do not match");
  EMBER_ASSIGN_OR_RETURN(const float *pa,
                         deviceFloatInput(ctx, a, "batch_matmul: a"));
  EMBER_ASSIGN_OR_RETURN(const float *pb,
                         deviceFloatInput(ctx, b, "batch_matmul: b"));
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out, cpu::allocateOutput(ctx, DType::kFloat32, {batches, m, n}));
  Shape batchShapes[2] = {Shape{batches}, Shape{batches}};
  cpu::BroadcastLayout layout =
      cpu::makeBroadcastLayout(Shape{batches}, batchShapes, 2);
  return cpu::atLocation(ctx, broadcastGemm(*env, layout, batches, pa, pb,
                                            out->data<float>(), m, n, k, transB,
                                            "batch_matmul"));
}

} // namespace

Status registerGemmKernels(KernelRegistry &r) {
  const struct {
    const char *name;
    KernelFn run;
    const char *how;
  } entries[] = {
      {"linear", linearKernel, "cuBLASLt fp32, bias/relu epilogue"},
      {"matmul", matmulKernel, "cuBLASLt fp32 strided-batched"},
      {"batch_matmul", batchMatmulKernel, "cuBLASLt fp32 strided-batched"},
  };
  for (const auto &e : entries) {
    EMBER_ASSIGN_OR_RETURN(KernelDef def, cudaDefLike(e.name, e.run, e.how));
    EMBER_RETURN_IF_ERROR(r.add(std::move(def)));
  }
  return Status::ok();
}

} // namespace ember::cuda::dense
