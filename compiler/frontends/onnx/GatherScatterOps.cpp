//===- GatherScatterOps.cpp - Gather and ScatterND
//-------------------------===//
//
// Gather along `axis` becomes tosa.gather on data viewed as [O, K, I]
// (O = dims before the axis, K = the axis, I = dims after) with i32 indices
// [O, W]; with run-time dims before the axis, the axis is moved to the front
// first (transposes). GatherElements is tosa.gather with every coordinate
// off the axis as a batch coordinate. ScatterND with index depth 1 (rows of the
// first dim) becomes tosa.scatter on [1, K, C]. tosa.gather/scatter take i32
// indices: ids are truncated from i64 (tables above 2^31 rows are not supported
// here).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/IRBuilders.h"
#include "frontends/onnx/OpConverterRegistry.h"
#include "frontends/onnx/ShapeTracking.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

/// Indices as i32; negative ones wrap around `size` when it is static (a
/// constant is fixed at import time, a run-time index through a select).
Value normalizeIndices(ImportContext &ctx, Value indices, int64_t size) {
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  auto type = tensorTypeOf(indices);
  Type i32 = b.getI32Type();
  if (DenseElementsAttr attr = ctx.getConstant(indices)) {
    llvm::SmallVector<int32_t> values;
    for (const APInt &v : attr.getValues<APInt>()) {
      int64_t i = v.getSExtValue();
      if (i < 0 && !ShapedType::isDynamic(size))
        i += size;
      values.push_back(static_cast<int32_t>(i));
    }
    auto newType = type.clone(i32);
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(newType, llvm::ArrayRef<int32_t>(values)));
  }
  Value idx = type.getElementType().isInteger(32)
                  ? indices
                  : arith::TruncIOp::create(b, loc, type.clone(i32), indices)
                        .getResult();
  if (ShapedType::isDynamic(size))
    return idx; // assumed non-negative (documented)
  int64_t rank = type.getRank();
  Value zero = scalarConstant(b, loc, i32, 0, rank);
  Value isNegative =
      tosa::GreaterOp::create(b, loc, type.clone(b.getI1Type()), zero, idx);
  Value wrapped = tosa::AddOp::create(b, loc, type.clone(i32), idx,
                                      scalarConstant(b, loc, i32, size, rank));
  return tosa::SelectOp::create(b, loc, type.clone(i32), isNegative, wrapped,
                                idx);
}

/// tosa.transpose of `v` (result dim k is input dim perm[k]); `v` itself for
/// the identity permutation.
Value createTranspose(OpBuilder &b, Location loc, Value v,
                      llvm::ArrayRef<int32_t> perm) {
  bool identity = true;
  for (size_t k = 0; k < perm.size(); ++k)
    identity &= perm[k] == static_cast<int32_t>(k);
  if (identity)
    return v;
  auto type = tensorTypeOf(v);
  llvm::SmallVector<int64_t> shape;
  for (int32_t p : perm)
    shape.push_back(type.getDimSize(p));
  return tosa::TransposeOp::create(
             b, loc, RankedTensorType::get(shape, type.getElementType()), v,
             b.getDenseI32ArrayAttr(perm))
      .getResult();
}

Value gatherAlongAxis(ImportContext &ctx, Value data, Value indices,
                      int64_t axis);

