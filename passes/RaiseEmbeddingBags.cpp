//===- RaiseEmbeddingBags.cpp - raise torch's EmbeddingBag loops ----------===//
//
// torch.onnx.export turns nn.EmbeddingBag into an ONNX Loop over the bags; the
// ONNX importer turns that Loop into an scf.for that pools one row per bag and
// inserts it with tensor.insert_slice. This pass recognises exactly that loop
// and replaces it with ember.table.from_tensor + ember.embedding_bag. Every
// step of the match checks an op kind, its operands and its constants; a loop
// that differs anywhere is left alone. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "passes/Passes.h"

namespace mlir {
namespace ember {
#define GEN_PASS_DEF_EMBERRAISEEMBEDDINGBAGS
#include "passes/Passes.h.inc"
} // namespace ember
} // namespace mlir

using namespace mlir;
using namespace mlir::ember;

namespace {

template <typename OpT> OpT def(Value v) {
  return v ? v.getDefiningOp<OpT>() : OpT();
}

/// True when `v` is an integer (or index) constant, scalar or splat, equal to
/// `expected`.
bool isConstInt(Value v, int64_t expected) {
  APInt value;
  if (v && matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue() == expected;
  DenseIntElementsAttr dense;
  if (v && matchPattern(v, m_Constant(&dense)) && dense.isSplat())
    return dense.getSplatValue<APInt>().getSExtValue() == expected;
  return false;
}

/// True when `type` is a ranked tensor of the given shape; with
/// `anyDynamic`, a dynamic entry of `shape` matches any size.
bool hasShape(Type type, ArrayRef<int64_t> shape, bool anyDynamic = false) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || ranked.getRank() != static_cast<int64_t>(shape.size()))
    return false;
  for (auto [actual, expected] : llvm::zip(ranked.getShape(), shape))
    if (actual != expected && !(anyDynamic && ShapedType::isDynamic(expected)))
      return false;
  return true;
}

/// True when `v` is the size of dim 0 of the 1-D tensor `src`: a
/// `tensor.dim %src, 0`, or a constant equal to its static size.
bool isSizeOf(Value v, Value src) {
  if (auto dim = def<tensor::DimOp>(v))
    return dim.getSource() == src && isConstInt(dim.getIndex(), 0);
  auto type = dyn_cast<RankedTensorType>(src.getType());
  return type && type.getRank() == 1 && !type.isDynamicDim(0) &&
         isConstInt(v, type.getDimSize(0));
}

/// Matches `op(a, b)` of a commutative op in either operand order.
template <typename OpT, typename FA, typename FB>
bool matchCommutative(Value v, FA fa, FB fb) {
  auto op = def<OpT>(v);
  if (!op)
    return false;
  Value l = op->getOperand(0), r = op->getOperand(1);
  return (fa(l) && fb(r)) || (fa(r) && fb(l));
}

/// The importer's ONNX Slice bound for a run-time bound `x` on a dim of size
/// `n`: `min(max(x < 0 ? x + n : x, 0), n)`. Returns x.
Value matchClampedBound(Value v, Value src) {
  auto min = def<arith::MinSIOp>(v);
  if (!min || !isSizeOf(min.getRhs(), src))
    return {};
  auto max = def<arith::MaxSIOp>(min.getLhs());
  if (!max || !isConstInt(max.getRhs(), 0))
    return {};
  auto select = def<arith::SelectOp>(max.getLhs());
  if (!select)
    return {};
  auto cmp = def<arith::CmpIOp>(select.getCondition());
  auto add = def<arith::AddIOp>(select.getTrueValue());
  Value x = select.getFalseValue();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::slt ||
      cmp.getLhs() != x || !isConstInt(cmp.getRhs(), 0) || !add ||
      add.getLhs() != x || !isSizeOf(add.getRhs(), src))
    return {};
  return x;
}

