//===- Partition.cpp - Per-rank SPMD programs for sharded embedding bags --===//
//
// Reads the `ember.sharding` attribute of every `ember.embedding_bag` of the
// entry function and the module's `ember.world_size`, and replaces the
// function by one program per rank (`<name>_rank<r>`, attribute `ember.rank`)
// in which every sharded bag is computed the way TorchRec's sharded modules
// do it at run time:
//
//   input dist   the bags become one KJT per weight class (kjt.from_bags;
//                row-wise tables through kjt.bucketize), its keys ordered by
//                destination rank, sent with kjt_all_to_all (splits, tensors)
//   lookups      one ember.grouped_lookup per (output route, pooling) over
//                the shards this rank holds, for the bags of every rank
//   output dist  pooled_all_to_all (table-wise, column-wise and node-local
//                row-wise partial sums; its result's columns in the bags'
//                order), reduce_scatter (row-wise over every rank), then
//                slices/concats/adds give each bag's [B, D]
//
// Data-parallel tables keep their embedding bag (every rank holds the whole
// table). The dense part of the model is data parallel: each rank runs it on
// its own batch. The design and its limits are in docs/sharding.md.
//
//===----------------------------------------------------------------------===//
#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberShardingAttrs.h"
#include "passes/PartitionSequences.h"
#include "passes/Passes.h"
#include "passes/WeightData.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"

#include <string>

namespace mlir::ember {
#define GEN_PASS_DEF_EMBERPARTITION
#include "passes/Passes.h.inc"
} // namespace mlir::ember

using namespace mlir;
using namespace mlir::ember;

namespace {

constexpr llvm::StringLiteral kShardingAttr = "ember.sharding";
constexpr llvm::StringLiteral kWorldSizeAttr = "ember.world_size";
constexpr llvm::StringLiteral kRankAttr = "ember.rank";
/// On kjt.from_bags: the bags' names (ONNX node / module path), for messages.
constexpr llvm::StringLiteral kFeatureNamesAttr = "ember.feature_names";

/// How a shard's pooled rows get back to the rank that owns the sample.
enum class Route {
  AllToAll,      // pooled_all_to_all (table-wise, column-wise, partial sums)
  ReduceScatter, // reduce_scatter sum (row-wise over every rank)
};

/// One block of one table that `dest` looks up for the bags of every rank.
struct ShardItem {
  unsigned table = 0;
  int64_t dest = 0;
  int64_t rowOffset = 0, numRows = 0, colOffset = 0, numCols = 0;
  Route route = Route::AllToAll;
  unsigned group = 0;  // index into Analysis::groups
  std::string key;     // its key in the sent KJT
  int64_t column = -1; // first column in its output dist result
};

/// A grouped lookup: the items of one route, pooling mode and table format.
struct LookupGroup {
  Route route;
  PoolingMode pooling;
  TableFormat format;
};

struct ShardedTable {
  unsigned opIndex = 0; // position among the function's embedding bags
  ShardingAttr sharding;
  ElementsAttr weights; // dense, or over a mapped file (WeightData.h)
  TableType type;
  bool weighted = false;
  PoolingMode pooling = PoolingMode::sum;
  bool bucketized = false; // row-wise / table-row-wise
  int64_t blockSize = 0;   // rows per bucket
  SmallVector<unsigned> items;
};

/// Everything the rewrite needs, the same for every rank.
struct Analysis {
  int64_t worldSize = 1;
  SmallVector<ShardedTable> tables;
  SmallVector<ShardItem> items;
  SmallVector<LookupGroup> groups;
  SmallVector<unsigned> dataParallel; // op indices
  Type idType;
};

std::string tableKey(unsigned table) { return "t" + std::to_string(table); }

/// The embedding bags of `func` in program order.
SmallVector<EmbeddingBagOp> collectBags(func::FuncOp func) {
  SmallVector<EmbeddingBagOp> bags;
  func.walk([&](EmbeddingBagOp op) { bags.push_back(op); });
  return bags;
}

unsigned groupIndex(Analysis &a, Route route, PoolingMode pooling,
                    TableFormat format) {
  for (auto [i, g] : llvm::enumerate(a.groups))
    if (g.route == route && g.pooling == pooling && g.format == format)
      return i;
  a.groups.push_back({route, pooling, format});
  return a.groups.size() - 1;
}

/// Whether an embedding_bag_collection's `ember.sharding` (one per table)
/// shards any table (data-parallel collections stay whole).
bool shardsATable(EmbeddingBagCollectionOp op) {
  auto shardings = op->getAttrOfType<ArrayAttr>(kShardingAttr);
  return shardings && llvm::any_of(shardings, [](Attribute attr) {
           auto sharding = dyn_cast<ShardingAttr>(attr);
           return !sharding || !sharding.isReplicated();
         });
}

/// Moves `op` (and, first, the ops of `block` it reads) right after the
/// latest of its operands' definitions, or to the top of `block`, when it and
/// they are free of memory effects and have no regions.
void hoistPureChain(Operation *op, Block *block) {
  if (!op || op->getBlock() != block || op->getNumRegions() != 0 ||
      !isMemoryEffectFree(op))
    return;
  Operation *latest = nullptr;
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (!def || def->getBlock() != block)
      continue;
    hoistPureChain(def, block);
    if (!latest || latest->isBeforeInBlock(def))
      latest = def;
  }
  if (latest)
    op->moveAfter(latest);
  else
    op->moveBefore(&block->front());
}