LogicalResult convertGather(ImportContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1);
  if (!data || !indices)
    return failure();
  auto dataType = tensorTypeOf(data), indicesType = tensorTypeOf(indices);
  int64_t rank = dataType.getRank();
  FailureOr<int64_t> normalized =
      ctx.normalizeAxis(ctx.intAttr("axis", 0), rank);
  if (failed(normalized))
    return failure();
  int64_t axis = *normalized;
  if (!indicesType.getElementType().isInteger(32) &&
      !indicesType.getElementType().isInteger(64))
    return ctx.emitError() << "indices must be i32 or i64";

  // Shape chains: pick entries of a tracked shape value.
  if (rank == 1 && indicesType.getRank() <= 1) {
    auto info = ctx.getShapeInfo(data);
    auto picks = ctx.knownInts(1);
    if (info && picks) {
      ShapeInfo result;
      for (const DimEntry &p : *picks) {
        if (!p.isConstant())
          return ctx.emitError() << "indices into a shape must be constant";
        int64_t i = p.constant < 0 ? p.constant + info->size() : p.constant;
        if (i < 0 || i >= static_cast<int64_t>(info->size()))
          return ctx.emitError()
                 << "index " << p.constant << " is out of range";
        result.push_back((*info)[i]);
      }
      ctx.setOutput(
          0, materializeShapeInfo(ctx, result, indicesType.getRank() == 0));
      return success();
    }
  }

  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  OpFoldResult outer = dimProduct(b, loc, data, 0, axis);
  if (!getConstantIntValue(outer)) {
    // Run-time dims before the axis (x[:, idx] on a batch): move the axis
    // to the front, gather along it, move the gathered dims back.
    llvm::SmallVector<int32_t> front = {static_cast<int32_t>(axis)};
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        front.push_back(d);
    Value moved = createTranspose(b, loc, data, front);
    Value gathered = gatherAlongAxis(ctx, moved, indices, 0);
    // gathered: [indices..., dims before the axis..., dims after].
    int64_t q = indicesType.getRank();
    llvm::SmallVector<int32_t> back;
    for (int64_t d = 0; d < axis; ++d)
      back.push_back(q + d);
    for (int64_t d = 0; d < q; ++d)
      back.push_back(d);
    for (int64_t d = axis + 1; d < rank; ++d)
      back.push_back(q + d - 1);
    ctx.setOutput(0, createTranspose(b, loc, gathered, back));
    return success();
  }
  ctx.setOutput(0, gatherAlongAxis(ctx, data, indices, axis));
  return success();
}

/// Gather of `data` along `axis` whose dims before the axis are static:
/// tosa.gather on data viewed as [O, K, I] with the indices tiled O times.
Value gatherAlongAxis(ImportContext &ctx, Value data, Value indices,
                      int64_t axis) {
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  auto dataType = tensorTypeOf(data), indicesType = tensorTypeOf(indices);
  int64_t rank = dataType.getRank();
  int64_t k = dataType.getDimSize(axis);
  OpFoldResult outer = dimProduct(b, loc, data, 0, axis);
  OpFoldResult inner = dimProduct(b, loc, data, axis + 1, rank);
  std::optional<int64_t> outerStatic = getConstantIntValue(outer);
  Value values =
      createReshape(b, loc, data, {outer, dimOf(b, loc, data, axis), inner});
  Value idx = normalizeIndices(ctx, indices, k);
  OpFoldResult count = dimProduct(b, loc, idx, 0, indicesType.getRank());
  Value flatIdx = createReshape(b, loc, idx, {b.getIndexAttr(1), count});
  if (*outerStatic != 1) {
    auto flatType = tensorTypeOf(flatIdx);
    auto tiledType = RankedTensorType::get(
        {*outerStatic, flatType.getDimSize(1)}, flatType.getElementType());
    flatIdx = tosa::TileOp::create(b, loc, tiledType, flatIdx,
                                   constShape(b, loc, {*outerStatic, 1}));
  }
  auto valuesType = tensorTypeOf(values);
  auto gatheredType = RankedTensorType::get(
      {valuesType.getDimSize(0), tensorTypeOf(flatIdx).getDimSize(1),
       valuesType.getDimSize(2)},
      dataType.getElementType());
  Value gathered =
      tosa::GatherOp::create(b, loc, gatheredType, values, flatIdx);
  llvm::SmallVector<OpFoldResult> target;
  for (int64_t i = 0; i < axis; ++i)
    target.push_back(dimOf(b, loc, data, i));
  for (int64_t i = 0; i < indicesType.getRank(); ++i)
    target.push_back(dimOf(b, loc, indices, i));
  for (int64_t i = axis + 1; i < rank; ++i)
    target.push_back(dimOf(b, loc, data, i));
  return createReshape(b, loc, gathered, target);
}

