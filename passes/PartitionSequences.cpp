//===- PartitionSequences.cpp - sharded sequence lookups in a rank program ===//
//
// The ember-partition pass's rewrite of sharded `ember.sequence_lookup`s
// (TorchRec's sharded EmbeddingCollection), one lookup at a time, in program
// order (so every rank issues the same collectives in the same order):
//
//   input dist   the lookup's ids become a one-key KJT; for a block of
//                columns held by several row shards it is kjt.bucketize'd
//                into one key per row block (blocks on ascending ranks);
//                kjt_all_to_all sends each key to its shard's rank
//   lookup       the rank that holds a shard looks up the ids of every rank
//                in its slice of the table; other ranks contribute no rows
//   output dist  sequence_all_to_all returns every id's row to the rank
//                that sent the id, in the order it sent them; row-wise
//                blocks are put back in input order with the unbucketize
//                permutation (a gather), column blocks concatenated
//
// The result is the jagged tensor of those rows with the ids' offsets.
// Data-parallel lookups stay as they are.
//
//===----------------------------------------------------------------------===//
#include "passes/PartitionSequences.h"
#include "passes/WeightData.h"

#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberShardingAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"

#include <cstring>
#include <map>
#include <string>

using namespace mlir;
using namespace mlir::ember;

namespace {

constexpr llvm::StringLiteral kShardingAttr = "ember.sharding";

/// The shards of one block of columns, by row offset.
struct ColumnBlock {
  int64_t colOffset = 0, numCols = 0;
  SmallVector<ShardAttr> shards;
};

/// The unweighted one-key KJT whose values and offsets make `ids`, or null.
Value sourceKjt(Value ids) {
  auto create = ids.getDefiningOp<JaggedCreateOp>();
  if (!create)
    return Value();
  auto values = create.getValues().getDefiningOp<KJTValuesOp>();
  auto offsets = create.getOffsets().getDefiningOp<KJTOffsetsOp>();
  if (!values || !offsets || values.getInput() != offsets.getInput())
    return Value();
  auto type = values.getInput().getType();
  if (type.getNumKeys() != 1 || type.isWeighted() || type.isVariableBatch())
    return Value();
  return values.getInput();
}

std::string keyOf(SequenceLookupOp op, unsigned index) {
  if (auto name = dyn_cast<NameLoc>(op.getLoc()))
    return name.getName().str();
  return "seq" + std::to_string(index);
}

/// Rows [row0, row0 + rows) x columns [col0, col0 + cols) of a 2-D constant
/// (quantized tables: whole rows of bytes, `col0` 0).
DenseElementsAttr sliceRows(DenseElementsAttr weights, int64_t row0,
                            int64_t rows, int64_t col0, int64_t cols) {
  auto type = cast<RankedTensorType>(weights.getType());
  int64_t width = type.getDimSize(1);
  if (row0 == 0 && rows == type.getDimSize(0) && col0 == 0 && cols == width)
    return weights;
  size_t elementBytes = type.getElementTypeBitWidth() / 8;
  auto sliceType = RankedTensorType::get({rows, cols}, type.getElementType());
  if (weights.isSplat())
    return DenseElementsAttr::get(sliceType,
                                  weights.getSplatValue<Attribute>());
  ArrayRef<char> raw = weights.getRawData();
  std::vector<char> data(static_cast<size_t>(rows * cols) * elementBytes);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(data.data() + r * cols * elementBytes,
                raw.data() + ((row0 + r) * width + col0) * elementBytes,
                cols * elementBytes);
  return DenseElementsAttr::getFromRawBuffer(sliceType, data);
}

/// A !tosa.shape constant (tosa.reshape's target; -1: the inferred dim).
Value constShape(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  auto type = tosa::shapeType::get(b.getContext(), values.size());
  auto attr = DenseIntElementsAttr::get(
      RankedTensorType::get({static_cast<int64_t>(values.size())},
                            b.getIndexType()),
      values);
  return tosa::ConstShapeOp::create(b, loc, type, attr);
}

class SequenceRewriter {
public:
  SequenceRewriter(MLIRContext *ctx, int64_t rank, int64_t worldSize)
      : rank_(rank), worldSize_(worldSize), b_(ctx) {}