/// Rewrites every embedding_bag_collection that shards a table into the
/// per-feature pooled lookups TorchRec's sharded EmbeddingBagCollection
/// computes: the KJT is split into one-key KJTs, key i is looked up with an
/// `ember.embedding_bag` over its values and offsets (and weights) in its
/// table, carrying that table's sharding, and the [B, D] results,
/// concatenated in key order, make the keyed tensor. The bags then take the
/// same input dist, lookups and output dist as a model's own bags. A table
/// read by several features is partitioned once per feature (its shards are
/// stored once per feature).
LogicalResult decomposeShardedCollections(func::FuncOp func) {
  SmallVector<EmbeddingBagCollectionOp> collections;
  func.walk([&](EmbeddingBagCollectionOp op) {
    if (shardsATable(op))
      collections.push_back(op);
  });
  for (EmbeddingBagCollectionOp op : collections) {
    auto shardings = op->getAttrOfType<ArrayAttr>(kShardingAttr);
    if (shardings.size() != op.getTables().size())
      return op.emitError("'")
             << kShardingAttr << "' has " << shardings.size() << " entries for "
             << op.getTables().size() << " tables";
    for (Attribute attr : shardings)
      if (!isa<ShardingAttr>(attr))
        return op.emitError("'")
               << kShardingAttr << "' must hold one #ember.sharding per table";
    KeyedJaggedTensorType kjtType = op.getFeatures().getType();
    if (kjtType.isVariableBatch())
      return op.emitError("a variable-batch KJT cannot be sharded yet (only "
                          "data_parallel)");
    // The bags' inputs go as early as the KJT and the tables allow (the
    // partitioning builds every input dist after the last input any sharded
    // bag reads): a model whose first collection's result is read before a
    // second collection's features are looked up still partitions.
    Block *block = op->getBlock();
    Value features = op.getFeatures();
    // Tables first: moving an op would move an insertion point set after it.
    for (Value table : op.getTables())
      if (auto from = table.getDefiningOp<TableFromTensorOp>())
        if (Operation *weights = from.getWeights().getDefiningOp())
          if (weights->getNumOperands() == 0 && weights->getBlock() == block &&
              from->getBlock() == block) {
            weights->moveBefore(&block->front());
            from->moveAfter(weights);
          }
    // The KJT itself as early as its operands allow (a permute of the KJT
    // argument goes to the top), so that no collection's lookups must wait
    // for ops placed after another collection's results are read.
    hoistPureChain(features.getDefiningOp(), block);
    OpBuilder in(op->getContext());
    if (Operation *def = features.getDefiningOp())
      in.setInsertionPointAfter(def);
    else
      in.setInsertionPointToStart(block);
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type f32 = b.getF32Type();
    unsigned numKeys = kjtType.getNumKeys();
    SmallVector<int64_t> oneEach(numKeys, 1);
    auto split = KJTSplitOp::create(in, loc, features, oneEach);
    SmallVector<Value> columns;
    int64_t width = 0;
    for (unsigned i = 0; i < numKeys; ++i) {
      Value feature = split.getResults()[i];
      // Named after the key: the bag's tables and messages say which one.
      Location keyLoc = NameLoc::get(b.getStringAttr(kjtType.getKey(i)), loc);
      Value ids = KJTValuesOp::create(in, keyLoc, feature);
      Value offsets = KJTOffsetsOp::create(in, keyLoc, feature);
      Value weights = kjtType.isWeighted()
                          ? Value(KJTWeightsOp::create(in, keyLoc, feature))
                          : Value();
      int64_t t = op.getFeatureTables()[i];
      Value table = op.getTables()[t];
      int64_t dim = cast<TableType>(table.getType()).getDim();
      auto bagType = RankedTensorType::get({ShapedType::kDynamic, dim}, f32);
      auto pooling = cast<PoolingModeAttr>(op.getPooling()[t]);
      auto bag = EmbeddingBagOp::create(b, keyLoc, bagType, table, ids, offsets,
                                        weights, pooling, IntegerAttr(),
                                        b.getUnitAttr());
      bag->setAttr(kShardingAttr, shardings[t]);
      columns.push_back(bag);
      width += dim;
    }
    auto resultType = cast<KeyedTensorType>(op.getResult().getType());
    Value values =
        columns.size() == 1
            ? columns.front()
            : tosa::ConcatOp::create(
                  b, loc,
                  RankedTensorType::get({ShapedType::kDynamic, width}, f32),
                  columns, b.getI32IntegerAttr(1));
    if (values.getType() != resultType.getValuesType())
      values =
          tensor::CastOp::create(b, loc, resultType.getValuesType(), values);
    Value keyed = KeyedTensorCreateOp::create(b, loc, resultType, values);
    op.getResult().replaceAllUsesWith(keyed);
    op.erase();
  }
  return success();
}