/// `i < 0 ? i + k : i` (tosa.select of tosa.greater(0, i) and tosa.add) or
/// `i` itself: the importer's Gather index wrapping. Returns whether `v` is
/// `i` possibly wrapped by `k`.
bool isMaybeWrapped(Value v, Value i, int64_t k) {
  if (v == i)
    return true;
  auto select = def<tosa::SelectOp>(v);
  if (!select || select.getOnFalse() != i)
    return false;
  auto gt = def<tosa::GreaterOp>(select.getPred());
  auto add = def<tosa::AddOp>(select.getOnTrue());
  return gt && gt.getInput2() == i && isConstInt(gt.getInput1(), 0) && add &&
         add.getInput1() == i && isConstInt(add.getInput2(), k);
}

/// Matches the scalar `source[iv]` the importer emits for ONNX
/// `Unsqueeze(Gather(source, iter))` read back as an index:
/// `index_cast(extract(expand_shape(reshape(gather(reshape(source),
/// reshape(wrap(trunci(from_elements(index_cast(iv))))))))[0]))`.
/// Returns `source`.
Value matchElementAtIv(Value x, Value iv) {
  auto cast = def<arith::IndexCastOp>(x);
  if (!cast)
    return {};
  auto extract = def<tensor::ExtractOp>(cast.getIn());
  if (!extract || extract.getIndices().size() != 1 ||
      !isConstInt(extract.getIndices()[0], 0))
    return {};
  auto expand = def<tensor::ExpandShapeOp>(extract.getTensor());
  if (!expand)
    return {};
  auto scalar = def<tosa::ReshapeOp>(expand.getSrc());
  if (!scalar)
    return {};
  auto gather = def<tosa::GatherOp>(scalar.getInput1());
  if (!gather)
    return {};
  auto values = def<tosa::ReshapeOp>(gather.getValues());
  auto index = def<tosa::ReshapeOp>(gather.getIndices());
  if (!values || !index ||
      !hasShape(values.getType(), {1, ShapedType::kDynamic, 1}, true) ||
      !hasShape(index.getType(), {1, 1}) ||
      !hasShape(gather.getType(), {1, 1, 1}))
    return {};
  Value source = values.getInput1();
  auto sourceType = dyn_cast<RankedTensorType>(source.getType());
  if (!sourceType || sourceType.getRank() != 1 ||
      !sourceType.getElementType().isInteger(64))
    return {};
  // The iteration number: trunci(from_elements(index_cast(iv))).
  Value wrapped = index.getInput1();
  Value i;
  if (auto select = def<tosa::SelectOp>(wrapped))
    i = select.getOnFalse();
  else
    i = wrapped;
  auto trunc = def<arith::TruncIOp>(i);
  if (!trunc)
    return {};
  auto elements = def<tensor::FromElementsOp>(trunc.getIn());
  if (!elements || elements.getElements().size() != 1)
    return {};
  auto ivCast = def<arith::IndexCastOp>(elements.getElements()[0]);
  if (!ivCast || ivCast.getIn() != iv)
    return {};
  // The iteration number is never negative, so wrapping by any constant
  // leaves it unchanged; only accept the importer's own form.
  if (wrapped != i) {
    if (sourceType.isDynamicDim(0) ||
        !isMaybeWrapped(wrapped, i, sourceType.getDimSize(0)))
      return {};
  }
  return source;
}

/// The bag bounds read in the body: `start = bounds[iv]` and
/// `end = boundsTail[iv]`, clamped to the size of the sliced tensor.
struct BagBounds {
  Value startSource, endSource; // tensors indexed by the iteration number
  Value start, len;             // the slice's offset and size values
};

