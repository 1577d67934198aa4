//===- MatMulOps.cpp - Gemm and MatMul
//-------------------------------------===//
//
// tosa.matmul is batched 3-D ([N, M, K] x [N, K, C]); 2-D operands get a unit
// batch dim, N-D x 2-D MatMul collapses the leading dims into the rows,
// N-D x N-D collapses equal batch dims into one, and a left operand whose
// batch dims are all 1 multiplies every batch of the right one through one
// 2-D matmul over the right operand moved to [K, batch * N].
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/IRBuilders.h"
#include "frontends/onnx/OpConverterRegistry.h"
#include "frontends/onnx/ShapeTracking.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

/// [N, M, K] x [N, K, C] -> [N, M, C].
Value createMatMul3D(OpBuilder &b, Location loc, Value a, Value c) {
  auto aType = tensorTypeOf(a), cType = tensorTypeOf(c);
  int64_t batch = aType.getDimSize(0);
  if (ShapedType::isDynamic(batch))
    batch = cType.getDimSize(0);
  auto type =
      RankedTensorType::get({batch, aType.getDimSize(1), cType.getDimSize(2)},
                            aType.getElementType());
  Value zp = zeroTensor1D(b, loc, aType.getElementType());
  return tosa::MatMulOp::create(b, loc, type, a, c, zp, zp).getResult();
}

/// [M, K] x [K, N] -> [M, N].
Value createMatMul2D(OpBuilder &b, Location loc, Value a, Value c) {
  Value a3 = insertUnitDims(b, loc, a, {0});
  Value c3 = insertUnitDims(b, loc, c, {0});
  return dropUnitDims(b, loc, createMatMul3D(b, loc, a3, c3), {0});
}

Value transpose2D(OpBuilder &b, Location loc, Value v) {
  auto type = tensorTypeOf(v);
  auto resultType = RankedTensorType::get(
      {type.getDimSize(1), type.getDimSize(0)}, type.getElementType());
  return tosa::TransposeOp::create(b, loc, resultType, v,
                                   b.getDenseI32ArrayAttr({1, 0}))
      .getResult();
}

Value createTranspose(OpBuilder &b, Location loc, Value v,
                      llvm::ArrayRef<int32_t> perm) {
  auto type = tensorTypeOf(v);
  llvm::SmallVector<int64_t> shape;
  for (int32_t p : perm)
    shape.push_back(type.getDimSize(p));
  return tosa::TransposeOp::create(
             b, loc, RankedTensorType::get(shape, type.getElementType()), v,
             b.getDenseI32ArrayAttr(perm))
      .getResult();
}

bool isFloatTensor(Value v) {
  return isa<FloatType>(tensorTypeOf(v).getElementType());
}

LogicalResult convertGemm(ImportContext &ctx) {
  Value a = ctx.input(0), c = ctx.input(1);
  if (!a || !c)
    return failure();
  if (tensorTypeOf(a).getRank() != 2 || tensorTypeOf(c).getRank() != 2)
    return ctx.emitError() << "A and B must be 2-D, got " << a.getType()
                           << " and " << c.getType();
  if (!isFloatTensor(a) ||
      tensorTypeOf(a).getElementType() != tensorTypeOf(c).getElementType())
    return ctx.emitError() << "A and B must be floating-point of one type";
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  if (ctx.intAttr("transA", 0))
    a = transpose2D(b, loc, a);
  if (ctx.intAttr("transB", 0))
    c = transpose2D(b, loc, c);
  int64_t ka = tensorTypeOf(a).getDimSize(1),
          kc = tensorTypeOf(c).getDimSize(0);
  if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kc) && ka != kc)
    return ctx.emitError() << "inner dims differ: " << ka << " vs " << kc;
  Type elementType = tensorTypeOf(a).getElementType();
  Value result = createMatMul2D(b, loc, a, c);
  float alpha = ctx.floatAttr("alpha", 1.0f);
  if (alpha != 1.0f)
    result = createMul(b, loc, result,
                       scalarConstant(b, loc, elementType, alpha, 2));
  if (ctx.hasInput(2)) {
    Value bias = ctx.input(2);
    if (!bias)
      return failure();
    float beta = ctx.floatAttr("beta", 1.0f);
    if (beta != 1.0f)
      bias = createMul(b, loc, bias,
                       scalarConstant(b, loc, elementType, beta,
                                      tensorTypeOf(bias).getRank()));
    Value sum =
        createBroadcastBinary<tosa::AddOp>(b, loc, result, bias, elementType);
    if (!sum)
      return ctx.emitError() << "C " << bias.getType()
                             << " does not broadcast to " << result.getType();
    result = sum;
  }
  ctx.setOutput(0, result);
  return success();
}