/// Validates the sharding of every bag and lists the shards to look up.
FailureOr<Analysis> analyze(func::FuncOp func, int64_t worldSize) {
  Analysis a;
  a.worldSize = worldSize;
  SmallVector<EmbeddingBagOp> bags = collectBags(func);
  for (auto [index, op] : llvm::enumerate(bags)) {
    auto sharding = op->getAttrOfType<ShardingAttr>(kShardingAttr);
    if (!sharding)
      return op.emitError("embedding bag has no '")
             << kShardingAttr
             << "' attribute: run --ember-plan-sharding first (or give "
                "every table a sharding)";
    for (int64_t r : sharding.getShardRanks())
      if (r < 0 || r >= worldSize)
        return op.emitError("sharding places a shard on rank ")
               << r << " but the world size is " << worldSize;
    if (sharding.isReplicated()) {
      a.dataParallel.push_back(index);
      continue;
    }
    if (op->getBlock() != &func.getBody().front())
      return op.emitError("a sharded embedding bag must be in the entry "
                          "block of the function (not in a nested region)");
    if (op.getPaddingIdx())
      return op.emitError("a sharded embedding bag cannot have padding_idx "
                          "(only data_parallel tables keep it)");
    auto from = op.getTable().getDefiningOp<TableFromTensorOp>();
    ElementsAttr weights;
    if (!from || !matchPattern(from.getWeights(), m_Constant(&weights)) ||
        !weightBytesOf(weights))
      return op.emitError("a sharded table must be a constant weight tensor "
                          "(ember.table.from_tensor of a constant)");
    ShardedTable t;
    t.opIndex = index;
    t.sharding = sharding;
    t.weights = weights;
    t.type = cast<TableType>(op.getTable().getType());
    t.weighted = static_cast<bool>(op.getPerSampleWeights());
    t.pooling = op.getPooling();
    if (!cast<RankedTensorType>(op.getResult().getType())
             .getElementType()
             .isF32())
      return op.emitError("sharded embedding bags must produce f32 rows");
    if (t.weighted &&
        !cast<RankedTensorType>(op.getPerSampleWeights().getType())
             .getElementType()
             .isF32())
      return op.emitError("per-sample weights of a sharded bag must be f32");
    Type idType =
        cast<RankedTensorType>(op.getIndices().getType()).getElementType();
    if (!a.idType)
      a.idType = idType;
    else if (a.idType != idType)
      return op.emitError("sharded embedding bags must all take ids of one "
                          "type; this one takes ")
             << idType << ", an earlier one " << a.idType;

    unsigned tableIndex = a.tables.size();
    ArrayRef<ShardAttr> shards = sharding.getShards();
    int64_t rows = t.type.getRows(), dim = t.type.getDim();
    switch (sharding.getShardingType()) {
    case ShardingType::table_wise:
    case ShardingType::column_wise: {
      // A column shard of a row-wise quantized table keeps its rows' scale
      // and bias; int4 codes go two a byte, so its shards take even columns.
      if (sharding.getShardingType() == ShardingType::column_wise &&
          t.type.getFormat() == TableFormat::int4_rowwise)
        for (auto [k, shard] : llvm::enumerate(shards))
          if (shard.getColumnOffset() % 2 != 0 ||
              shard.getNumColumns() % 2 != 0)
            return op.emitError("column shard #")
                   << k << " of " << t.type << " has columns ["
                   << shard.getColumnOffset() << ", "
                   << shard.getColumnOffset() + shard.getNumColumns()
                   << "): int4_rowwise shards must start and end at even "
                      "columns (two codes a byte)";
      for (auto [k, shard] : llvm::enumerate(shards)) {
        ShardItem item;
        item.table = tableIndex;
        item.dest = shard.getRank();
        item.rowOffset = 0;
        item.numRows = rows;
        item.colOffset = shard.getColumnOffset();
        item.numCols = shard.getNumColumns();
        item.key = tableKey(tableIndex);
        if (shards.size() > 1)
          item.key += ":c" + std::to_string(k);
        item.group =
            groupIndex(a, Route::AllToAll, t.pooling, t.type.getFormat());
        t.items.push_back(a.items.size());
        a.items.push_back(item);
      }
      break;
    }
    case ShardingType::row_wise:
    case ShardingType::table_row_wise: {
      if (t.pooling == PoolingMode::max)
        return op.emitError(
            "row-wise sharding supports sum and mean pooling (partial sums "
            "are added over ranks); this bag pools with max: use table_wise "
            "or column_wise");
      // kjt.bucketize splits ids into equal blocks of rows.
      int64_t block = shards.front().getNumRows();
      for (auto [b, shard] : llvm::enumerate(shards)) {
        int64_t begin = static_cast<int64_t>(b) * block;
        int64_t want = std::max<int64_t>(0, std::min(block, rows - begin));
        if (shard.getRowOffset() != begin || shard.getNumRows() != want)
          return op.emitError("row-wise shards must be equal blocks of ")
                 << block << " rows (the last one shorter): shard " << b
                 << " has rows [" << shard.getRowOffset() << ", "
                 << shard.getRowOffset() + shard.getNumRows()
                 << ") but the block is [" << begin << ", " << begin + want
                 << ")";
      }
      // Reduce-scatter when every rank holds one shard, else partial sums
      // travel through the pooled all-to-all and are added at the owner.
      SmallVector<int64_t> ranks = sharding.getShardRanks();
      llvm::sort(ranks);
      bool everyRank = static_cast<int64_t>(ranks.size()) == worldSize &&
                       llvm::all_of(llvm::enumerate(ranks), [](auto p) {
                         return static_cast<int64_t>(p.index()) == p.value();
                       });
      t.bucketized = true;
      t.blockSize = block;
      for (auto [b, shard] : llvm::enumerate(shards)) {
        ShardItem item;
        item.table = tableIndex;
        item.dest = shard.getRank();
        item.rowOffset = shard.getRowOffset();
        item.numRows = shard.getNumRows();
        item.colOffset = 0;
        item.numCols = dim;
        item.key = tableKey(tableIndex) + "@" + std::to_string(b);
        item.route = everyRank ? Route::ReduceScatter : Route::AllToAll;
        // Shards add partial sums; mean divides by the bag size afterwards.
        item.group =
            groupIndex(a, item.route, PoolingMode::sum, t.type.getFormat());
        t.items.push_back(a.items.size());
        a.items.push_back(item);
      }
      break;
    }
    case ShardingType::data_parallel:
      llvm_unreachable("handled above");
    }
    a.tables.push_back(t);
  }
  return a;
}