/// Matches `tensor.extract_slice %src[start] [len] [1]` whose start is the
/// clamped `startSource[iv]` and whose length is
/// `max(clamp(endSource[iv]) - start, 0)`.
bool matchBagSlice(tensor::ExtractSliceOp slice, Value iv, BagBounds &bounds) {
  Value src = slice.getSource();
  if (slice.getType().getRank() != 1 || slice.getMixedOffsets().size() != 1 ||
      !isConstantIntValue(slice.getMixedStrides()[0], 1))
    return false;
  Value start = dyn_cast<Value>(slice.getMixedOffsets()[0]);
  Value len = dyn_cast<Value>(slice.getMixedSizes()[0]);
  if (!start || !len)
    return false;
  auto maxLen = def<arith::MaxSIOp>(len);
  if (!maxLen || !isConstInt(maxLen.getRhs(), 0))
    return false;
  auto sub = def<arith::SubIOp>(maxLen.getLhs());
  if (!sub || sub.getRhs() != start)
    return false;
  Value startX = matchClampedBound(start, src);
  Value endX = matchClampedBound(sub.getLhs(), src);
  if (!startX || !endX)
    return false;
  Value startSource = matchElementAtIv(startX, iv);
  Value endSource = matchElementAtIv(endX, iv);
  if (!startSource || !endSource)
    return false;
  bounds = {startSource, endSource, start, len};
  return true;
}

/// Matches `tensor.extract_slice %bounds[1] [size - 1] [1]` (ONNX
/// `Slice(bounds, 1, INT64_MAX)` as the importer writes it, static or with
/// run-time clamping). Returns %bounds.
Value matchTail(Value v) {
  auto slice = def<tensor::ExtractSliceOp>(v);
  if (!slice || slice.getType().getRank() != 1 ||
      !isConstantIntValue(slice.getMixedStrides()[0], 1))
    return {};
  Value bounds = slice.getSource();
  auto boundsType = cast<RankedTensorType>(bounds.getType());
  OpFoldResult offset = slice.getMixedOffsets()[0];
  OpFoldResult size = slice.getMixedSizes()[0];
  if (!boundsType.isDynamicDim(0)) {
    if (isConstantIntValue(offset, 1) &&
        isConstantIntValue(size, boundsType.getDimSize(0) - 1))
      return bounds;
    return {};
  }
  // offset = min(1, n); size = max(min(INT64_MAX, n) - offset, 0).
  Value offsetValue = dyn_cast<Value>(offset);
  Value sizeValue = dyn_cast<Value>(size);
  if (!offsetValue || !sizeValue)
    return {};
  auto isN = [&](Value x) { return isSizeOf(x, bounds); };
  if (!matchCommutative<arith::MinSIOp>(
          offsetValue, [](Value x) { return isConstInt(x, 1); }, isN))
    return {};
  auto max = def<arith::MaxSIOp>(sizeValue);
  if (!max || !isConstInt(max.getRhs(), 0))
    return {};
  auto sub = def<arith::SubIOp>(max.getLhs());
  if (!sub || sub.getRhs() != offsetValue ||
      !matchCommutative<arith::MinSIOp>(
          sub.getLhs(),
          [](Value x) {
            return isConstInt(x, std::numeric_limits<int64_t>::max());
          },
          isN))
    return {};
  return bounds;
}

/// The values of a 1-D integer constant.
std::optional<SmallVector<int64_t>> constantValues(Value v) {
  DenseIntElementsAttr dense;
  if (!v || !matchPattern(v, m_Constant(&dense)) ||
      dense.getType().getRank() != 1)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &x : dense.getValues<APInt>())
    values.push_back(x.getSExtValue());
  return values;
}

/// True when `ends` and `bounds` are constants (offsets known at import
/// time, e.g. torch's offsets of a 2-D input) and `ends == bounds[1:]`.
bool isConstantTail(Value ends, Value bounds) {
  auto endValues = constantValues(ends);
  auto boundValues = constantValues(bounds);
  return endValues && boundValues && !boundValues->empty() &&
         ArrayRef<int64_t>(*endValues) ==
             ArrayRef<int64_t>(*boundValues).drop_front();
}

