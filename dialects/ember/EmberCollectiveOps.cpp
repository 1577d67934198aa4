//===- EmberCollectiveOps.cpp - asynchronous collectives ------------------===//
//
// Verifiers, folders and canonicalization patterns of the collective ops and
// of ember.wait / ember.ready.
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberShardingAttrs.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <limits>

using namespace mlir;
using namespace mlir::ember;

namespace {

std::string formatList(ArrayRef<int64_t> values) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(values, os);
  os << "]";
  return text;
}

/// Sum of non-negative per-rank entries, saturating at INT64_MAX (the
/// verifiers then report a mismatch instead of overflowing).
int64_t sum(ArrayRef<int64_t> values) {
  int64_t total = 0;
  for (int64_t v : values) {
    if (v > std::numeric_limits<int64_t>::max() - total)
      return std::numeric_limits<int64_t>::max();
    total += v;
  }
  return total;
}

/// A per-rank list attribute: one non-negative entry per rank of the group.
LogicalResult verifyPerRankList(Operation *op, StringRef name,
                                ArrayRef<int64_t> values, int64_t groupSize) {
  if (static_cast<int64_t>(values.size()) != groupSize)
    return op->emitOpError()
           << "'" << name << "' has " << values.size()
           << " entries but the group has " << groupSize << " ranks";
  for (auto [i, v] : llvm::enumerate(values))
    if (v < 0)
      return op->emitOpError()
             << "'" << name << "' entry " << i << " is negative (" << v << ")";
  return success();
}

/// The ranked tensor an op's awaitable result carries.
FailureOr<RankedTensorType> getPayloadTensor(Operation *op, Value result) {
  auto awaitable = cast<AwaitableType>(result.getType());
  auto tensor = dyn_cast<RankedTensorType>(awaitable.getValueType());
  if (!tensor)
    return op->emitOpError()
           << "result must be an awaitable of a ranked tensor, got "
           << awaitable;
  return tensor;
}

/// A codec other than `none` changes the wire format of floats only.
LogicalResult verifyCodec(Operation *op, std::optional<CommCodec> codec,
                          Type elementType) {
  if (!codec || *codec == CommCodec::none || isa<FloatType>(elementType))
    return success();
  return op->emitOpError() << "codec " << stringifyCommCodec(*codec)
                           << " needs a floating-point payload, got element "
                              "type "
                           << elementType;
}

LogicalResult verifyReduction(Operation *op, ReduceKind reduction,
                              Type elementType) {
  if (reduction != ReduceKind::mean || isa<FloatType>(elementType))
    return success();
  return op->emitOpError() << "reduction mean needs a floating-point payload, "
                              "got element type "
                           << elementType;
}

/// The input has a leading (row) dimension: rank >= 1.
LogicalResult verifyHasRows(Operation *op, RankedTensorType input) {
  if (input.getRank() >= 1)
    return success();
  return op->emitOpError() << "input must have a row dimension (rank >= 1), "
                              "got "
                           << input;
}

/// Same element type and rank, same sizes in every dimension but the first:
/// what collectives that move rows keep.
LogicalResult verifySameRowShape(Operation *op, RankedTensorType input,
                                 RankedTensorType result) {
  if (result.getElementType() != input.getElementType())
    return op->emitOpError()
           << "result element type " << result.getElementType()
           << " differs from the input's " << input.getElementType();
  if (result.getRank() != input.getRank())
    return op->emitOpError() << "result has rank " << result.getRank()
                             << " but the input has rank " << input.getRank();
  for (int64_t d = 1; d < input.getRank(); ++d) {
    int64_t in = input.getDimSize(d), out = result.getDimSize(d);
    if (!ShapedType::isDynamic(in) && !ShapedType::isDynamic(out) && in != out)
      return op->emitOpError() << "result dim " << d << " is " << out
                               << " but the input's is " << in;
  }
  return success();
}

bool isStatic(int64_t size) { return !ShapedType::isDynamic(size); }

/// Rows of an even split (reduce-scatter, pooled all-to-all without batch
/// sizes): the input has groupSize times the result's rows.
LogicalResult verifyEvenSplitRows(Operation *op, int64_t groupSize,
                                  int64_t inputRows, int64_t resultRows) {
  if (isStatic(inputRows) && inputRows % groupSize != 0)
    return op->emitOpError()
           << "input has " << inputRows
           << " rows, which do not split evenly over " << groupSize << " ranks";
  if (isStatic(inputRows) && isStatic(resultRows) &&
      resultRows != inputRows / groupSize)
    return op->emitOpError()
           << "result has " << resultRows << " rows but an even split of "
           << inputRows << " rows over " << groupSize << " ranks gives "
           << inputRows / groupSize;
  return success();
}