/// Rows [row0, row0 + rows) x columns [col0, col0 + cols) of a 2-D weight
/// constant (dense: a new constant of those bytes).
DenseElementsAttr sliceWeights(DenseElementsAttr weights, int64_t row0,
                               int64_t rows, int64_t col0, int64_t cols) {
  auto type = cast<RankedTensorType>(weights.getType());
  auto sliceType = RankedTensorType::get({rows, cols}, type.getElementType());
  if (weights.isSplat())
    return DenseElementsAttr::get(sliceType,
                                  weights.getSplatValue<Attribute>());
  int64_t width = type.getDimSize(1);
  size_t elementBytes = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> raw = weights.getRawData();
  std::vector<char> data(static_cast<size_t>(rows * cols) * elementBytes);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(data.data() + r * cols * elementBytes,
                raw.data() + ((row0 + r) * width + col0) * elementBytes,
                cols * elementBytes);
  return DenseElementsAttr::getFromRawBuffer(sliceType, data);
}

/// Rows [row0, row0 + rows) x columns [col0, col0 + cols) of a row-wise
/// quantized table's bytes: the columns' codes, then each row's own scale and
/// bias (a column slice dequantizes with its row's scale and bias). int4
/// columns are even (two codes a byte). Whole rows of a mapped table are a
/// view of its mapping; a column slice of one is copied (its codes and the
/// row's scale and bias are not one range of the file).
Value sliceQuantizedWeights(OpBuilder &b, Location loc, ElementsAttr weights,
                            TableType table, int64_t row0, int64_t rows,
                            int64_t col0, int64_t cols) {
  bool int4 = table.getFormat() == TableFormat::int4_rowwise;
  int64_t codeBytes = int4 ? table.getDim() / 2 : table.getDim();
  int64_t first = int4 ? col0 / 2 : col0, count = int4 ? cols / 2 : cols;
  auto mapped = dyn_cast<DenseResourceElementsAttr>(weights);
  if (first == 0 && count == codeBytes) { // whole rows
    if (mapped)
      return sliceOfMappedWeights(b, loc, mapped, row0, rows, 0,
                                  table.getRowBytes());
    return arith::ConstantOp::create(
        b, loc,
        sliceWeights(cast<DenseElementsAttr>(weights), row0, rows, 0,
                     table.getRowBytes()));
  }
  auto type = cast<RankedTensorType>(weights.getType());
  auto sliceType =
      RankedTensorType::get({rows, count + 8}, type.getElementType());
  std::optional<WeightBytes> bytes = weightBytesOf(weights);
  if (bytes->splat)
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            sliceType,
            cast<DenseElementsAttr>(weights).getSplatValue<Attribute>()));
  int64_t width = type.getDimSize(1);
  ArrayRef<char> raw = bytes->data;
  std::vector<char> data(static_cast<size_t>(rows * (count + 8)));
  for (int64_t r = 0; r < rows; ++r) {
    const char *row = raw.data() + (row0 + r) * width;
    char *out = data.data() + r * (count + 8);
    std::memcpy(out, row + first, count);
    std::memcpy(out + count, row + codeBytes, 8);
  }
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::getFromRawBuffer(sliceType, data));
}

/// Builds one rank's program in place of its copy of the function.
class RankRewriter {
public:
  RankRewriter(func::FuncOp func, const Analysis &analysis, int64_t rank)
      : func_(func), a_(analysis), rank_(rank), b_(func.getContext()) {}

  LogicalResult run();

private:
  /// The KJT of one weight class, keys in destination order: each rank's
  /// items, group by group.
  struct ClassPlan {
    bool weighted;
    SmallVector<unsigned> sendOrder; // item indices
    SmallVector<int64_t> keySplits;  // per rank
  };

  FailureOr<Value> buildClass(const ClassPlan &plan);
  Value sourceKjt(const ClassPlan &plan, SmallVectorImpl<std::string> &keys);
  Value localTable(const ShardItem &item);
  Value columns(Value x, int64_t begin, int64_t count);
  LogicalResult replaceBags();

  func::FuncOp func_;
  const Analysis &a_;
  int64_t rank_;
  OpBuilder b_;
  Location loc_ = UnknownLoc::get(func_.getContext());
  SmallVector<EmbeddingBagOp> bags_;
  /// Output dist results per weight class and route.
  DenseMap<std::pair<int, int>, Value> results_;
  /// The output dist column of each item.
  SmallVector<int64_t> itemColumn_;
  /// Row-wise tables: the KJT of this rank's own bags (before bucketizing).
  DenseMap<unsigned, Value> tableKjt_;
  Value meanOf(Value sum, unsigned table);
  /// A table's name for messages: its bag's ONNX node / module path.
  StringAttr bagName(unsigned table) {
    Location loc = bags_[a_.tables[table].opIndex].getLoc();
    if (auto name = dyn_cast<NameLoc>(loc))
      return name.getName();
    if (auto fused = dyn_cast<FusedLoc>(loc))
      for (Location inner : fused.getLocations())
        if (auto name = dyn_cast<NameLoc>(inner))
          return name.getName();
    return b_.getStringAttr(tableKey(table));
  }
};