/// True when the trip count `ub` is the number of elements of `ends`:
/// `index_cast(extract(from_elements(index_cast(dim(ends, 0)))))`, the
/// size itself, or a constant equal to its static size.
bool isTripCountOf(Value ub, Value ends) {
  if (isSizeOf(ub, ends))
    return true;
  auto toIndex = def<arith::IndexCastOp>(ub);
  if (!toIndex)
    return false;
  auto extract = def<tensor::ExtractOp>(toIndex.getIn());
  if (!extract || !extract.getIndices().empty())
    return false;
  // A trip count known at import time: a constant 0-D tensor.
  auto endsType = cast<RankedTensorType>(ends.getType());
  if (!endsType.isDynamicDim(0) &&
      isConstInt(extract.getTensor(), endsType.getDimSize(0)))
    return true;
  auto elements = def<tensor::FromElementsOp>(extract.getTensor());
  if (!elements || elements.getElements().size() != 1)
    return false;
  auto toI64 = def<arith::IndexCastOp>(elements.getElements()[0]);
  return toI64 && isSizeOf(toI64.getIn(), ends);
}

/// What a matched loop computes.
struct BagLoop {
  Value table;   // [R, D] float tensor
  Value ids;     // [N] i32/i64
  Value offsets; // [B] or [B + 1]
  bool includeLastOffset = false;
  /// Offsets known at import time whose last bound is the size of the ids:
  /// the replacement uses these (without the last bound) as a new constant
  /// of the ids' element type.
  std::optional<SmallVector<int64_t>> constantOffsets;
  Value perSampleWeights; // [N] float, optional
  PoolingMode pooling = PoolingMode::sum;
};

/// Peels the reshapes between [1, D] and [D] the importer leaves around the
/// pooled row (Squeeze then Unsqueeze of the scan output).
Value peelRowReshapes(Value v) {
  while (true) {
    if (auto e = def<tensor::ExpandShapeOp>(v))
      v = e.getSrc();
    else if (auto c = def<tensor::CollapseShapeOp>(v))
      v = c.getSrc();
    else
      return v;
  }
}

/// Matches the rows of the bag, `[n, D]`: `reshape(gather(reshape(table),
/// reshape(wrap(trunci(bag)))))`, optionally multiplied by
/// `expand_shape(psw slice)`. Fills the table, the bag slice and the
/// per-sample weights slice.
bool matchRows(Value rows, int64_t dim, tensor::ExtractSliceOp &bag,
               tensor::ExtractSliceOp &weightSlice, Value &table) {
  if (auto mul = def<tosa::MulOp>(rows)) {
    // Mul(rows, Unsqueeze(Slice(psw), 1)) with shift 0.
    if (!isConstInt(mul.getShift(), 0))
      return false;
    auto expand = def<tensor::ExpandShapeOp>(mul.getInput2());
    if (!expand || expand.getSrcType().getRank() != 1 ||
        expand.getResultType().getRank() != 2 ||
        expand.getResultType().getDimSize(1) != 1)
      return false;
    weightSlice = def<tensor::ExtractSliceOp>(expand.getSrc());
    if (!weightSlice)
      return false;
    rows = mul.getInput1();
  }
  auto rowsType = dyn_cast<RankedTensorType>(rows.getType());
  if (!rowsType || rowsType.getRank() != 2 || rowsType.getDimSize(1) != dim)
    return false;
  auto flat = def<tosa::ReshapeOp>(rows);
  if (!flat)
    return false;
  auto gather = def<tosa::GatherOp>(flat.getInput1());
  if (!gather)
    return false;
  auto tableView = def<tosa::ReshapeOp>(gather.getValues());
  auto indexView = def<tosa::ReshapeOp>(gather.getIndices());
  if (!tableView || !indexView)
    return false;
  table = tableView.getInput1();
  auto tableType = dyn_cast<RankedTensorType>(table.getType());
  if (!tableType || tableType.getRank() != 2 || !tableType.hasStaticShape() ||
      tableType.getDimSize(1) != dim)
    return false;
  int64_t tableRows = tableType.getDimSize(0);
  auto indexType = dyn_cast<RankedTensorType>(indexView.getInput1().getType());
  if (!indexType || indexType.getRank() != 1 ||
      !hasShape(tableView.getType(), {1, tableRows, dim}) ||
      !hasShape(indexView.getType(), {1, indexType.getDimSize(0)}) ||
      !hasShape(gather.getType(), {1, indexType.getDimSize(0), dim}))
    return false;
  Value wrapped = indexView.getInput1();
  Value ids32 = wrapped;
  if (auto select = def<tosa::SelectOp>(wrapped))
    ids32 = select.getOnFalse();
  if (!isMaybeWrapped(wrapped, ids32, tableType.getDimSize(0)))
    return false;
  Value bagValue = ids32;
  if (auto trunc = def<arith::TruncIOp>(ids32))
    bagValue = trunc.getIn();
  bag = def<tensor::ExtractSliceOp>(bagValue);
  return static_cast<bool>(bag);
}

