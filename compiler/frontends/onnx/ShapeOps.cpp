//===- ShapeOps.cpp - Shape, Reshape, Flatten, Transpose, (Un)Squeeze,
//                    Concat, Slice, Expand
//                    ----------------------------------===//

#include "frontends/onnx/IRBuilders.h"
#include "frontends/onnx/OpConverterRegistry.h"
#include "frontends/onnx/ShapeTracking.h"
#include "frontends/onnx/TypeConversion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

/// acc *= v, false when the product passes kMaxTensorElements (or
/// overflows); acc and v are non-negative.
bool multiplyWithinLimit(int64_t &acc, int64_t v) {
  if (acc == 0 || v == 0) {
    acc = 0;
    return true;
  }
  if (v < 0 || v > kMaxTensorElements / acc)
    return false;
  acc *= v;
  return true;
}

LogicalResult convertShape(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t rank = tensorTypeOf(x).getRank();
  int64_t start = ctx.intAttr("start", 0), end = ctx.intAttr("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  ShapeInfo info;
  for (int64_t i = start; i < end; ++i)
    info.push_back(DimEntry{0, x, i});
  ctx.setOutput(0, materializeShapeInfo(ctx, info, /*scalar=*/false));
  return success();
}

LogicalResult convertReshape(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  std::optional<ShapeInfo> target = ctx.knownInts(1);
  if (!target)
    return ctx.emitError() << "the target shape (input 1) must be known at "
                              "import time (a constant or a Shape chain)";
  bool allowZero = ctx.intAttr("allowzero", 0) != 0;
  auto type = tensorTypeOf(x);
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  // Resolve 0 (copy) entries, find -1.
  ShapeInfo entries;
  int64_t inferIndex = -1;
  for (auto [i, e] : llvm::enumerate(*target)) {
    if (e.isConstant() && e.constant == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= type.getRank())
        return ctx.emitError() << "shape entry " << i
                               << " copies a dim the input does not have";
      entries.push_back(DimEntry{0, x, static_cast<int64_t>(i)});
    } else if (e.isConstant() && e.constant == -1) {
      if (inferIndex >= 0)
        return ctx.emitError() << "the target shape has more than one -1";
      inferIndex = i;
      entries.push_back(e);
    } else if (e.isConstant() && e.constant < 0) {
      return ctx.emitError() << "invalid target shape entry " << e.constant;
    } else {
      entries.push_back(e);
    }
  }
  entries = simplifyShapeInfo(entries);
  llvm::SmallVector<OpFoldResult> sizes;
  for (auto [i, e] : llvm::enumerate(entries))
    sizes.push_back(static_cast<int64_t>(i) == inferIndex
                        ? OpFoldResult()
                        : entrySize(b, loc, e));
  if (inferIndex >= 0) {
    // -1: static when the dynamic input dims cancel against dim entries of
    // the same dims; else computed at run time.
    int64_t inStatic = 1, outStatic = 1;
    llvm::SmallVector<std::pair<Value, int64_t>> inDynamic;
    for (int64_t i = 0; i < type.getRank(); ++i) {
      if (type.isDynamicDim(i))
        inDynamic.push_back({x, i});
      else if (!multiplyWithinLimit(inStatic, type.getDimSize(i)))
        return ctx.emitError() << "the input " << x.getType()
                               << " holds more than 2^48 elements";
    }
    bool cancels = true;
    for (auto [i, e] : llvm::enumerate(entries)) {
      if (static_cast<int64_t>(i) == inferIndex)
        continue;
      if (e.isConstant()) {
        if (!multiplyWithinLimit(outStatic, e.constant))
          return ctx.emitError()
                 << "the target shape holds more than 2^48 elements";
        continue;
      }
      auto it = llvm::find(inDynamic, std::make_pair(e.source, e.dim));
      if (it == inDynamic.end())
        cancels = false;
      else
        inDynamic.erase(it);
    }
    if (cancels && inDynamic.empty()) {
      if (outStatic == 0 || inStatic % outStatic != 0)
        return ctx.emitError()
               << "cannot reshape " << x.getType() << " to the target shape";
      sizes[inferIndex] = b.getIndexAttr(inStatic / outStatic);
    } else {
      Value total = getValueOrCreateConstantIndexOp(
          b, loc, dimProduct(b, loc, x, 0, type.getRank()));
      Value others = arith::ConstantIndexOp::create(b, loc, 1);
      for (auto [i, s] : llvm::enumerate(sizes))
        if (static_cast<int64_t>(i) != inferIndex)
          others = arith::MulIOp::create(
              b, loc, others, getValueOrCreateConstantIndexOp(b, loc, s));
      sizes[inferIndex] =
          arith::DivUIOp::create(b, loc, total, others).getResult();
    }
  }
  // Static element count check.
  if (type.hasStaticShape()) {
    int64_t out = 1;
    bool allStatic = true;
    for (OpFoldResult s : sizes) {
      auto c = getConstantIntValue(s);
      allStatic &= c.has_value();
      if (!multiplyWithinLimit(out, c.value_or(1)))
        return ctx.emitError()
               << "the target shape holds more than 2^48 elements";
    }
    if (allStatic && out != type.getNumElements())
      return ctx.emitError()
             << "cannot reshape " << x.getType() << " ("
             << type.getNumElements() << " elements) to " << out << " elements";
  }
  ctx.setOutput(0, createReshape(b, loc, x, sizes));
  return success();
}