Value RankRewriter::sourceKjt(const ClassPlan &plan,
                              SmallVectorImpl<std::string> &keys) {
  MLIRContext *ctx = func_.getContext();
  Type i64 = b_.getI64Type();
  SmallVector<Value> parts;
  // Table- and column-wise items: one feature each (a column-wise table's
  // bags are sent once per shard).
  SmallVector<Value> values, offsets, weights;
  SmallVector<bool> includeLast;
  SmallVector<int64_t> numRows;
  SmallVector<StringRef> directKeys;
  for (unsigned i : plan.sendOrder) {
    const ShardItem &item = a_.items[i];
    const ShardedTable &t = a_.tables[item.table];
    if (t.bucketized)
      continue;
    EmbeddingBagOp bag = bags_[t.opIndex];
    values.push_back(bag.getIndices());
    offsets.push_back(bag.getOffsets());
    if (plan.weighted)
      weights.push_back(bag.getPerSampleWeights());
    includeLast.push_back(bag.getIncludeLastOffset());
    numRows.push_back(t.type.getRows());
    directKeys.push_back(item.key);
    keys.push_back(item.key);
  }
  auto kjtType = [&](ArrayRef<StringRef> k) {
    return KeyedJaggedTensorType::get(ctx, k, a_.idType, i64, plan.weighted);
  };
  if (!values.empty()) {
    SmallVector<Attribute> names;
    for (unsigned i : plan.sendOrder)
      if (!a_.tables[a_.items[i].table].bucketized)
        names.push_back(bagName(a_.items[i].table));
    auto direct =
        KJTFromBagsOp::create(b_, loc_, kjtType(directKeys), values, offsets,
                              weights, b_.getDenseBoolArrayAttr(includeLast),
                              b_.getDenseI64ArrayAttr(numRows));
    direct->setAttr(kFeatureNamesAttr, b_.getArrayAttr(names));
    parts.push_back(direct);
  }
  // Row-wise tables: bucketized into one key per shard ("t@b").
  for (auto [index, t] : llvm::enumerate(a_.tables)) {
    if (!t.bucketized || t.weighted != plan.weighted)
      continue;
    EmbeddingBagOp bag = bags_[t.opIndex];
    std::string key = tableKey(index);
    SmallVector<Value> w;
    if (plan.weighted)
      w.push_back(bag.getPerSampleWeights());
    Value one = KJTFromBagsOp::create(
        b_, loc_, kjtType({StringRef(key)}), ValueRange{bag.getIndices()},
        ValueRange{bag.getOffsets()}, w,
        b_.getDenseBoolArrayAttr({bag.getIncludeLastOffset()}),
        b_.getDenseI64ArrayAttr({t.type.getRows()}));
    one.getDefiningOp()->setAttr(kFeatureNamesAttr,
                                 b_.getArrayAttr({bagName(index)}));
    auto bucketize =
        KJTBucketizeOp::create(b_, loc_, one, ArrayRef<int64_t>{t.blockSize},
                               static_cast<int64_t>(t.items.size()));
    tableKjt_[index] = one;
    parts.push_back(bucketize.getResult());
    for (unsigned i : t.items)
      keys.push_back(a_.items[i].key);
  }
  if (parts.size() == 1)
    return parts.front();
  return KJTConcatOp::create(b_, loc_, parts);
}

Value RankRewriter::localTable(const ShardItem &item) {
  const ShardedTable &t = a_.tables[item.table];
  // Float tables slice rows and columns of elements; quantized ones rows of
  // bytes (a column shard: its codes and the rows' scale and bias).
  // A table over a mapped file: a view or a deferred slice, never a copy.
  Value weights;
  if (t.type.isQuantized())
    weights = sliceQuantizedWeights(b_, loc_, t.weights, t.type, item.rowOffset,
                                    item.numRows, item.colOffset, item.numCols);
  else if (auto mapped = dyn_cast<DenseResourceElementsAttr>(t.weights))
    weights = sliceOfMappedWeights(b_, loc_, mapped, item.rowOffset,
                                   item.numRows, item.colOffset, item.numCols);
  else
    weights = arith::ConstantOp::create(
        b_, loc_,
        sliceWeights(cast<DenseElementsAttr>(t.weights), item.rowOffset,
                     item.numRows, item.colOffset, item.numCols));
  auto type = TableType::get(func_.getContext(), item.numRows, item.numCols,
                             t.type.getFormat());
  return TableFromTensorOp::create(b_, loc_, type, weights);
}