/// The keys group position `rank` receives in a KJT all-to-all.
ArrayRef<Attribute> keysOfRank(ArrayAttr keys, ArrayRef<int64_t> keySplits,
                               size_t rank) {
  int64_t begin = sum(keySplits.take_front(rank));
  return keys.getValue().slice(begin, keySplits[rank]);
}

/// key_splits: one entry per rank, summing to the number of keys.
LogicalResult verifyKeySplits(Operation *op, ArrayRef<int64_t> keySplits,
                              GroupAttr group, KeyedJaggedTensorType input) {
  if (failed(verifyPerRankList(op, "key_splits", keySplits, group.getSize())))
    return failure();
  if (sum(keySplits) != input.getNumKeys())
    return op->emitOpError()
           << "'key_splits' sends " << sum(keySplits)
           << " keys in all but the input KJT has " << input.getNumKeys();
  return success();
}

/// The splits exchanged by phase 1: tensor<W x S x i64>.
RankedTensorType getSplitsType(MLIRContext *context, int64_t groupSize,
                               bool weighted) {
  return RankedTensorType::get(
      {groupSize, KJTAllToAllSplitsOp::getNumSplitEntries(weighted)},
      IntegerType::get(context, 64));
}

std::string describeSplitsRows(bool weighted) {
  return weighted ? "one row per rank: lengths, values, weights, batch size"
                  : "one row per rank: lengths, values, batch size";
}

} // namespace

//===----------------------------------------------------------------------===//
// KJT all-to-all
//===----------------------------------------------------------------------===//

LogicalResult KJTAllToAllSplitsOp::verify() {
  auto input = getInput().getType();
  if (failed(verifyKeySplits(*this, getKeySplits(), getGroup(), input)))
    return failure();
  RankedTensorType expected =
      getSplitsType(getContext(), getGroup().getSize(), input.isWeighted());
  auto awaitable = cast<AwaitableType>(getResult().getType());
  if (awaitable.getValueType() != expected)
    return emitOpError() << "result must be an awaitable of " << expected
                         << " (" << describeSplitsRows(input.isWeighted())
                         << "), got " << awaitable;
  return success();
}

LogicalResult KJTAllToAllTensorsOp::verify() {
  auto input = getInput().getType();
  int64_t groupSize = getGroup().getSize();
  ArrayRef<int64_t> keySplits = getKeySplits();
  if (failed(verifyKeySplits(*this, keySplits, getGroup(), input)))
    return failure();

  RankedTensorType expectedSplits =
      getSplitsType(getContext(), groupSize, input.isWeighted());
  if (getSplits().getType() != expectedSplits)
    return emitOpError() << "'splits' must be " << expectedSplits << " ("
                         << describeSplitsRows(input.isWeighted()) << "), got "
                         << getSplits().getType();

  if (std::optional<ArrayRef<int64_t>> batchSizes = getBatchSizePerRank())
    if (failed(verifyPerRankList(*this, "batch_size_per_rank", *batchSizes,
                                 groupSize)))
      return failure();

  auto awaitable = cast<AwaitableType>(getResult().getType());
  auto output = dyn_cast<KeyedJaggedTensorType>(awaitable.getValueType());
  if (!output)
    return emitOpError() << "result must be an awaitable of a KJT, got "
                         << awaitable;

  // This rank receives the keys of one position of the group.
  ArrayRef<Attribute> outputKeys = output.getKeys().getValue();
  bool matchesARank =
      llvm::any_of(llvm::seq<size_t>(0, keySplits.size()), [&](size_t rank) {
        return keysOfRank(input.getKeys(), keySplits, rank) == outputKeys;
      });
  if (!matchesARank) {
    InFlightDiagnostic diag = emitOpError()
                              << "result keys " << output.getKeys()
                              << " are not the keys of any rank: with "
                                 "key_splits "
                              << formatList(keySplits) << " the ranks receive ";
    llvm::interleave(
        llvm::seq<size_t>(0, keySplits.size()),
        [&](size_t rank) {
          diag << ArrayAttr::get(getContext(),
                                 keysOfRank(input.getKeys(), keySplits, rank));
        },
        [&] { diag << ", "; });
    return diag;
  }

  if (output.getValueType() != input.getValueType())
    return emitOpError() << "result values type " << output.getValueType()
                         << " differs from the input's "
                         << input.getValueType();
  if (output.getLengthType() != input.getLengthType())
    return emitOpError() << "result lengths type " << output.getLengthType()
                         << " differs from the input's "
                         << input.getLengthType();
  if (output.isWeighted() != input.isWeighted())
    return emitOpError() << "result must be "
                         << (input.isWeighted() ? "weighted" : "unweighted")
                         << " like the input";
  if (output.isVariableBatch() != input.isVariableBatch())
    return emitOpError() << "result must "
                         << (input.isVariableBatch() ? "" : "not ")
                         << "be variable_batch like the input";
  return success();
}