LogicalResult convertFlatten(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t rank = tensorTypeOf(x).getRank();
  int64_t axis = ctx.intAttr("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.emitError() << "axis " << axis << " is out of range";
  if (axis < 0)
    axis += rank;
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  OpFoldResult outer = dimProduct(b, loc, x, 0, axis);
  OpFoldResult inner = dimProduct(b, loc, x, axis, rank);
  ctx.setOutput(0, createReshape(b, loc, x, {outer, inner}));
  return success();
}

LogicalResult convertTranspose(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = tensorTypeOf(x);
  int64_t rank = type.getRank();
  if (rank == 0) {
    ctx.setOutput(0, x);
    return success();
  }
  llvm::SmallVector<int64_t> perm;
  if (auto attr = ctx.intsAttr("perm"))
    perm = *attr;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  llvm::SmallVector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank)
    return ctx.emitError() << "perm has " << perm.size() << " entries for rank "
                           << rank;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return ctx.emitError() << "perm is not a permutation";
    seen[p] = true;
  }
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<int32_t> perms;
  for (int64_t p : perm) {
    shape.push_back(type.getDimSize(p));
    perms.push_back(p);
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  ctx.setOutput(
      0, tosa::TransposeOp::create(ctx.builder, ctx.loc(), resultType, x,
                                   ctx.builder.getDenseI32ArrayAttr(perms)));
  return success();
}

/// The axes of Unsqueeze/Squeeze: input 1 (opset 13+) or none.
FailureOr<llvm::SmallVector<int64_t>> axesOf(ImportContext &ctx, int64_t rank,
                                             bool required) {
  llvm::SmallVector<int64_t> axes;
  if (ctx.hasInput(1)) {
    auto values = ctx.constantInts(1, "axes");
    if (failed(values))
      return failure();
    axes = *values;
  } else if (required) {
    return ctx.emitError() << "axes (input 1) is required";
  }
  for (int64_t &a : axes) {
    auto n = ctx.normalizeAxis(a, rank);
    if (failed(n))
      return failure();
    a = *n;
  }
  llvm::sort(axes);
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    return ctx.emitError() << "axes repeat an axis";
  return axes;
}

LogicalResult convertUnsqueeze(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t rank = tensorTypeOf(x).getRank();
  // Axes index the result, whose rank grows by their number.
  std::optional<ShapeInfo> axesInfo = ctx.knownInts(1);
  int64_t resultRank = rank + (axesInfo ? axesInfo->size() : 0);
  auto axes = axesOf(ctx, resultRank, /*required=*/true);
  if (failed(axes))
    return failure();
  // A scalar shape entry made into a 1-D one stays tracked.
  if (auto info = ctx.getShapeInfo(x); info && rank == 0) {
    ctx.setOutput(0, materializeShapeInfo(ctx, *info, /*scalar=*/false));
    return success();
  }
  ctx.setOutput(0, insertUnitDims(ctx.builder, ctx.loc(), x, *axes));
  return success();
}