LogicalResult convertMatMul(ImportContext &ctx) {
  Value a = ctx.input(0), c = ctx.input(1);
  if (!a || !c)
    return failure();
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  auto aType = tensorTypeOf(a), cType = tensorTypeOf(c);
  if (!isFloatTensor(a) || aType.getElementType() != cType.getElementType())
    return ctx.emitError() << "operands must be floating-point of one type";
  int64_t ra = aType.getRank(), rc = cType.getRank();
  if (ra == 2 && rc == 2) {
    ctx.setOutput(0, createMatMul2D(b, loc, a, c));
    return success();
  }
  auto allOnes = [](RankedTensorType t, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      if (t.getDimSize(i) != 1)
        return false;
    return true;
  };
  if (rc >= 3 && ra <= rc && allOnes(aType, ra - 2)) {
    // a's batch dims are all 1 (or a is 2-D): every batch of c is multiplied
    // by the same [M, K]. c [cB.., K, N] -> [K, cB.., N] -> [K, X*N], one
    // 2-D matmul [M, X*N] -> [M, cB.., N] -> [cB.., M, N].
    if (ra > 2)
      a = createReshape(b, loc, a,
                        {dimOf(b, loc, a, ra - 2), dimOf(b, loc, a, ra - 1)});
    llvm::SmallVector<int32_t> kFirst = {static_cast<int32_t>(rc - 2)};
    for (int64_t i = 0; i < rc; ++i)
      if (i != rc - 2)
        kFirst.push_back(i);
    Value moved = createTranspose(b, loc, c, kFirst);
    Value flat = createReshape(
        b, loc, moved,
        {dimOf(b, loc, moved, 0), dimProduct(b, loc, moved, 1, rc)});
    Value product = createMatMul2D(b, loc, a, flat);
    llvm::SmallVector<OpFoldResult> shape = {dimOf(b, loc, a, 0)};
    for (int64_t i = 1; i < rc; ++i)
      shape.push_back(dimOf(b, loc, moved, i));
    Value unflat = createReshape(b, loc, product, shape);
    // [M, cB.., N] -> [cB.., M, N]
    llvm::SmallVector<int32_t> back;
    for (int64_t i = 1; i < rc - 1; ++i)
      back.push_back(i);
    back.push_back(0);
    back.push_back(rc - 1);
    ctx.setOutput(0, createTranspose(b, loc, unflat, back));
    return success();
  }
  if (ra >= 3 && rc >= 3 && allOnes(cType, rc - 2) && rc <= ra) {
    // c's batch dims are all 1: the Nx2 case with c viewed [K, N].
    c = createReshape(b, loc, c,
                      {dimOf(b, loc, c, rc - 2), dimOf(b, loc, c, rc - 1)});
    cType = tensorTypeOf(c);
    rc = 2;
  }
  if (ra >= 3 && ra == rc) {
    // Batch dims of equal sizes (no broadcasting): collapsed into one.
    llvm::SmallVector<OpFoldResult> batch;
    for (int64_t i = 0; i < ra - 2; ++i) {
      int64_t na = aType.getDimSize(i), nc = cType.getDimSize(i);
      if (!ShapedType::isDynamic(na) && !ShapedType::isDynamic(nc) && na != nc)
        return ctx.emitError()
               << "batch dims " << i << " differ (" << na << " vs " << nc
               << "); broadcasting a batch dim that is not 1 in every "
                  "batch dim is not supported";
      batch.push_back(ShapedType::isDynamic(na) ? dimOf(b, loc, c, i)
                                                : dimOf(b, loc, a, i));
    }
    Value a3 = a, c3 = c;
    if (ra != 3) {
      a3 = createReshape(b, loc, a,
                         {dimProduct(b, loc, a, 0, ra - 2),
                          dimOf(b, loc, a, ra - 2), dimOf(b, loc, a, ra - 1)});
      c3 = createReshape(b, loc, c,
                         {dimProduct(b, loc, c, 0, rc - 2),
                          dimOf(b, loc, c, rc - 2), dimOf(b, loc, c, rc - 1)});
    }
    Value product = createMatMul3D(b, loc, a3, c3);
    if (ra != 3) {
      batch.push_back(dimOf(b, loc, a, ra - 2));
      batch.push_back(dimOf(b, loc, c, rc - 1));
      product = createReshape(b, loc, product, batch);
    }
    ctx.setOutput(0, product);
    return success();
  }
  if (ra >= 3 && rc == 2) {
    // [d0.., M, K] -> [X, K] -> matmul -> [X, N] -> [d0.., M, N].
    ReassociationIndices rows;
    for (int64_t i = 0; i < ra - 1; ++i)
      rows.push_back(i);
    int64_t x = 1;
    for (int64_t i = 0; i < ra - 1; ++i)
      x = ShapedType::isDynamic(aType.getDimSize(i)) || ShapedType::isDynamic(x)
              ? ShapedType::kDynamic
              : x * aType.getDimSize(i);
    auto flatType = RankedTensorType::get({x, aType.getDimSize(ra - 1)},
                                          aType.getElementType());
    Value flat = tensor::CollapseShapeOp::create(
        b, loc, flatType, a,
        llvm::ArrayRef<ReassociationIndices>{rows, {ra - 1}});
    Value product = createMatMul2D(b, loc, flat, c);
    llvm::SmallVector<int64_t> shape(aType.getShape());
    shape.back() = cType.getDimSize(1);
    llvm::SmallVector<OpFoldResult> outputShape;
    for (int64_t i = 0; i < ra - 1; ++i)
      outputShape.push_back(dimOf(b, loc, a, i));
    outputShape.push_back(dimOf(b, loc, c, 1));
    auto resultType = RankedTensorType::get(shape, aType.getElementType());
    ctx.setOutput(0, tensor::ExpandShapeOp::create(
                         b, loc, resultType, product,
                         llvm::ArrayRef<ReassociationIndices>{rows, {ra - 1}},
                         outputShape));
    return success();
  }
  return ctx.emitError() << "operand ranks " << ra << " and " << rc
                         << " are not supported (2x2, NxN with equal or unit "
                            "batch dims, Nx2, 2xN)";
}

} // namespace

void registerMatMulConverters(OpConverterRegistry &r) {
  r.add(kOnnxDomain, "Gemm", convertGemm,
        {"alpha", "beta", "transA", "transB"});
  r.add(kOnnxDomain, "MatMul", convertMatMul);
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