//===----------------------------------------------------------------------===//
// Embedding all-to-all
//===----------------------------------------------------------------------===//

namespace {

/// segment_dims / segment_columns: both or neither; the segments cut each
/// position's columns in wire order (positive widths summing to its
/// dim_per_rank) and tile the result's columns exactly once.
LogicalResult verifyColumnSegments(PooledAllToAllOp op,
                                   ArrayRef<int64_t> dims) {
  std::optional<ArrayRef<int64_t>> widths = op.getSegmentDims();
  std::optional<ArrayRef<int64_t>> columns = op.getSegmentColumns();
  if (!widths && !columns)
    return success();
  if (!widths || !columns)
    return op.emitOpError()
           << "takes segment_dims and segment_columns together, got only "
           << (widths ? "segment_dims" : "segment_columns");
  if (widths->size() != columns->size())
    return op.emitOpError() << "has " << widths->size()
                            << " segment_dims but " << columns->size()
                            << " segment_columns";
  size_t s = 0;
  for (auto [position, dim] : llvm::enumerate(dims)) {
    for (int64_t left = dim; left > 0; ++s) {
      if (s == widths->size())
        return op.emitOpError()
               << "segment_dims " << formatList(*widths)
               << " end before the columns of position " << position
               << " (dim_per_rank = " << formatList(dims) << ")";
      int64_t width = (*widths)[s];
      if (width <= 0)
        return op.emitOpError() << "segment_dims[" << s << "] = " << width
                                << " must be positive";
      if (width > left)
        return op.emitOpError()
               << "segment_dims[" << s << "] = " << width
               << " crosses the end of position " << position
               << "'s columns (" << left << " of its dim_per_rank " << dim
               << " left)";
      left -= width;
    }
  }
  if (s != widths->size())
    return op.emitOpError() << "segment_dims " << formatList(*widths)
                            << " has more segments than the columns of "
                               "dim_per_rank "
                            << formatList(dims) << " (" << s << ")";
  int64_t total = sum(dims);
  auto byColumn = llvm::to_vector(llvm::seq<size_t>(0, columns->size()));
  llvm::stable_sort(byColumn, [&](size_t x, size_t y) {
    return (*columns)[x] < (*columns)[y];
  });
  int64_t end = 0;
  size_t previous = 0;
  for (auto [k, seg] : llvm::enumerate(byColumn)) {
    int64_t begin = (*columns)[seg], width = (*widths)[seg];
    if (begin < 0 || begin > total - width)
      return op.emitOpError()
             << "segment " << seg << " covers result columns [" << begin
             << ", " << begin + width << "), outside [0, " << total << ")";
    if (k > 0 && begin < end)
      return op.emitOpError()
             << "segments " << previous << " and " << seg
             << " overlap in the result (columns " << begin << " to "
             << end << ")";
    end = begin + width;
    previous = seg;
  }
  return success();
}

} // namespace

bool PooledAllToAllOp::permutesColumns() {
  std::optional<ArrayRef<int64_t>> widths = getSegmentDims();
  std::optional<ArrayRef<int64_t>> columns = getSegmentColumns();
  if (!widths || !columns || widths->size() != columns->size())
    return false;
  int64_t wire = 0;
  for (auto [width, column] : llvm::zip_equal(*widths, *columns)) {
    if (column != wire)
      return true;
    wire += width;
  }
  return false;
}

