//===- SimplifySlices.cpp - drop identity slices, merge nested ones -------===//
//
// Removes the slices that only restate a whole dimension (as importers write
// `x[:, :]` or ONNX `Slice(starts = 0, ends = INT64_MAX)`), merges the
// nested slices that ember-functionalize makes of writes through views, and
// merges adjacent slices that a concat puts back together. See
// the pass description in Passes.td for what upstream canonicalize already
// does and what this adds.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "passes/Passes.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir {
namespace ember {
#define GEN_PASS_DEF_EMBERSIMPLIFYSLICES
#include "passes/Passes.h.inc"
} // namespace ember
} // namespace mlir

using namespace mlir;

namespace {

/// Clamp constants at least this large stand for "to the end": ONNX writes
/// INT64_MAX (and frontends INT64_MAX-like values); no tensor dimension can
/// reach 2^62 elements.
constexpr int64_t kUnboundedEnd = int64_t(1) << 62;

/// True for an integer or index type of at least 64 bits.
bool isWideInteger(Type type) {
  return type.isIndex() || type.getIntOrFloatBitWidth() >= 64;
}

bool isZeroIndex(OpFoldResult value);

/// Sees through the index computations with which importers clamp a slice
/// size, as long as the value they compute is a tensor dimension (in
/// [0, 2^62)): `min(x, c)` with `c >= 2^62`, `max(x, c)` with `c <= 0`,
/// `x - 0`, `x + 0` and casts between index and 64-bit integers. Callers
/// accept the result only when it is a `tensor.dim`, which makes every step
/// exact.
Value stripSizeClamps(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op) &&
        isWideInteger(op->getOperand(0).getType()) &&
        isWideInteger(op->getResult(0).getType())) {
      value = op->getOperand(0);
      continue;
    }
    if (auto sub = dyn_cast<arith::SubIOp>(op);
        sub && isZeroIndex(sub.getRhs())) {
      value = sub.getLhs();
      continue;
    }
    if (isa<arith::AddIOp, arith::MinSIOp, arith::MinUIOp, arith::MaxSIOp,
            arith::MaxUIOp>(op)) {
      // The operand that leaves the other one unchanged.
      auto isNeutral = [&](Value operand) {
        std::optional<int64_t> constant = getConstantIntValue(operand);
        if (!constant)
          return false;
        if (isa<arith::AddIOp>(op))
          return *constant == 0;
        if (isa<arith::MinSIOp, arith::MinUIOp>(op))
          return *constant >= kUnboundedEnd;
        return *constant <= 0 && (*constant == 0 || isa<arith::MaxSIOp>(op));
      };
      if (isNeutral(op->getOperand(1))) {
        value = op->getOperand(0);
        continue;
      }
      if (isNeutral(op->getOperand(0))) {
        value = op->getOperand(1);
        continue;
      }
    }
    break;
  }
  return value;
}

/// True when `value` is provably >= 0: a tensor dimension (through the
/// clamps above) or a non-negative constant.
bool isNonNegative(Value value) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return *constant >= 0;
  return static_cast<bool>(
      stripSizeClamps(value).getDefiningOp<tensor::DimOp>());
}

/// True when `value` is provably 0: the constant, or `min(0, x)` of a
/// non-negative `x` (importers clamp a start of 0 to the dimension that
/// way), through wide index casts.
bool isZeroIndex(OpFoldResult value) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return *constant == 0;
  Operation *op = cast<Value>(value).getDefiningOp();
  if (!op)
    return false;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op) &&
      isWideInteger(op->getOperand(0).getType()) &&
      isWideInteger(op->getResult(0).getType()))
    return isZeroIndex(op->getOperand(0));
  if (isa<arith::MinSIOp, arith::MinUIOp>(op))
    return (isZeroIndex(op->getOperand(0)) &&
            isNonNegative(op->getOperand(1))) ||
           (isZeroIndex(op->getOperand(1)) && isNonNegative(op->getOperand(0)));
  return false;
}

/// The tensors that have the same runtime shape as `tensor`: itself, and
/// going up through insert_slice destinations and tensor.cast sources.
SmallVector<Value> sameShapeChain(Value tensor) {
  SmallVector<Value> chain{tensor};
  while (true) {
    if (auto insert = tensor.getDefiningOp<tensor::InsertSliceOp>())
      tensor = insert.getDest();
    else if (auto cast = tensor.getDefiningOp<tensor::CastOp>())
      tensor = cast.getSource();
    else
      return chain;
    chain.push_back(tensor);
  }
}