LogicalResult convertSqueeze(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = tensorTypeOf(x);
  auto axes = axesOf(ctx, type.getRank(), /*required=*/false);
  if (failed(axes))
    return failure();
  if (!ctx.hasInput(1)) {
    for (int64_t i = 0; i < type.getRank(); ++i) {
      if (type.isDynamicDim(i))
        return ctx.emitError() << "Squeeze without axes needs static dims";
      if (type.getDimSize(i) == 1)
        axes->push_back(i);
    }
  }
  for (int64_t a : *axes)
    if (type.getDimSize(a) != 1)
      return ctx.emitError()
             << "dim " << a << " of " << x.getType() << " is not statically 1";
  if (auto info = ctx.getShapeInfo(x); info && type.getRank() == 1) {
    ctx.setOutput(0, materializeShapeInfo(ctx, *info, /*scalar=*/true));
    return success();
  }
  ctx.setOutput(0, dropUnitDims(ctx.builder, ctx.loc(), x, *axes));
  return success();
}

LogicalResult convertConcat(ImportContext &ctx) {
  const auto &node = ctx.node();
  llvm::SmallVector<Value> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    Value v = ctx.input(i);
    if (!v)
      return failure();
    inputs.push_back(v);
  }
  if (inputs.empty())
    return ctx.emitError() << "needs at least one input";
  auto firstType = tensorTypeOf(inputs.front());
  int64_t rank = firstType.getRank();
  auto axis = ctx.normalizeAxis(ctx.intAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  // Shape chains: concatenate the tracked entries.
  ShapeInfo info;
  bool tracked = rank == 1 && firstType.getElementType().isInteger(64);
  for (int i = 0; tracked && i < node.input_size(); ++i) {
    auto known = ctx.knownInts(i);
    if (!known)
      tracked = false;
    else
      info.append(known->begin(), known->end());
  }
  if (tracked) {
    ctx.setOutput(0, materializeShapeInfo(ctx, info, /*scalar=*/false));
    return success();
  }
  llvm::SmallVector<int64_t> shape(firstType.getShape());
  shape[*axis] = 0;
  for (Value v : inputs) {
    auto type = tensorTypeOf(v);
    if (type.getRank() != rank ||
        type.getElementType() != firstType.getElementType())
      return ctx.emitError() << "inputs differ in rank or element type";
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = type.getDimSize(d);
      if (d == *axis) {
        shape[d] =
            ShapedType::isDynamic(size) || ShapedType::isDynamic(shape[d])
                ? ShapedType::kDynamic
                : shape[d] + size;
      } else if (ShapedType::isDynamic(shape[d])) {
        shape[d] = size;
      } else if (!ShapedType::isDynamic(size) && size != shape[d]) {
        return ctx.emitError() << "inputs differ in dim " << d;
      }
    }
  }
  auto resultType = RankedTensorType::get(shape, firstType.getElementType());
  ctx.setOutput(0, tosa::ConcatOp::create(ctx.builder, ctx.loc(), resultType,
                                          inputs, *axis));
  return success();
}

/// Starts or ends of a Slice: constants, or a 1-D integer tensor read at run
/// time (torch's Loop bodies slice the ids by offsets[i] : offsets[i + 1]).
struct SliceBounds {
  llvm::SmallVector<int64_t> constants;
  Value tensor;
  size_t size() const {
    return tensor ? tensorTypeOf(tensor).getDimSize(0) : constants.size();
  }
};