/// Matches the pooled row `[1, D]` of one bag. Returns the rows reduced.
Value matchPooling(Value row, PoolingMode &pooling) {
  if (auto max = def<tosa::ReduceMaxOp>(row)) {
    pooling = PoolingMode::max;
    return max.getAxis() == 0 ? max.getInput() : Value();
  }
  Value sum = row;
  pooling = PoolingMode::sum;
  if (auto mul = def<tosa::MulOp>(row)) {
    // mean: sum * reciprocal(from_elements(sitofp(index_cast(1 * n)))).
    if (!isConstInt(mul.getShift(), 0))
      return {};
    auto recip = def<tosa::ReciprocalOp>(mul.getInput2());
    if (!recip)
      return {};
    auto elements = def<tensor::FromElementsOp>(recip.getInput1());
    if (!elements || elements.getElements().size() != 1)
      return {};
    auto toFloat = def<arith::SIToFPOp>(elements.getElements()[0]);
    if (!toFloat)
      return {};
    auto toI64 = def<arith::IndexCastOp>(toFloat.getIn());
    if (!toI64)
      return {};
    Value count = toI64.getIn();
    if (auto muli = def<arith::MulIOp>(count)) {
      if (isConstInt(muli.getLhs(), 1))
        count = muli.getRhs();
      else if (isConstInt(muli.getRhs(), 1))
        count = muli.getLhs();
      else
        return {};
    }
    auto dimOp = def<tensor::DimOp>(count);
    if (!dimOp || !isConstInt(dimOp.getIndex(), 0))
      return {};
    auto reduce = def<tosa::ReduceSumOp>(mul.getInput1());
    if (!reduce || reduce.getAxis() != 0 ||
        dimOp.getSource() != reduce.getInput())
      return {};
    pooling = PoolingMode::mean;
    sum = mul.getInput1();
  }
  auto reduce = def<tosa::ReduceSumOp>(sum);
  return reduce && reduce.getAxis() == 0 ? reduce.getInput() : Value();
}

