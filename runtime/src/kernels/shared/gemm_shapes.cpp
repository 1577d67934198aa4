//===- gemm_shapes.cpp - Checks and shapes of linear / matmul -------------===//
#include "kernels/shared/gemm_shapes.h"

#include "kernels/shared/dense_common.h"

#include <string>

namespace ember::cpu {

Status validateLinear(const Attributes &attrs, int, int) {
  EMBER_RETURN_IF_ERROR(validateBoolAttr(attrs, "transpose_weight"));
  EMBER_ASSIGN_OR_RETURN(std::string act, attrs.getString("activation"));
  if (!parseActivation(act))
    return invalidArgument("attribute 'activation' must be none, relu, sigmoid "
                           "or tanh, got '" +
                           act + "'");
  return Status::ok();
}

Result<LinearShape> linearShape(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateLinear(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "weight"));
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  LinearShape s;
  s.x = &x;
  s.weight = &w;
  bool transposeWeight = s.transposeWeight =
      *ctx.attrs().getInt("transpose_weight") != 0;
  s.activation = *parseActivation(*ctx.attrs().getString("activation"));

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
  s.bias = bias;
  s.outShape = x.shape();
  s.outShape[x.rank() - 1] = n;
  s.m = 1; // every dim of x but the last
  for (int i = 0; i + 1 < x.rank(); ++i)
    s.m *= x.dim(i);
  s.n = n;
  s.k = k;
  return s;
}

Result<MatmulShape> matmulShape(KernelContext &ctx) {
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
  MatmulShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  {
    int64_t dims[Shape::kMaxRank];
    int ra = aVector ? 0 : a.rank() - 2, rb = bVector ? 0 : b.rank() - 2;
    // The batch dims of an empty operand may hold more than a shape can
    // ([2^40, 2^40, 0, 4]): an error, not a dereference of one.
    for (int i = 0; i < ra; ++i)
      dims[i] = a.dim(i);
    Result<Shape> batchA = Shape::fromDims(dims, ra);
    for (int i = 0; i < rb; ++i)
      dims[i] = b.dim(i);
    Result<Shape> batchB = Shape::fromDims(dims, rb);
    if (!batchA.isOk() || !batchB.isOk())
      return kernelError(
          ctx, "matmul: the batch dims of a " + a.describe() + " or b " +
                   b.describe() + ": " +
                   (batchA.isOk() ? batchB : batchA).status().message());
    s.batchShapes[0] = *batchA;
    s.batchShapes[1] = *batchB;
  }
  Result<Shape> batch = broadcastShapes(s.batchShapes, 2);
  if (!batch.isOk())
    return kernelError(ctx, "matmul: batch dims of a " + a.describe() +
                                " and b " + b.describe() + ": " +
                                batch.status().message());
  s.batch = *batch;
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
  EMBER_ASSIGN_OR_RETURN(s.outShape, Shape::fromDims(outDims, r));
  return s;
}

} // namespace ember::cpu