FailureOr<SliceBounds> sliceBounds(ImportContext &ctx, int i,
                                   llvm::StringRef what) {
  SliceBounds bounds;
  if (std::optional<ShapeInfo> known = ctx.knownInts(i)) {
    bool allConstant = true;
    for (const DimEntry &e : *known) {
      allConstant &= e.isConstant();
      bounds.constants.push_back(e.constant);
    }
    if (allConstant)
      return bounds;
    bounds.constants.clear();
  }
  Value v = ctx.input(i);
  if (!v)
    return failure();
  auto type = tensorTypeOf(v);
  if (type.getRank() != 1 || type.isDynamicDim(0) ||
      !isa<IntegerType>(type.getElementType()))
    return ctx.emitError() << what << " (input " << i
                           << ") must be constant or a 1-D integer tensor of "
                              "static size, got "
                           << v.getType();
  bounds.tensor = v;
  return bounds;
}

/// Run-time bound `k` as an index value.
Value runtimeBound(OpBuilder &b, Location loc, const SliceBounds &bounds,
                   int64_t k) {
  Value pos = arith::ConstantIndexOp::create(b, loc, k);
  Value element = tensor::ExtractOp::create(b, loc, bounds.tensor, pos);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), element);
}

LogicalResult convertSlice(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = tensorTypeOf(x);
  int64_t rank = type.getRank();
  auto starts = sliceBounds(ctx, 1, "starts");
  auto ends = sliceBounds(ctx, 2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  if (starts->size() != ends->size())
    return ctx.emitError() << "starts and ends differ in length";
  llvm::SmallVector<int64_t> axes, steps(starts->size(), 1);
  if (ctx.hasInput(3)) {
    auto a = ctx.constantInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (ctx.hasInput(4)) {
    auto s = ctx.constantInts(4, "steps");
    if (failed(s))
      return failure();
    steps = *s;
  }
  if (axes.size() != starts->size() || steps.size() != starts->size())
    return ctx.emitError() << "starts, ends, axes and steps differ in length";

  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  llvm::SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  llvm::SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(dimOf(b, loc, x, d));

  // Tracked 1-D shape values slice symbolically.
  std::optional<ShapeInfo> info =
      rank == 1 && type.getElementType().isInteger(64)
          ? ctx.knownInts(0)
          : std::optional<ShapeInfo>();

  for (size_t i = 0; i < axes.size(); ++i) {
    auto axis = ctx.normalizeAxis(axes[i], rank);
    if (failed(axis))
      return failure();
    int64_t step = steps[i];
    if (step <= 0)
      return ctx.emitError()
             << "step " << step << " is not supported (positive steps only)";
    int64_t dim = type.getDimSize(*axis);
    bool constantBounds = !starts->tensor && !ends->tensor;
    if (!ShapedType::isDynamic(dim) && constantBounds) {
      int64_t start = starts->constants[i], end = ends->constants[i];
      start =
          start < 0 ? std::max<int64_t>(start + dim, 0) : std::min(start, dim);
      end = end < 0 ? std::max<int64_t>(end + dim, 0) : std::min(end, dim);
      int64_t size = std::max<int64_t>(end - start, 0);
      size = size == 0 ? 0 : 1 + (size - 1) / step; // ceil, no overflow
      offsets[*axis] = b.getIndexAttr(start);
      sizes[*axis] = b.getIndexAttr(size);
      strides[*axis] = b.getIndexAttr(step);
      if (info) {
        ShapeInfo sliced;
        for (int64_t k = 0; k < size; ++k)
          sliced.push_back((*info)[start + k * step]);
        info = sliced;
      }
      continue;
    }
    info.reset();
    // Dynamic dim or run-time bounds: clamp at run time with index
    // arithmetic.
    Value dimValue =
        getValueOrCreateConstantIndexOp(b, loc, dimOf(b, loc, x, *axis));
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    auto clampToDim = [&](int64_t v) -> Value {
      if (v < 0)
        return arith::MaxSIOp::create(
            b, loc, arith::AddIOp::create(b, loc, dimValue, cst(v)), cst(0));
      return arith::MinSIOp::create(b, loc, cst(v), dimValue);
    };
    auto clampRuntime = [&](Value v) -> Value {
      Value negative =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, cst(0));
      Value wrapped = arith::SelectOp::create(
          b, loc, negative, arith::AddIOp::create(b, loc, v, dimValue), v);
      return arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, wrapped, cst(0)), dimValue);
    };
    Value s = starts->tensor ? clampRuntime(runtimeBound(b, loc, *starts, i))
                             : clampToDim(starts->constants[i]);
    Value e = ends->tensor ? clampRuntime(runtimeBound(b, loc, *ends, i))
                           : clampToDim(ends->constants[i]);
    Value size = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, e, s), cst(0));
    if (step > 1)
      size = arith::DivUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, size, cst(step - 1)),
          cst(step));
    offsets[*axis] = s;
    sizes[*axis] = size;
    strides[*axis] = b.getIndexAttr(step);
  }
  if (info) {
    ctx.setOutput(0, materializeShapeInfo(ctx, *info, /*scalar=*/false));
    return success();
  }
  ctx.setOutput(
      0, tensor::ExtractSliceOp::create(b, loc, x, offsets, sizes, strides));
  return success();
}