/// Matches the whole loop. Everything the replacement uses is defined
/// outside of it.
bool matchBagLoop(scf::ForOp loop, BagLoop &m) {
  if (loop.getNumResults() != 1 || !isConstInt(loop.getLowerBound(), 0) ||
      !isConstInt(loop.getStep(), 1))
    return false;
  auto resultType = dyn_cast<RankedTensorType>(loop.getResult(0).getType());
  if (!resultType || resultType.getRank() != 2 || resultType.isDynamicDim(1) ||
      !isa<FloatType>(resultType.getElementType()))
    return false;
  int64_t dim = resultType.getDimSize(1);
  if (!def<tensor::EmptyOp>(loop.getInitArgs()[0]))
    return false;
  // The loop is replaced as a whole: nothing in it may have an effect
  // other than computing the yielded value.
  for (Operation &op : loop.getBody()->without_terminator())
    if (!isMemoryEffectFree(&op) || op.getNumRegions() != 0)
      return false;
  Value iv = loop.getInductionVar();
  Value acc = loop.getRegionIterArgs()[0];
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  auto insert = def<tensor::InsertSliceOp>(yield.getOperand(0));
  if (!insert || insert.getDest() != acc || !acc.hasOneUse())
    return false;
  // insert %row into %acc[iv, 0] [1, D] [1, 1]
  auto offsets = insert.getMixedOffsets();
  auto sizes = insert.getMixedSizes();
  auto strides = insert.getMixedStrides();
  if (offsets.size() != 2 || dyn_cast<Value>(offsets[0]) != iv ||
      !isConstantIntValue(offsets[1], 0) || !isConstantIntValue(sizes[0], 1) ||
      !isConstantIntValue(sizes[1], dim) ||
      !isConstantIntValue(strides[0], 1) || !isConstantIntValue(strides[1], 1))
    return false;
  Value row = peelRowReshapes(insert.getSource());
  auto rowType = dyn_cast<RankedTensorType>(row.getType());
  if (!rowType || rowType.getShape() != ArrayRef<int64_t>{1, dim} ||
      rowType.getElementType() != resultType.getElementType())
    return false;
  Value rows = matchPooling(row, m.pooling);
  if (!rows)
    return false;
  tensor::ExtractSliceOp bag, weightSlice;
  if (!matchRows(rows, dim, bag, weightSlice, m.table))
    return false;
  if (weightSlice && m.pooling != PoolingMode::sum)
    return false;
  if (cast<RankedTensorType>(m.table.getType()).getElementType() !=
      resultType.getElementType())
    return false;
  BagBounds bounds;
  if (!matchBagSlice(bag, iv, bounds))
    return false;
  m.ids = bag.getSource();
  Type idsElementType =
      cast<RankedTensorType>(m.ids.getType()).getElementType();
  if (!idsElementType.isInteger(64) && !idsElementType.isInteger(32))
    return false;
  if (weightSlice) {
    BagBounds weightBounds;
    if (!matchBagSlice(weightSlice, iv, weightBounds) ||
        weightBounds.startSource != bounds.startSource ||
        weightBounds.endSource != bounds.endSource)
      return false;
    m.perSampleWeights = weightSlice.getSource();
    if (!isa<FloatType>(cast<RankedTensorType>(m.perSampleWeights.getType())
                            .getElementType()))
      return false;
  }
  // starts = bounds, ends = bounds[1:], trip count = size(ends).
  Value boundsValue = bounds.startSource;
  if ((matchTail(bounds.endSource) != boundsValue &&
       !isConstantTail(bounds.endSource, boundsValue)) ||
      !isTripCountOf(loop.getUpperBound(), bounds.endSource))
    return false;
  // bounds = concat(offsets, [size(ids)]) without include_last_offset;
  // otherwise the bounds are the offsets themselves.
  m.offsets = boundsValue;
  m.includeLastOffset = true;
  if (auto concat = def<tosa::ConcatOp>(boundsValue)) {
    if (concat.getAxis() == 0 && concat.getInput1().size() == 2) {
      Value last = concat.getInput1()[1];
      bool isIdsSize = false;
      auto lastType = cast<RankedTensorType>(last.getType());
      if (lastType.getShape() == ArrayRef<int64_t>{1}) {
        if (auto elements = def<tensor::FromElementsOp>(last)) {
          auto toI64 = def<arith::IndexCastOp>(elements.getElements()[0]);
          isIdsSize = toI64 && isSizeOf(toI64.getIn(), m.ids);
        } else {
          auto idsType = cast<RankedTensorType>(m.ids.getType());
          isIdsSize = !idsType.isDynamicDim(0) &&
                      isConstInt(last, idsType.getDimSize(0));
        }
      }
      if (isIdsSize) {
        m.offsets = concat.getInput1()[0];
        m.includeLastOffset = false;
      }
    }
  }
  auto idsType = cast<RankedTensorType>(m.ids.getType());
  if (m.includeLastOffset && !idsType.isDynamicDim(0)) {
    auto values = constantValues(boundsValue);
    if (values && !values->empty() && values->back() == idsType.getDimSize(0)) {
      values->pop_back();
      m.constantOffsets = std::move(*values);
      m.includeLastOffset = false;
    }
  }
  // The lookup takes ids and offsets of one type: torch extends i32
  // offsets to i64 to concatenate them with len(ids).
  if (!m.constantOffsets && getElementTypeOrSelf(m.offsets) != idsElementType)
    if (auto ext = def<arith::ExtSIOp>(m.offsets))
      m.offsets = ext.getIn();
  if (!m.constantOffsets && getElementTypeOrSelf(m.offsets) != idsElementType)
    return false;
  auto offsetsType = cast<RankedTensorType>(m.offsets.getType());
  if (offsetsType.getRank() != 1 ||
      !(offsetsType.getElementType().isInteger(64) ||
        offsetsType.getElementType().isInteger(32)))
    return false;
  // What ember.embedding_bag's verifier requires beyond the match: one
  // weight per id, and a bag bound to end the last bag.
  if (m.perSampleWeights) {
    int64_t weights =
        cast<RankedTensorType>(m.perSampleWeights.getType()).getDimSize(0);
    if (!ShapedType::isDynamic(weights) && !idsType.isDynamicDim(0) &&
        weights != idsType.getDimSize(0))
      return false;
  }
  if (m.includeLastOffset && offsetsType.getDimSize(0) == 0)
    return false;
  for (Value v : {m.table, m.ids, m.offsets, m.perSampleWeights})
    if (v && !loop.isDefinedOutsideOfLoop(v))
      return false;
  return true;
}