/// GatherElements: out[.., j, ..] = data[.., indices[.., j, ..], ..] along
/// `axis`, indices of data's shape off the axis. Every other coordinate is a
/// batch coordinate of tosa.gather: data and indices are transposed so the
/// axis is last, viewed [P, K, 1] and [P, W], gathered, and moved back.
LogicalResult convertGatherElements(ImportContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1);
  if (!data || !indices)
    return failure();
  auto dataType = tensorTypeOf(data), indicesType = tensorTypeOf(indices);
  int64_t rank = dataType.getRank();
  FailureOr<int64_t> normalized =
      ctx.normalizeAxis(ctx.intAttr("axis", 0), rank);
  if (failed(normalized))
    return failure();
  int64_t axis = *normalized;
  if (indicesType.getRank() != rank)
    return ctx.emitError() << "indices " << indices.getType()
                           << " must have the rank of data " << data.getType();
  if (!indicesType.getElementType().isInteger(32) &&
      !indicesType.getElementType().isInteger(64))
    return ctx.emitError() << "indices must be i32 or i64";
  for (int64_t d = 0; d < rank; ++d) {
    int64_t a = dataType.getDimSize(d), i = indicesType.getDimSize(d);
    if (d != axis && !ShapedType::isDynamic(a) && !ShapedType::isDynamic(i) &&
        a != i)
      return ctx.emitError()
             << "indices " << indices.getType() << " differ from data "
             << data.getType() << " in dim " << d
             << " (only the gathered axis may differ)";
  }
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  llvm::SmallVector<int32_t> last, back(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      last.push_back(d);
  last.push_back(axis);
  for (int64_t d = 0; d < rank; ++d)
    back[last[d]] = d;
  Value movedData = createTranspose(b, loc, data, last);
  Value idx = normalizeIndices(ctx, indices, dataType.getDimSize(axis));
  Value movedIdx = createTranspose(b, loc, idx, last);
  // Batch coordinates: the indices' dims off the axis (data may be larger).
  OpFoldResult p = dimProduct(b, loc, movedIdx, 0, rank - 1);
  Value values =
      createReshape(b, loc, movedData,
                    {p, dimOf(b, loc, movedData, rank - 1), b.getIndexAttr(1)});
  Value flatIdx =
      createReshape(b, loc, movedIdx, {p, dimOf(b, loc, movedIdx, rank - 1)});
  auto valuesType = tensorTypeOf(values);
  auto gatheredType = RankedTensorType::get(
      {valuesType.getDimSize(0), tensorTypeOf(flatIdx).getDimSize(1), 1},
      dataType.getElementType());
  Value gathered =
      tosa::GatherOp::create(b, loc, gatheredType, values, flatIdx);
  llvm::SmallVector<OpFoldResult> movedShape;
  for (int64_t d = 0; d < rank; ++d)
    movedShape.push_back(dimOf(b, loc, movedIdx, d));
  Value result = createReshape(b, loc, gathered, movedShape);
  ctx.setOutput(0, createTranspose(b, loc, result, back));
  return success();
}