FailureOr<Value> RankRewriter::buildClass(const ClassPlan &plan) {
  MLIRContext *ctx = func_.getContext();
  int64_t W = a_.worldSize;
  SmallVector<int64_t> allRanks;
  for (int64_t r = 0; r < W; ++r)
    allRanks.push_back(r);
  auto group = GroupAttr::get(ctx, allRanks);

  // Input dist: the sent KJT, permuted into destination order.
  SmallVector<std::string> sourceKeys;
  Value kjt = sourceKjt(plan, sourceKeys);
  SmallVector<int64_t> permutation;
  for (unsigned i : plan.sendOrder)
    permutation.push_back(llvm::find(sourceKeys, a_.items[i].key) -
                          sourceKeys.begin());
  if (!llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())))
    kjt = KJTPermuteOp::create(b_, loc_, kjt, permutation);
  auto sendType = cast<KeyedJaggedTensorType>(kjt.getType());

  int64_t entries = KJTAllToAllSplitsOp::getNumSplitEntries(plan.weighted);
  auto splitsType = RankedTensorType::get({W, entries}, b_.getI64Type());
  auto splits = KJTAllToAllSplitsOp::create(
      b_, loc_, AwaitableType::get(ctx, splitsType), kjt,
      b_.getDenseI64ArrayAttr(plan.keySplits), group);
  Value splitsValue = WaitOp::create(b_, loc_, splits);
  int64_t begin = 0;
  for (int64_t r = 0; r < rank_; ++r)
    begin += plan.keySplits[r];
  SmallVector<StringRef> myKeys;
  SmallVector<unsigned> myItems;
  for (int64_t k = 0; k < plan.keySplits[rank_]; ++k) {
    myItems.push_back(plan.sendOrder[begin + k]);
    myKeys.push_back(a_.items[myItems.back()].key);
  }
  auto recvType =
      KeyedJaggedTensorType::get(ctx, myKeys, sendType.getValueType(),
                                 sendType.getLengthType(), plan.weighted);
  auto tensors = KJTAllToAllTensorsOp::create(
      b_, loc_, AwaitableType::get(ctx, recvType), kjt, splitsValue,
      b_.getDenseI64ArrayAttr(plan.keySplits), DenseI64ArrayAttr(), group);
  Value received = WaitOp::create(b_, loc_, tensors);

  // Lookups: one grouped lookup per group of this rank's items (received
  // keys are already in group order).
  SmallVector<int64_t> groupCounts;
  SmallVector<unsigned> groupsPresent;
  for (unsigned i : myItems) {
    if (groupsPresent.empty() || groupsPresent.back() != a_.items[i].group) {
      groupsPresent.push_back(a_.items[i].group);
      groupCounts.push_back(0);
    }
    ++groupCounts.back();
  }
  SmallVector<Value> groupKjts;
  if (groupsPresent.size() == 1) {
    groupKjts.push_back(received);
  } else if (!groupsPresent.empty()) {
    auto split = KJTSplitOp::create(b_, loc_, received, groupCounts);
    groupKjts.append(split->result_begin(), split->result_end());
  }
  Type f32 = b_.getF32Type();
  SmallVector<Value> allToAllParts, reduceScatterParts;
  int64_t itemPos = 0;
  for (size_t gi = 0; gi < groupsPresent.size(); ++gi) {
    const LookupGroup &lg = a_.groups[groupsPresent[gi]];
    Value groupKjt = groupKjts[gi];
    SmallVector<Value> tables;
    SmallVector<int64_t> featureTables, columnOffsets, dims;
    SmallVector<StringRef> keys;
    int64_t width = 0;
    for (int64_t k = 0; k < groupCounts[gi]; ++k) {
      const ShardItem &item = a_.items[myItems[itemPos++]];
      featureTables.push_back(tables.size());
      tables.push_back(localTable(item));
      columnOffsets.push_back(width);
      dims.push_back(item.numCols);
      keys.push_back(item.key);
      width += item.numCols;
    }
    auto ktType = KeyedTensorType::get(ctx, keys, dims, f32);
    Value kt = GroupedLookupOp::create(b_, loc_, ktType, groupKjt, tables,
                                       b_.getDenseI64ArrayAttr(featureTables),
                                       b_.getDenseI64ArrayAttr(columnOffsets),
                                       PoolingModeAttr::get(ctx, lg.pooling));
    Value values = KeyedTensorValuesOp::create(
        b_, loc_, RankedTensorType::get({ShapedType::kDynamic, width}, f32),
        kt);
    (lg.route == Route::AllToAll ? allToAllParts : reduceScatterParts)
        .push_back(values);
  }

  // Output dist.
  auto concatColumns = [&](ArrayRef<Value> parts) -> Value {
    if (parts.size() == 1)
      return parts.front();
    int64_t width = 0;
    for (Value p : parts)
      width += cast<RankedTensorType>(p.getType()).getDimSize(1);
    return tosa::ConcatOp::create(
        b_, loc_, RankedTensorType::get({ShapedType::kDynamic, width}, f32),
        parts, b_.getI32IntegerAttr(1));
  };
  int cls = plan.weighted ? 1 : 0;
  SmallVector<int64_t> dimPerRank(W, 0);
  int64_t rsWidth = 0;
  for (unsigned i : plan.sendOrder) {
    const ShardItem &item = a_.items[i];
    if (item.route == Route::AllToAll)
      dimPerRank[item.dest] += item.numCols;
  }
  // Columns: the all-to-all puts its items in the order the function reads
  // its bags (the tables' order; a column-wise table's shards by column, a
  // row-wise table's partial sums one after the other), so that each table
  // takes one column range and consecutive tables adjacent ones. It
  // receives rank 0's items first: segment_dims / segment_columns say where
  // each run of them goes. The reduce-scatter result holds every row-wise
  // table, group by group (one lookup per table format), in table order
  // within a group.
  SmallVector<int64_t> segmentDims, segmentColumns;
  bool permuted = false;
  {
    int64_t column = 0;
    for (const ShardedTable &t : a_.tables) {
      if (t.weighted != plan.weighted)
        continue;
      SmallVector<unsigned> parts;
      for (unsigned i : t.items)
        if (a_.items[i].route == Route::AllToAll)
          parts.push_back(i);
      if (t.sharding.getShardingType() == ShardingType::column_wise)
        llvm::stable_sort(parts, [&](unsigned x, unsigned y) {
          return a_.items[x].colOffset < a_.items[y].colOffset;
        });
      for (unsigned i : parts) {
        itemColumn_[i] = column;
        column += a_.items[i].numCols;
      }
    }
    // Wire order: each destination's items as sendOrder has them. A run of
    // items adjacent in both orders is one segment (an item of no columns
    // is none).
    int64_t wire = 0, lastDest = -1;
    for (unsigned i : plan.sendOrder) {
      const ShardItem &item = a_.items[i];
      if (item.route != Route::AllToAll || item.numCols == 0)
        continue;
      permuted |= itemColumn_[i] != wire;
      wire += item.numCols;
      if (item.dest == lastDest &&
          segmentColumns.back() + segmentDims.back() == itemColumn_[i]) {
        segmentDims.back() += item.numCols;
        continue;
      }
      segmentDims.push_back(item.numCols);
      segmentColumns.push_back(itemColumn_[i]);
      lastDest = item.dest;
    }
  }
  {
    for (unsigned g = 0; g < a_.groups.size(); ++g)
      for (const ShardedTable &t : a_.tables) {
        if (t.weighted != plan.weighted || t.items.empty() ||
            a_.items[t.items.front()].route != Route::ReduceScatter ||
            a_.items[t.items.front()].group != g)
          continue;
        for (unsigned i : t.items)
          itemColumn_[i] = rsWidth;
        rsWidth += t.type.getDim();
      }
  }
  int64_t totalDim = 0;
  for (int64_t d : dimPerRank)
    totalDim += d;
  if (totalDim > 0) {
    Value local =
        allToAllParts.empty()
            ? arith::ConstantOp::create(
                  b_, loc_,
                  DenseElementsAttr::get(RankedTensorType::get({0, 0}, f32),
                                         ArrayRef<float>{}))
                  .getResult()
            : concatColumns(allToAllParts);
    auto outType = RankedTensorType::get({ShapedType::kDynamic, totalDim}, f32);
    auto a2a = PooledAllToAllOp::create(
        b_, loc_, AwaitableType::get(ctx, outType), local, kjt,
        b_.getDenseI64ArrayAttr(dimPerRank), DenseI64ArrayAttr(), group,
        CommCodecAttr(),
        permuted ? b_.getDenseI64ArrayAttr(segmentDims) : DenseI64ArrayAttr(),
        permuted ? b_.getDenseI64ArrayAttr(segmentColumns)
                 : DenseI64ArrayAttr());
    results_[{cls, static_cast<int>(Route::AllToAll)}] =
        WaitOp::create(b_, loc_, a2a);
  }
  if (rsWidth > 0) {
    if (reduceScatterParts.empty())
      return func_.emitError("internal error: a rank holds no reduce-scatter "
                             "lookup");
    auto outType = RankedTensorType::get({ShapedType::kDynamic, rsWidth}, f32);
    auto rs = ReduceScatterOp::create(
        b_, loc_, AwaitableType::get(ctx, outType),
        concatColumns(reduceScatterParts), kjt, ReduceKind::sum,
        DenseI64ArrayAttr(), group, CommCodecAttr());
    results_[{cls, static_cast<int>(Route::ReduceScatter)}] =
        WaitOp::create(b_, loc_, rs);
  }
  return kjt;
}