/// True when `size` is provably the whole of dim `dim` of `tensor`.
bool coversDim(OpFoldResult size, Value tensor, int64_t dim) {
  SmallVector<Value> chain = sameShapeChain(tensor);
  if (std::optional<int64_t> constant = getConstantIntValue(size))
    return llvm::any_of(chain, [&](Value same) {
      return cast<RankedTensorType>(same.getType()).getDimSize(dim) ==
             *constant;
    });
  auto dimOp =
      stripSizeClamps(cast<Value>(size)).getDefiningOp<tensor::DimOp>();
  if (!dimOp || dimOp.getConstantIndex() != dim)
    return false;
  Value dimSource = sameShapeChain(dimOp.getSource()).back();
  return chain.back() == dimSource;
}

/// True when the slice (offsets 0, strides 1, sizes the whole dims of
/// `tensor`) covers all of `tensor`.
bool coversWholeTensor(OffsetSizeAndStrideOpInterface slice, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (static_cast<int64_t>(slice.getMixedSizes().size()) != type.getRank())
    return false;
  for (auto [dim, offset, size, stride] :
       llvm::enumerate(slice.getMixedOffsets(), slice.getMixedSizes(),
                       slice.getMixedStrides())) {
    if (!isZeroIndex(offset) || !isConstantIntValue(stride, 1) ||
        !coversDim(size, tensor, dim))
      return false;
  }
  return true;
}

/// `value` with type `type`, through a tensor.cast when they differ.
Value castTo(PatternRewriter &rewriter, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(rewriter, loc, type, value);
}

/// extract_slice of the whole source (not rank-reducing) -> the source.
struct DropWholeExtractSlice : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getType().getRank() != op.getSourceType().getRank() ||
        !coversWholeTensor(op, op.getSource()))
      return rewriter.notifyMatchFailure(op, "not a whole-source slice");
    if (!tensor::CastOp::areCastCompatible(op.getSourceType(), op.getType()))
      return rewriter.notifyMatchFailure(op, "types not cast-compatible");
    rewriter.replaceOp(
        op, castTo(rewriter, op.getLoc(), op.getSource(), op.getType()));
    return success();
  }
};

/// insert_slice over the whole destination (not rank-expanding) -> the
/// inserted value.
struct DropWholeInsertSlice : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::InsertSliceOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getSourceType().getRank() != op.getDestType().getRank() ||
        !coversWholeTensor(op, op.getDest()))
      return rewriter.notifyMatchFailure(op, "not a whole-destination insert");
    if (!tensor::CastOp::areCastCompatible(op.getSourceType(), op.getType()))
      return rewriter.notifyMatchFailure(op, "types not cast-compatible");
    rewriter.replaceOp(
        op, castTo(rewriter, op.getLoc(), op.getSource(), op.getType()));
    return success();
  }
};

/// The constant values of a tosa shape operand.
std::optional<SmallVector<int64_t>> constantShape(Value shape) {
  auto constant = shape.getDefiningOp<tosa::ConstShapeOp>();
  if (!constant)
    return std::nullopt;
  return llvm::to_vector(constant.getValuesAttr().getValues<int64_t>());
}

/// tosa.slice with start 0 and size -1 (to the end) or the static size in
/// every dim -> the input.
struct DropWholeTosaSlice : OpRewritePattern<tosa::SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto inputType = dyn_cast<RankedTensorType>(op.getInput1().getType());
    auto resultType = dyn_cast<RankedTensorType>(op.getType());
    std::optional<SmallVector<int64_t>> start = constantShape(op.getStart());
    std::optional<SmallVector<int64_t>> size = constantShape(op.getSize());
    if (!inputType || !resultType || !start || !size)
      return rewriter.notifyMatchFailure(op, "needs ranked, constant shapes");
    for (int64_t dim = 0, e = inputType.getRank(); dim < e; ++dim) {
      bool whole =
          (*size)[dim] == -1 || (!inputType.isDynamicDim(dim) &&
                                 (*size)[dim] == inputType.getDimSize(dim));
      if ((*start)[dim] != 0 || !whole)
        return rewriter.notifyMatchFailure(op, "not a whole-input slice");
    }
    if (!tensor::CastOp::areCastCompatible(inputType, resultType))
      return rewriter.notifyMatchFailure(op, "types not cast-compatible");
    rewriter.replaceOp(
        op, castTo(rewriter, op.getLoc(), op.getInput1(), resultType));
    return success();
  }
};