/// ScatterND whose constant indices enumerate a box of the first k dims in
/// row-major order (what torch exports for `x[a:b, c:d] = y`): a
/// tensor.insert_slice of the updates. Failure (without a diagnostic) when
/// the indices are not such a box.
LogicalResult convertScatterNDSliceWrite(ImportContext &ctx, Value data,
                                         Value indices, Value updates) {
  DenseElementsAttr attr = ctx.getConstant(indices);
  auto dataType = tensorTypeOf(data);
  auto indicesType = tensorTypeOf(indices);
  if (!attr || indicesType.getRank() == 0)
    return failure();
  int64_t k = indicesType.getDimSize(indicesType.getRank() - 1);
  int64_t rank = dataType.getRank();
  if (k < 1 || k > rank)
    return failure();
  llvm::SmallVector<int64_t> flat;
  for (const APInt &v : attr.getValues<APInt>())
    flat.push_back(v.getSExtValue());
  int64_t count = flat.size() / k;
  if (count == 0)
    return failure();
  llvm::SmallVector<int64_t> lo(k, INT64_MAX), hi(k, INT64_MIN);
  for (int64_t n = 0; n < count; ++n)
    for (int64_t d = 0; d < k; ++d) {
      int64_t v = flat[n * k + d];
      int64_t size = dataType.getDimSize(d);
      if (v < 0 && !ShapedType::isDynamic(size))
        v += size;
      flat[n * k + d] = v;
      lo[d] = std::min(lo[d], v);
      hi[d] = std::max(hi[d], v);
    }
  llvm::SmallVector<int64_t> extent;
  int64_t boxCount = 1;
  for (int64_t d = 0; d < k; ++d) {
    if (lo[d] < 0)
      return failure();
    int64_t size = dataType.getDimSize(d);
    if (!ShapedType::isDynamic(size) && hi[d] >= size)
      return failure();
    // 0 <= lo <= hi: the extent and the box are counted without overflow.
    if (hi[d] - lo[d] >= count ||
        llvm::MulOverflow(boxCount, hi[d] - lo[d] + 1, boxCount))
      return failure();
    extent.push_back(hi[d] - lo[d] + 1);
  }
  if (boxCount != count)
    return failure();
  for (int64_t n = 0; n < count; ++n) {
    int64_t rest = n;
    for (int64_t d = k - 1; d >= 0; --d) {
      if (flat[n * k + d] != lo[d] + rest % extent[d])
        return failure();
      rest /= extent[d];
    }
  }
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  llvm::SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t d = 0; d < k; ++d) {
    offsets.push_back(b.getIndexAttr(lo[d]));
    sizes.push_back(b.getIndexAttr(extent[d]));
  }
  for (int64_t d = k; d < rank; ++d) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(dimOf(b, loc, data, d));
  }
  strides.assign(rank, b.getIndexAttr(1));
  // The updates must fill the box exactly.
  auto updatesType = tensorTypeOf(updates);
  int64_t boxElements = 1;
  bool staticBox = true;
  for (OpFoldResult s : sizes) {
    std::optional<int64_t> c = getConstantIntValue(s);
    staticBox &= c.has_value();
    boxElements *= c.value_or(1);
  }
  if (updatesType.getElementType() != dataType.getElementType() ||
      (staticBox && updatesType.hasStaticShape() &&
       updatesType.getNumElements() != boxElements))
    return failure();
  Value box = createReshape(b, loc, updates, sizes);
  ctx.setOutput(0, tensor::InsertSliceOp::create(b, loc, box, data, offsets,
                                                 sizes, strides));
  return success();
}

LogicalResult convertScatterND(ImportContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  if (!data || !indices || !updates)
    return failure();
  std::string reduction = ctx.stringAttr("reduction", "none");
  if (reduction != "none")
    return ctx.emitError() << "reduction '" << reduction
                           << "' is not supported (only 'none')";
  auto dataType = tensorTypeOf(data), indicesType = tensorTypeOf(indices);
  int64_t q = indicesType.getRank();
  if (dataType.getRank() < 1)
    return ctx.emitError() << "data must have rank 1 or more; it is "
                           << data.getType();
  if (succeeded(convertScatterNDSliceWrite(ctx, data, indices, updates)))
    return success();
  if (q == 0 || indicesType.getDimSize(q - 1) != 1)
    return ctx.emitError()
           << "only index depth 1 (writing whole rows of dim 0) is "
              "supported; indices are "
           << indices.getType();
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  int64_t rank = dataType.getRank();
  OpFoldResult rowSize = dimProduct(b, loc, data, 1, rank);
  Value values = createReshape(
      b, loc, data, {b.getIndexAttr(1), dimOf(b, loc, data, 0), rowSize});
  Value idx = normalizeIndices(ctx, indices, dataType.getDimSize(0));
  OpFoldResult count = dimProduct(b, loc, idx, 0, q - 1);
  Value flatIdx = createReshape(b, loc, idx, {b.getIndexAttr(1), count});
  Value input =
      createReshape(b, loc, updates, {b.getIndexAttr(1), count, rowSize});
  Value scattered =
      tosa::ScatterOp::create(b, loc, values.getType(), values, flatIdx, input);
  llvm::SmallVector<OpFoldResult> target;
  for (int64_t i = 0; i < rank; ++i)
    target.push_back(dimOf(b, loc, data, i));
  ctx.setOutput(0, createReshape(b, loc, scattered, target));
  return success();
}

} // namespace

void registerGatherScatterConverters(OpConverterRegistry &r) {
  r.add(kOnnxDomain, "Gather", convertGather, {"axis"});
  r.add(kOnnxDomain, "GatherElements", convertGatherElements, {"axis"});
  r.add(kOnnxDomain, "ScatterND", convertScatterND, {"reduction"});
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