LogicalResult PooledAllToAllOp::verify() {
  int64_t groupSize = getGroup().getSize();
  ArrayRef<int64_t> dims = getDimPerRank();
  if (failed(verifyPerRankList(*this, "dim_per_rank", dims, groupSize)))
    return failure();
  std::optional<ArrayRef<int64_t>> batchSizes = getBatchSizePerRank();
  if (batchSizes && failed(verifyPerRankList(*this, "batch_size_per_rank",
                                             *batchSizes, groupSize)))
    return failure();

  RankedTensorType input = getInput().getType();
  if (input.getRank() != 2)
    return emitOpError() << "input must be 2-D [global batch, local dims], got "
                         << input;
  FailureOr<RankedTensorType> result = getPayloadTensor(*this, getResult());
  if (failed(result))
    return failure();
  if (result->getRank() != 2)
    return emitOpError() << "result must be 2-D [local batch, all dims], got "
                         << *result;
  if (result->getElementType() != input.getElementType())
    return emitOpError() << "result element type " << result->getElementType()
                         << " differs from the input's "
                         << input.getElementType();
  if (failed(verifyCodec(*this, getCodec(), input.getElementType())))
    return failure();

  // Columns: this rank's tables in, every rank's tables out.
  int64_t inDims = input.getDimSize(1), outDims = result->getDimSize(1);
  if (isStatic(outDims) && outDims != sum(dims))
    return emitOpError() << "result has " << outDims
                         << " columns but dim_per_rank sums to " << sum(dims);
  if (isStatic(inDims) && !llvm::is_contained(dims, inDims))
    return emitOpError() << "input has " << inDims
                         << " columns but no rank of the group contributes "
                         << inDims << " (dim_per_rank = " << formatList(dims)
                         << ")";

  if (failed(verifyColumnSegments(*this, dims)))
    return failure();

  // Rows: the global batch in, this rank's batch slice out.
  int64_t inRows = input.getDimSize(0), outRows = result->getDimSize(0);
  if (getBatchOf()) {
    if (batchSizes)
      return emitOpError("takes batch_size_per_rank or batch_of, not both");
    return success(); // the batch sizes are known at run time only
  }
  if (!batchSizes)
    return verifyEvenSplitRows(*this, groupSize, inRows, outRows);
  if (isStatic(inRows) && inRows != sum(*batchSizes))
    return emitOpError() << "input has " << inRows
                         << " rows but batch_size_per_rank sums to "
                         << sum(*batchSizes);
  if (isStatic(outRows) && !llvm::is_contained(*batchSizes, outRows))
    return emitOpError() << "result has " << outRows
                         << " rows but no rank of the group has batch size "
                         << outRows << " (batch_size_per_rank = "
                         << formatList(*batchSizes) << ")";
  return success();
}

LogicalResult SequenceAllToAllOp::verify() {
  if (failed(verifyKeySplits(*this, getKeySplits(), getGroup(),
                             getSent().getType())))
    return failure();
  RankedTensorType input = getInput().getType();
  if (failed(verifyHasRows(*this, input)))
    return failure();
  FailureOr<RankedTensorType> result = getPayloadTensor(*this, getResult());
  if (failed(result) || failed(verifySameRowShape(*this, input, *result)))
    return failure();
  return verifyCodec(*this, getCodec(), input.getElementType());
}

//===----------------------------------------------------------------------===//
// Reductions and gathers
//===----------------------------------------------------------------------===//

LogicalResult ReduceScatterOp::verify() {
  int64_t groupSize = getGroup().getSize();
  RankedTensorType input = getInput().getType();
  if (failed(verifyHasRows(*this, input)))
    return failure();
  FailureOr<RankedTensorType> result = getPayloadTensor(*this, getResult());
  if (failed(result) || failed(verifySameRowShape(*this, input, *result)) ||
      failed(verifyReduction(*this, getReduction(), input.getElementType())) ||
      failed(verifyCodec(*this, getCodec(), input.getElementType())))
    return failure();

  int64_t inRows = input.getDimSize(0), outRows = result->getDimSize(0);
  std::optional<ArrayRef<int64_t>> splits = getSplits();
  if (getBatchOf()) {
    if (splits)
      return emitOpError("takes splits or batch_of, not both");
    return success(); // the batch sizes are known at run time only
  }
  if (!splits)
    return verifyEvenSplitRows(*this, groupSize, inRows, outRows);
  if (failed(verifyPerRankList(*this, "splits", *splits, groupSize)))
    return failure();
  if (isStatic(inRows) && inRows != sum(*splits))
    return emitOpError() << "input has " << inRows
                         << " rows but splits sums to " << sum(*splits);
  if (isStatic(outRows) && !llvm::is_contained(*splits, outRows))
    return emitOpError() << "result has " << outRows
                         << " rows but no rank of the group receives "
                         << outRows << " (splits = " << formatList(*splits)
                         << ")";
  return success();
}