Value RankRewriter::columns(Value x, int64_t begin, int64_t count) {
  auto type = cast<RankedTensorType>(x.getType());
  if (begin == 0 && count == type.getDimSize(1))
    return x;
  Value rows = tensor::DimOp::create(b_, loc_, x, 0);
  SmallVector<OpFoldResult> offsets = {b_.getIndexAttr(0),
                                       b_.getIndexAttr(begin)};
  SmallVector<OpFoldResult> sizes = {rows, b_.getIndexAttr(count)};
  SmallVector<OpFoldResult> strides = {b_.getIndexAttr(1), b_.getIndexAttr(1)};
  auto resultType = RankedTensorType::get({ShapedType::kDynamic, count},
                                          type.getElementType());
  return tensor::ExtractSliceOp::create(b_, loc_, resultType, x, offsets, sizes,
                                        strides);
}

/// sum / max(length, 1) per bag: the mean of a row-wise table from its
/// summed shards (an empty bag stays 0, as in PyTorch).
Value RankRewriter::meanOf(Value sum, unsigned table) {
  Type f32 = b_.getF32Type();
  auto column = RankedTensorType::get({ShapedType::kDynamic}, f32);
  Value lengths = KJTLengthsOp::create(b_, loc_, tableKjt_.lookup(table));
  Value count = arith::SIToFPOp::create(b_, loc_, column, lengths);
  Value one = arith::ConstantOp::create(
      b_, loc_, DenseElementsAttr::get(RankedTensorType::get({1}, f32), 1.0f));
  count = tosa::MaximumOp::create(b_, loc_, column, count, one);
  Value rows = tensor::DimOp::create(b_, loc_, sum, 0);
  auto countType = RankedTensorType::get({ShapedType::kDynamic, 1}, f32);
  count = tensor::ExpandShapeOp::create(
      b_, loc_, countType, count, ArrayRef<ReassociationIndices>{{0, 1}},
      ArrayRef<OpFoldResult>{rows, b_.getIndexAttr(1)});
  Value inverse = tosa::ReciprocalOp::create(b_, loc_, countType, count);
  Value shift = arith::ConstantOp::create(
      b_, loc_,
      DenseElementsAttr::get(RankedTensorType::get({1}, b_.getI8Type()),
                             static_cast<int8_t>(0)));
  return tosa::MulOp::create(b_, loc_, sum.getType(), sum, inverse, shift);
}