std::optional<TableFormat> tableFormatOf(Type elementType) {
  if (elementType.isF32())
    return TableFormat::f32;
  if (elementType.isF16())
    return TableFormat::f16;
  if (elementType.isBF16())
    return TableFormat::bf16;
  return std::nullopt;
}

struct RaiseEmbeddingBagsPass
    : mlir::ember::impl::EmberRaiseEmbeddingBagsBase<RaiseEmbeddingBagsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      BagLoop m;
      if (!matchBagLoop(loop, m))
        continue;
      auto tableType = cast<RankedTensorType>(m.table.getType());
      std::optional<TableFormat> format =
          tableFormatOf(tableType.getElementType());
      if (!format)
        continue;
      OpBuilder b(loop);
      Location loc = loop.getLoc();
      MLIRContext *ctx = loop.getContext();
      auto type = TableType::get(ctx, tableType.getDimSize(0),
                                 tableType.getDimSize(1), *format);
      Value table = TableFromTensorOp::create(b, loc, type, m.table);
      if (m.constantOffsets) {
        auto type = RankedTensorType::get(
            {static_cast<int64_t>(m.constantOffsets->size())},
            getElementTypeOrSelf(m.ids));
        SmallVector<APInt> values;
        for (int64_t x : *m.constantOffsets)
          values.push_back(APInt(type.getElementTypeBitWidth(), x, true));
        m.offsets = arith::ConstantOp::create(
            b, loc, DenseIntElementsAttr::get(type, values));
      }
      int64_t bags = cast<RankedTensorType>(m.offsets.getType()).getDimSize(0);
      if (m.includeLastOffset && !ShapedType::isDynamic(bags))
        bags -= 1;
      auto loopType = cast<RankedTensorType>(loop.getResult(0).getType());
      auto bagType = RankedTensorType::get({bags, tableType.getDimSize(1)},
                                           tableType.getElementType());
      Value pooled = EmbeddingBagOp::create(
          b, loc, bagType, table, m.ids, m.offsets, m.perSampleWeights,
          PoolingModeAttr::get(ctx, m.pooling), IntegerAttr(),
          m.includeLastOffset ? b.getUnitAttr() : UnitAttr());
      if (bagType != loopType)
        pooled = tensor::CastOp::create(b, loc, loopType, pooled);
      loop.getResult(0).replaceAllUsesWith(pooled);
      loop.erase();
    }
  }
};

} // namespace
