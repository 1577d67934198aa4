//===- gemm_kernels.cpp - linear, matmul, batch_matmul --------------------===//
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/dense_common.h"
#include "kernels/cpu/dense_registration.h"
#include "kernels/cpu/gemm.h"
#include "kernels/kernel_registry.h"

#include <string>

namespace ember::cpu {
namespace {

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

Status validateLinear(const Attributes &attrs, int, int) {
  EMBER_RETURN_IF_ERROR(validateBoolAttr(attrs, "transpose_weight"));
  if (attrs.has("activation")) {
    EMBER_ASSIGN_OR_RETURN(std::string act, attrs.getString("activation"));
    if (!parseActivation(act))
      return invalidArgument(
          "attribute 'activation' must be none, relu, sigmoid or "
          "tanh, got '" +
          act + "'");
  }
  return Status::ok();
}

Status linearKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateLinear(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "weight"));
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  bool transposeWeight = ctx.attrs().getInt("transpose_weight", 1) != 0;
  Activation act =
      *parseActivation(ctx.attrs().getString("activation", "none"));

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

  EMBER_ASSIGN_OR_RETURN(const float *px, floatInput(ctx, x, "linear: x"));
  EMBER_ASSIGN_OR_RETURN(const float *pw, floatInput(ctx, w, "linear: weight"));
  const float *pb = nullptr;
  if (bias) {
    EMBER_ASSIGN_OR_RETURN(pb, floatInput(ctx, *bias, "linear: bias"));
  }

  Shape outShape = x.shape();
  outShape[x.rank() - 1] = n;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, DType::kFloat32, outShape));
  GemmArgs g;
  g.m = 1; // every dim of x but the last
  for (int i = 0; i + 1 < x.rank(); ++i)
    g.m *= x.dim(i);
  g.n = n;
  g.k = k;
  g.a = px;
  g.lda = k;
  g.b = pw;
  g.ldb = transposeWeight ? k : n;
  g.transB = transposeWeight;
  g.c = out->data<float>();
  g.ldc = n;
  g.bias = pb;
  g.activation = act;
  runGemm(&ctx.threadPool(), g);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// matmul / batch_matmul
//===----------------------------------------------------------------------===//

/// Runs one GEMM per broadcast batch. Batch b of a starts at
/// aBatchOffset(b) * m * k (likewise for b). Parallelizes over batches when
/// there are many small ones, inside each GEMM otherwise.
Status batchedGemm(KernelContext &ctx, const BroadcastLayout &batches,
                   int64_t numBatches, const float *a, const float *b, float *c,
                   int64_t m, int64_t n, int64_t k, bool transB) {
  if (numBatches == 0 || m == 0 || n == 0)
    return Status::ok();
  int last = batches.rank - 1;
  int64_t inner = batches.inner();
  auto one = [&](int64_t batch, ThreadPool *pool) {
    int64_t off[kMaxBroadcastOperands];
    batches.rowOffsets(batch / inner, off);
    int64_t col = batch % inner;
    GemmArgs g;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = a + (off[0] + col * batches.strides[0][last]) * m * k;
    g.lda = k;
    g.b = b + (off[1] + col * batches.strides[1][last]) * k * n;
    g.ldb = transB ? k : n;
    g.transB = transB;
    g.c = c + batch * m * n;
    g.ldc = n;
    runGemm(pool, g);
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
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "a"));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "b"));
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  if (a.rank() < 1 || b.rank() < 1)
    return kernelError(ctx, "matmul: operands must have rank >= 1, got a " +
                                a.describe() + " and b " + b.describe());
  // ONNX MatMul: a 1-D a is [1, K] (M dropped), a 1-D b is [K, 1] (N dropped).
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
  Result<Shape> batch = broadcastShapes(batchShapes, 2);
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
  EMBER_ASSIGN_OR_RETURN(const float *pa, floatInput(ctx, a, "matmul: a"));
  EMBER_ASSIGN_OR_RETURN(const float *pb, floatInput(ctx, b, "matmul: b"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, DType::kFloat32, outShape));
  BroadcastLayout layout = makeBroadcastLayout(*batch, batchShapes, 2);
  return batchedGemm(ctx, layout, batch->numel(), pa, pb, out->data<float>(), m,
                     n, k, /*transB=*/false);
}

Status validateBatchMatmul(const Attributes &attrs, int, int) {
  return validateBoolAttr(attrs, "transpose_b");
}

Status batchMatmulKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(
      atLocation(ctx, validateBatchMatmul(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "a"));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "b"));
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  bool transB = ctx.attrs().getInt("transpose_b", 0) != 0;
  EMBER_RETURN_IF_ERROR(requireRank(ctx, a, "batch_matmul: a", 3));
  EMBER_RETURN_IF_ERROR(requireRank(ctx, b, "batch_matmul: b", 3));
  int64_t batches = a.dim(0), m = a.dim(1), k = a.dim(2);
  int64_t kb = transB ? b.dim(2) : b.dim(1), n = transB ? b.dim(1) : b.dim(2);
  if (b.dim(0) != batches || kb != k)
    return kernelError(ctx, std::string("batch_matmul: a ") + a.describe() +
                                " and b " + b.describe() +
                                (transB ? " ([B, N, K])" : " ([B, K, N])") +
                                " do not match");
  EMBER_ASSIGN_OR_RETURN(const float *pa,
                         floatInput(ctx, a, "batch_matmul: a"));
  EMBER_ASSIGN_OR_RETURN(const float *pb,
                         floatInput(ctx, b, "batch_matmul: b"));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, DType::kFloat32, {batches, m, n}));
  Shape batchShapes[2] = {Shape{batches}, Shape{batches}};
  BroadcastLayout layout = makeBroadcastLayout(Shape{batches}, batchShapes, 2);
  return batchedGemm(ctx, layout, batches, pa, pb, out->data<float>(), m, n, k,
                     transB);
}

} // namespace

Status registerGemmKernels(KernelRegistry &registry) {
  KernelDef linear;
  linear.name = "linear";
  linear.run = linearKernel;
  linear.validate = validateLinear;
  linear.minInputs = 2;
  linear.maxInputs = 3;
  linear.summary =
      "x[M,K] · weight[N,K]ᵀ (+ bias[N]) then activation (OpenBLAS sgemm)";
  EMBER_RETURN_IF_ERROR(registry.add(std::move(linear)));

  KernelDef matmul;
  matmul.name = "matmul";
  matmul.run = matmulKernel;
  matmul.minInputs = matmul.maxInputs = 2;
  matmul.summary =
      "ONNX MatMul: [..., M, K] · [..., K, N] with broadcast batch dims";
  EMBER_RETURN_IF_ERROR(registry.add(std::move(matmul)));

  KernelDef bmm;
  bmm.name = "batch_matmul";
  bmm.run = batchMatmulKernel;
  bmm.validate = validateBatchMatmul;
  bmm.minInputs = bmm.maxInputs = 2;
  bmm.summary = "a[B,M,K] · b[B,K,N] (or b[B,N,K]ᵀ with transpose_b)";
  EMBER_RETURN_IF_ERROR(registry.add(std::move(bmm)));
  return Status::ok();
}

} // namespace ember::cpu