LogicalResult convertExpand(ImportContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  std::optional<ShapeInfo> target = ctx.knownInts(1);
  if (!target)
    return ctx.emitError() << "the target shape (input 1) must be known at "
                              "import time";
  ShapeInfo entries = simplifyShapeInfo(*target);
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  int64_t rank = std::max<int64_t>(tensorTypeOf(x).getRank(), entries.size());
  x = expandToRank(b, loc, x, rank);
  auto type = tensorTypeOf(x);
  while (static_cast<int64_t>(entries.size()) < rank)
    entries.insert(entries.begin(), DimEntry{1, Value(), -1});
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < rank; ++d) {
    const DimEntry &e = entries[d];
    int64_t in = type.getDimSize(d);
    if (e.isConstant() && e.constant == 1) {
      shape.push_back(in);
      if (ShapedType::isDynamic(in))
        dynamicSizes.push_back(tensor::DimOp::create(b, loc, x, d));
    } else if (e.isConstant()) {
      if (!ShapedType::isDynamic(in) && in != 1 && in != e.constant)
        return ctx.emitError() << "cannot expand dim " << d << " of size " << in
                               << " to " << e.constant;
      shape.push_back(e.constant);
    } else {
      shape.push_back(
          in == 1 || ShapedType::isDynamic(in) ? ShapedType::kDynamic : in);
      if (ShapedType::isDynamic(shape.back()))
        dynamicSizes.push_back(tensor::DimOp::create(b, loc, e.source, e.dim));
    }
  }
  // x + zeros(target): tosa broadcasts x's unit dims to the target.
  Type elementType = type.getElementType();
  auto resultType = RankedTensorType::get(shape, elementType);
  TypedAttr zero = isa<FloatType>(elementType)
                       ? TypedAttr(b.getFloatAttr(elementType, 0.0))
                       : TypedAttr(b.getIntegerAttr(elementType, 0));
  Value zeroScalar = arith::ConstantOp::create(b, loc, zero);
  Value zeros =
      tensor::SplatOp::create(b, loc, zeroScalar, resultType, dynamicSizes);
  Value result;
  if (elementType.isInteger(1))
    result = tosa::LogicalOrOp::create(b, loc, resultType, x, zeros);
  else
    result = tosa::AddOp::create(b, loc, resultType, x, zeros);
  ctx.setOutput(0, result);
  return success();
}

} // namespace

void registerShapeConverters(OpConverterRegistry &r) {
  r.add(kOnnxDomain, "Shape", convertShape, {"start", "end"});
  r.add(kOnnxDomain, "Reshape", convertReshape, {"allowzero"});
  r.add(kOnnxDomain, "Flatten", convertFlatten, {"axis"});
  r.add(kOnnxDomain, "Transpose", convertTranspose, {"perm"});
  r.add(kOnnxDomain, "Unsqueeze", convertUnsqueeze);
  r.add(kOnnxDomain, "Squeeze", convertSqueeze);
  r.add(kOnnxDomain, "Concat", convertConcat, {"axis"});
  r.add(kOnnxDomain, "Slice", convertSlice);
  r.add(kOnnxDomain, "Expand", convertExpand);
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