LogicalResult RankRewriter::replaceBags() {
  Type f32 = b_.getF32Type();
  for (const ShardedTable &t : a_.tables) {
    EmbeddingBagOp bag = bags_[t.opIndex];
    Value dist =
        results_.lookup({t.weighted ? 1 : 0,
                         static_cast<int>(a_.items[t.items.front()].route)});
    Value result;
    int64_t dim = t.type.getDim();
    switch (t.sharding.getShardingType()) {
    case ShardingType::table_wise:
      result = columns(dist, itemColumn_[t.items.front()], dim);
      break;
    case ShardingType::column_wise: {
      SmallVector<unsigned> byColumn(t.items.begin(), t.items.end());
      llvm::sort(byColumn, [&](unsigned x, unsigned y) {
        return a_.items[x].colOffset < a_.items[y].colOffset;
      });
      SmallVector<Value> parts;
      for (unsigned i : byColumn)
        parts.push_back(columns(dist, itemColumn_[i], a_.items[i].numCols));
      result =
          parts.size() == 1
              ? parts.front()
              : tosa::ConcatOp::create(
                    b_, loc_,
                    RankedTensorType::get({ShapedType::kDynamic, dim}, f32),
                    parts, b_.getI32IntegerAttr(1))
                    .getResult();
      break;
    }
    case ShardingType::row_wise:
    case ShardingType::table_row_wise: {
      if (a_.items[t.items.front()].route == Route::ReduceScatter) {
        result = columns(dist, itemColumn_[t.items.front()], dim);
        break;
      }
      for (unsigned i : t.items) {
        Value part = columns(dist, itemColumn_[i], dim);
        result =
            result ? tosa::AddOp::create(b_, loc_, part.getType(), result, part)
                         .getResult()
                   : part;
      }
      break;
    }
    case ShardingType::data_parallel:
      llvm_unreachable("not sharded");
    }
    if (t.bucketized && t.pooling == PoolingMode::mean)
      result = meanOf(result, &t - a_.tables.data());
    if (result.getType() != bag.getResult().getType())
      result =
          tensor::CastOp::create(b_, loc_, bag.getResult().getType(), result);
    bag.getResult().replaceAllUsesWith(result);
  }
  for (const ShardedTable &t : a_.tables)
    bags_[t.opIndex].erase();
  return success();
}

LogicalResult RankRewriter::run() {
  bags_ = collectBags(func_);
  for (unsigned i : a_.dataParallel)
    bags_[i]->removeAttr(kShardingAttr);
  if (a_.tables.empty())
    return success();
  itemColumn_.assign(a_.items.size(), -1);

  // Everything is built after the last operand any sharded bag reads, so
  // every bag's inputs are available; the bags' results must not be used
  // before that point.
  Block &block = func_.getBody().front();
  Operation *after = nullptr;
  for (const ShardedTable &t : a_.tables)
    for (Value v : bags_[t.opIndex]->getOperands())
      if (Operation *def = v.getDefiningOp())
        if (def->getBlock() == &block &&
            (!after || after->isBeforeInBlock(def)))
          after = def;
  for (const ShardedTable &t : a_.tables)
    for (Operation *user : bags_[t.opIndex]->getUsers())
      if (after && user->getBlock() == &block && user->isBeforeInBlock(after))
        return bags_[t.opIndex].emitError(
                   "cannot partition: this bag's result is used before the "
                   "inputs of another sharded bag are computed (at ")
               << after->getLoc() << ")";
  if (after)
    b_.setInsertionPointAfter(after);
  else
    b_.setInsertionPointToStart(&block);
  loc_ = bags_[a_.tables.front().opIndex].getLoc();

  for (bool weighted : {false, true}) {
    ClassPlan plan;
    plan.weighted = weighted;
    plan.keySplits.assign(a_.worldSize, 0);
    for (int64_t r = 0; r < a_.worldSize; ++r)
      for (unsigned g = 0; g < a_.groups.size(); ++g)
        for (auto [i, item] : llvm::enumerate(a_.items))
          if (item.dest == r && item.group == g &&
              a_.tables[item.table].weighted == weighted) {
            plan.sendOrder.push_back(i);
            ++plan.keySplits[r];
          }
    if (plan.sendOrder.empty())
      continue;
    if (failed(buildClass(plan)))
      return failure();
  }
  return replaceBags();
}

struct PartitionPass
    : public mlir::ember::impl::EmberPartitionBase<PartitionPass> {
  using EmberPartitionBase::EmberPartitionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto worldAttr = module->getAttrOfType<IntegerAttr>(kWorldSizeAttr);
    if (!worldAttr) {
      module.emitError("the module has no '")
          << kWorldSizeAttr << "' attribute: run --ember-plan-sharding first";
      return signalPassFailure();
    }
    int64_t worldSize = worldAttr.getInt();
    if (worldSize < 1) {
      module.emitError("'")
          << kWorldSizeAttr << "' must be >= 1, got " << worldSize;
      return signalPassFailure();
    }
    auto func = module.lookupSymbol<func::FuncOp>(functionName);
    if (!func) {
      module.emitError("the module has no function '")
          << functionName << "' to partition";
      return signalPassFailure();
    }
    if (worldSize > 1 && failed(decomposeShardedCollections(func)))
      return signalPassFailure();
    FailureOr<Analysis> analysis = analyze(func, worldSize);
    if (failed(analysis))
      return signalPassFailure();
    func.walk(
        [](EmbeddingBagCollectionOp op) { op->removeAttr(kShardingAttr); });
    if (worldSize == 1) {
      // One rank holds everything: the lookups stay as they are.
      for (EmbeddingBagOp bag : collectBags(func))
        bag->removeAttr(kShardingAttr);
      func.walk([](SequenceLookupOp op) { op->removeAttr(kShardingAttr); });
      return;
    }
    OpBuilder builder(func);
    for (int64_t rank = 0; rank < worldSize; ++rank) {
      auto copy = cast<func::FuncOp>(builder.clone(*func));
      copy.setSymName(functionName + "_rank" + std::to_string(rank));
      copy->setAttr(kRankAttr, builder.getI64IntegerAttr(rank));
      if (failed(RankRewriter(copy, *analysis, rank).run()) ||
          failed(partitionSequenceLookups(copy, rank, worldSize)))
        return signalPassFailure();
    }
    func.erase();
  }
};

} // namespace