/// A write through a nested view, as ember-functionalize emits it:
///
///   %e = extract_slice %d [s1]
///   %i = insert_slice %v into %e [s2]
///   %r = insert_slice %i into %d [s1]
///
/// -> %r = insert_slice %v into %d [s1 ∘ s2]. Only for slices that keep the
/// rank.
struct MergeInsertThroughExtract : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::InsertSliceOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getSource().getDefiningOp<tensor::InsertSliceOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(outer, "source is not an insert");
    auto window = inner.getDest().getDefiningOp<tensor::ExtractSliceOp>();
    if (!window || window.getSource() != outer.getDest())
      return rewriter.notifyMatchFailure(
          outer, "inner insert is not into a slice of the destination");
    int64_t rank = outer.getDestType().getRank();
    if (window.getType().getRank() != rank ||
        outer.getSourceType().getRank() != rank ||
        inner.getSourceType().getRank() != rank)
      return rewriter.notifyMatchFailure(outer, "rank-changing slices");
    if (!window.isSameAs(outer, isEqualConstantIntOrValue))
      return rewriter.notifyMatchFailure(
          outer, "extracted and inserted windows differ");
    SmallVector<OpFoldResult> offsets, sizes, strides;
    if (failed(affine::mergeOffsetsSizesAndStrides(
            rewriter, outer.getLoc(), outer.getMixedOffsets(),
            outer.getMixedSizes(), outer.getMixedStrides(),
            llvm::SmallBitVector(rank), inner.getMixedOffsets(),
            inner.getMixedSizes(), inner.getMixedStrides(), offsets, sizes,
            strides)))
      return rewriter.notifyMatchFailure(outer, "cannot merge the slices");
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        outer, inner.getSource(), outer.getDest(), offsets, sizes, strides);
    return success();
  }
};

/// True when `a` and `b` are provably the same size: equal constants, the
/// same value, or `tensor.dim` of the same tensor and dimension.
bool isSameSize(OpFoldResult a, OpFoldResult b) {
  if (isEqualConstantIntOrValue(a, b))
    return true;
  auto dimA = dyn_cast_if_present<Value>(a)
                  ? cast<Value>(a).getDefiningOp<tensor::DimOp>()
                  : tensor::DimOp();
  auto dimB = dyn_cast_if_present<Value>(b)
                  ? cast<Value>(b).getDefiningOp<tensor::DimOp>()
                  : tensor::DimOp();
  if (!dimA || !dimB || dimA.getSource() != dimB.getSource())
    return false;
  std::optional<int64_t> indexA = dimA.getConstantIndex();
  return indexA && indexA == dimB.getConstantIndex();
}

/// Whether `next` reads the range of its source right after `slice` along
/// `axis`: the same source, unit strides, neither rank-reducing, the same
/// offsets and sizes on the other dims, and constant offset and size on the
/// axis with slice's offset + size == next's offset.
bool continuesAlong(tensor::ExtractSliceOp slice, tensor::ExtractSliceOp next,
                    int64_t axis) {
  if (slice.getSource() != next.getSource())
    return false;
  int64_t rank = slice.getSourceType().getRank();
  if (slice.getType().getRank() != rank || next.getType().getRank() != rank ||
      axis < 0 || axis >= rank)
    return false;
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets(),
                            sizes = slice.getMixedSizes(),
                            nextOffsets = next.getMixedOffsets(),
                            nextSizes = next.getMixedSizes();
  for (OpFoldResult stride :
       llvm::concat<OpFoldResult>(slice.getMixedStrides(),
                                  next.getMixedStrides()))
    if (!isConstantIntValue(stride, 1))
      return false;
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (dim == axis)
      continue;
    if (!isEqualConstantIntOrValue(offsets[dim], nextOffsets[dim]) ||
        !isSameSize(sizes[dim], nextSizes[dim]))
      return false;
  }
  std::optional<int64_t> offset = getConstantIntValue(offsets[axis]),
                         size = getConstantIntValue(sizes[axis]),
                         nextOffset = getConstantIntValue(nextOffsets[axis]);
  return offset && size && nextOffset && *offset + *size == *nextOffset;
}