  LogicalResult rewrite(SequenceLookupOp op, unsigned index);

private:
  /// The rows of `block` for every id of `ids`/`offsets`, in their order.
  FailureOr<Value> lookupBlock(SequenceLookupOp op, const std::string &key,
                               const ColumnBlock &block, Value ids,
                               Value offsets, ElementsAttr weights);
  /// Sends `kjt`'s keys by `keySplits`, looks the received ids up in
  /// `table` when this rank has one, and returns the rows to the senders.
  Value exchange(Value kjt, ArrayRef<int64_t> keySplits, Value table,
                 int64_t cols);

  int64_t rank_, worldSize_;
  OpBuilder b_;
  Location loc_ = UnknownLoc::get(b_.getContext());
  TableType tableType_;
};

Value SequenceRewriter::exchange(Value kjt, ArrayRef<int64_t> keySplits,
                                 Value table, int64_t cols) {
  MLIRContext *ctx = b_.getContext();
  Type f32 = b_.getF32Type();
  auto sendType = cast<KeyedJaggedTensorType>(kjt.getType());
  SmallVector<int64_t> ranks = llvm::to_vector(llvm::seq<int64_t>(0, worldSize_));
  auto group = GroupAttr::get(ctx, ranks);
  auto splitsType = RankedTensorType::get(
      {worldSize_, KJTAllToAllSplitsOp::getNumSplitEntries(false)},
      b_.getI64Type());
  auto splits = KJTAllToAllSplitsOp::create(
      b_, loc_, AwaitableType::get(ctx, splitsType), kjt,
      b_.getDenseI64ArrayAttr(keySplits), group);
  Value splitsValue = WaitOp::create(b_, loc_, splits);
  int64_t begin = 0;
  for (int64_t r = 0; r < rank_; ++r)
    begin += keySplits[r];
  SmallVector<StringRef> myKeys;
  for (int64_t k = 0; k < keySplits[rank_]; ++k)
    myKeys.push_back(sendType.getKey(begin + k));
  auto recvType = KeyedJaggedTensorType::get(ctx, myKeys,
                                             sendType.getValueType(),
                                             sendType.getLengthType(), false);
  auto tensors = KJTAllToAllTensorsOp::create(
      b_, loc_, AwaitableType::get(ctx, recvType), kjt, splitsValue,
      b_.getDenseI64ArrayAttr(keySplits), DenseI64ArrayAttr(), group);
  Value received = WaitOp::create(b_, loc_, tensors);

  auto rowsType = RankedTensorType::get({ShapedType::kDynamic, cols}, f32);
  Value rows;
  if (table) {
    // This rank's shard: the ids of every rank, one key, in sender order.
    Value ids = KJTValuesOp::create(b_, loc_, received);
    Value offsets = KJTOffsetsOp::create(
        b_, loc_, RankedTensorType::get({ShapedType::kDynamic}, b_.getI64Type()),
        received);
    auto idsType = JaggedTensorType::get(ctx, sendType.getValueType(),
                                         ArrayRef<int64_t>{});
    Value jagged = JaggedCreateOp::create(b_, loc_, idsType, ids, offsets);
    auto rowsJagged = JaggedTensorType::get(ctx, f32, ArrayRef<int64_t>{cols});
    Value looked =
        SequenceLookupOp::create(b_, loc_, rowsJagged, table, jagged);
    rows = JaggedValuesOp::create(b_, loc_, looked);
  } else {
    rows = arith::ConstantOp::create(
        b_, loc_,
        DenseElementsAttr::get(RankedTensorType::get({0, cols}, f32),
                               ArrayRef<float>{}));
  }
  auto back = SequenceAllToAllOp::create(
      b_, loc_, AwaitableType::get(ctx, rowsType), rows, kjt,
      b_.getDenseI64ArrayAttr(keySplits), group, CommCodecAttr());
  return WaitOp::create(b_, loc_, back);
}

FailureOr<Value> SequenceRewriter::lookupBlock(SequenceLookupOp op,
                                               const std::string &key,
                                               const ColumnBlock &block,
                                               Value ids, Value offsets,
                                               ElementsAttr weights) {
  MLIRContext *ctx = b_.getContext();
  Type f32 = b_.getF32Type();
  bool quantized = tableType_.isQuantized();
  int64_t storageCols =
      cast<RankedTensorType>(weights.getType()).getDimSize(1);
  auto tableOf = [&](ShardAttr shard) -> Value {
    if (shard.getRank() != rank_)
      return Value();
    ArrayRef<int64_t> offsetsAt = shard.getOffsets(), sizes = shard.getSizes();
    int64_t col0 = quantized ? 0 : offsetsAt[1];
    int64_t cols = quantized ? storageCols : sizes[1];
    // A table over a mapped file: a view or a deferred slice, never a copy.
    Value w =
        isa<DenseResourceElementsAttr>(weights)
            ? sliceOfMappedWeights(b_, loc_,
                                   cast<DenseResourceElementsAttr>(weights),
                                   offsetsAt[0], sizes[0], col0, cols)
            : Value(arith::ConstantOp::create(
                  b_, loc_,
                  sliceRows(cast<DenseElementsAttr>(weights), offsetsAt[0],
                            sizes[0], col0, cols)));
    auto type = TableType::get(ctx, sizes[0],
                               quantized ? tableType_.getDim() : sizes[1],
                               tableType_.getFormat());
    return TableFromTensorOp::create(b_, loc_, type, w);
  };
  Type idType = cast<RankedTensorType>(ids.getType()).getElementType();
  auto i64 = b_.getI64Type();
  auto kjtType = [&](ArrayRef<StringRef> keys) {
    return KeyedJaggedTensorType::get(ctx, keys, idType, i64, false);
  };
  // The ids' own one-key KJT when they are read from one (what
  // ember-split-embedding-collections makes), else one made of them.
  Value kjt = sourceKjt(op.getIds());
  if (!kjt)
    kjt = KJTCreateOp::create(b_, loc_, kjtType({StringRef(key)}), ids,
                              Value(), offsets, Value(), Value());
  SmallVector<int64_t> keySplits(worldSize_, 0);
  if (block.shards.size() == 1) {
    ShardAttr shard = block.shards.front();
    keySplits[shard.getRank()] = 1;
    return exchange(kjt, keySplits, tableOf(shard), block.numCols);
  }
  // Row blocks: uniform blocks (the last may be shorter) on ascending ranks,
  // as TorchRec's row-wise and table-row-wise plans place them.
  int64_t blockSize = block.shards.front().getSizes()[0];
  int64_t numBuckets = static_cast<int64_t>(block.shards.size());
  for (auto [i, shard] : llvm::enumerate(block.shards)) {
    int64_t rows = shard.getSizes()[0];
    bool last = i + 1 == block.shards.size();
    if (rows > blockSize || (!last && rows != blockSize) ||
        shard.getOffsets()[0] != static_cast<int64_t>(i) * blockSize)
      return op.emitError("cannot partition this sequence lookup: its row "
                          "shards must be blocks of ")
             << blockSize << " rows in row order (the last may be shorter)";
    if (i > 0 && shard.getRank() <= block.shards[i - 1].getRank())
      return op.emitError("cannot partition this sequence lookup: its row "
                          "shards must be on ascending ranks (shard ")
             << i << " is on rank " << shard.getRank() << ")";
    keySplits[shard.getRank()] = 1;
  }
  auto bucketize = KJTBucketizeOp::create(
      b_, loc_, kjt, ArrayRef<int64_t>{blockSize}, numBuckets);
  Value table;
  for (ShardAttr shard : block.shards)
    if (Value t = tableOf(shard))
      table = t;
  Value rows =
      exchange(bucketize.getResult(), keySplits, table, block.numCols);
  // The returned rows are bucket-major; row i of the input is
  // rows[perm[i]]: tosa.gather on [1, N_bucketized, C] with [1, N] indices.
  auto rows3 =
      RankedTensorType::get({1, ShapedType::kDynamic, block.numCols}, f32);
  Value values = tosa::ReshapeOp::create(
      b_, loc_, rows3, rows,
      constShape(b_, loc_, {1, -1, block.numCols}));
  Value perm = bucketize.getUnbucketizePermutation();
  auto index2 = RankedTensorType::get({1, ShapedType::kDynamic},
                                      b_.getI32Type());
  Value perm32 = arith::TruncIOp::create(
      b_, loc_, RankedTensorType::get({ShapedType::kDynamic}, b_.getI32Type()),
      perm);
  Value indices = tosa::ReshapeOp::create(b_, loc_, index2, perm32,
                                          constShape(b_, loc_, {1, -1}));
  Value gathered = tosa::GatherOp::create(b_, loc_, rows3, values, indices);
  return tosa::ReshapeOp::create(
             b_, loc_,
             RankedTensorType::get({ShapedType::kDynamic, block.numCols}, f32),
             gathered, constShape(b_, loc_, {-1, block.numCols}))
      .getResult();
}

LogicalResult SequenceRewriter::rewrite(SequenceLookupOp op, unsigned index) {
  auto sharding = op->getAttrOfType<ShardingAttr>(kShardingAttr);
  if (!sharding)
    return op.emitError("'") << kShardingAttr
                             << "' must be a #ember.sharding";
  op->removeAttr(kShardingAttr);
  if (sharding.isReplicated())
    return success(); // data parallel: every rank holds the table
  tableType_ = op.getTable().getType();
  auto from = op.getTable().getDefiningOp<TableFromTensorOp>();
  ElementsAttr weights;
  if (!from || !matchPattern(from.getWeights(), m_Constant(&weights)) ||
      !weightBytesOf(weights))
    return op.emitError("a sharded table must come from "
                        "'ember.table.from_tensor' of a constant");
  bool quantized = tableType_.isQuantized();
  // Column blocks, each a set of row shards.
  std::map<std::pair<int64_t, int64_t>, ColumnBlock> blocks;
  for (ShardAttr shard : sharding.getShards()) {
    ArrayRef<int64_t> at = shard.getOffsets(), sizes = shard.getSizes();
    if (shard.getRank() < 0 || shard.getRank() >= worldSize_)
      return op.emitError("a shard is on rank ")
             << shard.getRank() << " but the world has " << worldSize_
             << " ranks";
    if (quantized && (at[1] != 0 || sizes[1] != tableType_.getDim()))
      return op.emitError("a row-wise quantized table cannot be split by "
                          "columns");
    ColumnBlock &block = blocks[{at[1], sizes[1]}];
    block.colOffset = at[1];
    block.numCols = sizes[1];
    block.shards.push_back(shard);
  }
  int64_t cols = 0;
  for (auto &[where, block] : blocks) {
    if (block.colOffset != cols)
      return op.emitError("the shards' columns do not tile the table "
                          "(a block starts at column ")
             << block.colOffset << ", expected " << cols << ")";
    cols += block.numCols;
    llvm::sort(block.shards, [](ShardAttr x, ShardAttr y) {
      return x.getOffsets()[0] < y.getOffsets()[0];
    });
    int64_t rows = 0;
    for (ShardAttr shard : block.shards)
      rows = std::max(rows, shard.getOffsets()[0] + shard.getSizes()[0]);
    if (rows != tableType_.getRows())
      return op.emitError("the shards of columns [")
             << block.colOffset << ", " << block.colOffset + block.numCols
             << ") cover " << rows << " of " << tableType_.getRows()
             << " rows";
  }
  if (cols != tableType_.getDim())
    return op.emitError("the shards cover ")
           << cols << " of " << tableType_.getDim() << " columns";

  b_ = OpBuilder(op);
  loc_ = op.getLoc();
  Value ids = JaggedValuesOp::create(b_, loc_, op.getIds());
  Value offsets = JaggedOffsetsOp::create(
      b_, loc_, RankedTensorType::get({ShapedType::kDynamic}, b_.getI64Type()),
      op.getIds());
  std::string key = keyOf(op, index);
  SmallVector<Value> parts;
  for (auto &[where, block] : blocks) {
    FailureOr<Value> part =
        lookupBlock(op, key, block, ids, offsets, weights);
    if (failed(part))
      return failure();
    parts.push_back(*part);
  }
  auto resultType = op.getResult().getType();
  Type f32 = b_.getF32Type();
  auto rowsType =
      RankedTensorType::get({ShapedType::kDynamic, tableType_.getDim()}, f32);
  Value rows = parts.size() == 1
                   ? parts.front()
                   : tosa::ConcatOp::create(b_, loc_, rowsType, parts,
                                            b_.getI32IntegerAttr(1))
                         .getResult();
  Value result = JaggedCreateOp::create(b_, loc_, resultType, rows, offsets);
  op.getResult().replaceAllUsesWith(result);
  op.erase();
  return success();
}

} // namespace

LogicalResult mlir::ember::partitionSequenceLookups(func::FuncOp func,
                                                    int64_t rank,
                                                    int64_t worldSize) {
  SmallVector<SequenceLookupOp> lookups;
  func.walk([&](SequenceLookupOp op) {
    if (op->hasAttr(kShardingAttr))
      lookups.push_back(op);
  });
  SequenceRewriter rewriter(func.getContext(), rank, worldSize);
  for (auto [index, op] : llvm::enumerate(lookups))
    if (failed(rewriter.rewrite(op, index)))
      return failure();
  return success();
}