LogicalResult AllGatherOp::verify() {
  RankedTensorType input = getInput().getType();
  if (failed(verifyHasRows(*this, input)))
    return failure();
  FailureOr<RankedTensorType> result = getPayloadTensor(*this, getResult());
  if (failed(result) || failed(verifySameRowShape(*this, input, *result)) ||
      failed(verifyCodec(*this, getCodec(), input.getElementType())))
    return failure();
  int64_t groupSize = getGroup().getSize();
  int64_t inRows = input.getDimSize(0), outRows = result->getDimSize(0);
  if (isStatic(inRows) && isStatic(outRows)) {
    std::optional<int64_t> gathered = llvm::checkedMul(inRows, groupSize);
    if (!gathered || *gathered != outRows) {
      InFlightDiagnostic diag = emitOpError() << "result has " << outRows
                                              << " rows but gathering "
                                              << inRows << " rows from each of "
                                              << groupSize << " ranks gives ";
      if (gathered)
        diag << *gathered;
      else
        diag << "more than " << std::numeric_limits<int64_t>::max();
      return diag;
    }
  }
  if (!isStatic(inRows) && isStatic(outRows) && outRows % groupSize != 0)
    return emitOpError() << "result has " << outRows
                         << " rows, which is not a multiple of the group size "
                         << groupSize;
  return success();
}

LogicalResult AllReduceOp::verify() {
  RankedTensorType input = getInput().getType();
  auto awaitable = cast<AwaitableType>(getResult().getType());
  if (awaitable.getValueType() != input)
    return emitOpError() << "result must be an awaitable of the input type "
                         << input << ", got " << awaitable;
  if (failed(verifyReduction(*this, getReduction(), input.getElementType())))
    return failure();
  return verifyCodec(*this, getCodec(), input.getElementType());
}

//===----------------------------------------------------------------------===//
// Single-rank collectives
//===----------------------------------------------------------------------===//

namespace {

bool hasWireCodec(std::optional<CommCodec> codec) {
  return codec && *codec != CommCodec::none;
}
template <typename OpTy> bool hasWireCodec(OpTy op) {
  return hasWireCodec(op.getCodec());
}
bool hasWireCodec(KJTAllToAllTensorsOp) { return false; }

/// Whether the op puts the received columns in another order.
template <typename OpTy> bool reordersColumns(OpTy) { return false; }
bool reordersColumns(PooledAllToAllOp op) { return op.permutesColumns(); }

/// On a group of one rank, a collective whose semantics are the identity
/// (every rank keeps / receives exactly its own input) is `ember.ready` of its
/// input. Not with a codec: encoding rounds the values.
template <typename OpTy>
struct SingleRankCollectiveToReady : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (op.getGroup().getSize() != 1)
      return rewriter.notifyMatchFailure(op, "group has more than one rank");
    if (hasWireCodec(op))
      return rewriter.notifyMatchFailure(op, "codec changes the values");
    if (reordersColumns(op))
      return rewriter.notifyMatchFailure(op, "permutes the columns");
    Value input = op.getInput();
    auto awaitable = cast<AwaitableType>(op.getResult().getType());
    if (awaitable.getValueType() != input.getType())
      return rewriter.notifyMatchFailure(op, "result type differs from input");
    rewriter.replaceOpWithNewOp<ReadyOp>(op, input);
    return success();
  }
};

} // namespace

void KJTAllToAllTensorsOp::getCanonicalizationPatterns(
    RewritePatternSet &results, MLIRContext *context) {
  results.add<SingleRankCollectiveToReady<KJTAllToAllTensorsOp>>(context);
}
void PooledAllToAllOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                   MLIRContext *context) {
  results.add<SingleRankCollectiveToReady<PooledAllToAllOp>>(context);
}
void SequenceAllToAllOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                     MLIRContext *context) {
  results.add<SingleRankCollectiveToReady<SequenceAllToAllOp>>(context);
}
void ReduceScatterOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                  MLIRContext *context) {
  results.add<SingleRankCollectiveToReady<ReduceScatterOp>>(context);
}
void AllGatherOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<SingleRankCollectiveToReady<AllGatherOp>>(context);
}
void AllReduceOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<SingleRankCollectiveToReady<AllReduceOp>>(context);
}

//===----------------------------------------------------------------------===//
// Awaitables
//===----------------------------------------------------------------------===//

OpFoldResult WaitOp::fold(FoldAdaptor) {
  if (auto ready = getAwaitable().getDefiningOp<ReadyOp>())
    return ready.getValue();
  return {};
}