/// A concat of adjacent slices of one tensor along the concat axis reads
/// one range of it:
///
///   concat(%a, extract_slice %x[0, 0] [%n, 64], extract_slice %x[0, 64]
///          [%n, 64]) {axis = 1}
///
/// -> concat(%a, extract_slice %x[0, 0] [%n, 128]) (and when nothing else
/// is left, the slice itself). With DropWholeExtractSlice, the columns a
/// sharded model's output dist gives back in order and the model
/// concatenates are the all-to-all's result, with no copy.
template <typename ConcatOp>
struct MergeAdjacentSlicesInConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern<ConcatOp>::OpRewritePattern;

  static int64_t axisOf(tosa::ConcatOp op) { return op.getAxis(); }
  static int64_t axisOf(tensor::ConcatOp op) { return op.getDim(); }

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    int64_t axis = axisOf(op);
    // Runs of operands [begin, end) that continue one another.
    SmallVector<std::pair<size_t, size_t>> runs;
    ValueRange operands = op->getOperands();
    for (size_t i = 0; i < operands.size(); ++i) {
      auto slice = operands[i].getDefiningOp<tensor::ExtractSliceOp>();
      size_t end = i + 1;
      while (slice && end < operands.size()) {
        auto next = operands[end].getDefiningOp<tensor::ExtractSliceOp>();
        if (!next || !continuesAlong(slice, next, axis))
          break;
        slice = next;
        ++end;
      }
      runs.push_back({i, end});
      i = end - 1;
    }
    if (runs.size() == operands.size())
      return rewriter.notifyMatchFailure(op, "no adjacent slices to merge");
    SmallVector<Value> merged;
    for (auto [begin, end] : runs) {
      if (end - begin == 1) {
        merged.push_back(operands[begin]);
        continue;
      }
      auto first = operands[begin].template getDefiningOp<tensor::ExtractSliceOp>();
      SmallVector<OpFoldResult> sizes = first.getMixedSizes();
      int64_t width = 0;
      for (size_t k = begin; k < end; ++k)
        width += *getConstantIntValue(
            operands[k]
                .template getDefiningOp<tensor::ExtractSliceOp>()
                .getMixedSizes()[axis]);
      sizes[axis] = rewriter.getIndexAttr(width);
      merged.push_back(tensor::ExtractSliceOp::create(
          rewriter, first.getLoc(), first.getSource(), first.getMixedOffsets(),
          sizes, first.getMixedStrides()));
    }
    Type type = op.getType();
    if (merged.size() == 1) {
      if (!tensor::CastOp::areCastCompatible(merged.front().getType(), type))
        return rewriter.notifyMatchFailure(op, "types not cast-compatible");
      rewriter.replaceOp(op,
                         castTo(rewriter, op.getLoc(), merged.front(), type));
      return success();
    }
    Operation *replacement = rewriter.clone(*op);
    replacement->setOperands(merged);
    rewriter.replaceOp(op, replacement->getResults());
    return success();
  }
};

struct SimplifySlicesPass
    : public mlir::ember::impl::EmberSimplifySlicesBase<SimplifySlicesPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<DropWholeExtractSlice, DropWholeInsertSlice,
                 DropWholeTosaSlice, MergeInsertThroughExtract,
                 MergeAdjacentSlicesInConcat<tosa::ConcatOp>,
                 MergeAdjacentSlicesInConcat<tensor::ConcatOp>>(context);
    // Upstream: extract_slice of extract_slice (and rank-reducing
    // insert_slice chains), and the tensor slice/cast canonicalizations.
    tensor::populateMergeConsecutiveInsertExtractSlicePatterns(patterns);
    tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, context);
    tensor::InsertSliceOp::getCanonicalizationPatterns(patterns, context);
    tensor::CastOp::getCanonicalizationPatterns(patterns, context);
    FrozenRewritePatternSet frozen(std::move(patterns));

    // Only slices and concats (and what the rewrites create) are touched:
    // other ops keep their form even where canonicalize would fold them.
    SmallVector<Operation *> slices;
    getOperation()->walk([&](Operation *op) {
      if (isa<tensor::ExtractSliceOp, tensor::InsertSliceOp, tosa::SliceOp,
              tensor::CastOp, tosa::ConcatOp, tensor::ConcatOp>(op))
        slices.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(slices, frozen, config))) {
      getOperation()->emitError(
          "ember-simplify-slices did not converge (patterns keep rewriting)");
      return signalPassFailure();
    }
  }
};

} // namespace
