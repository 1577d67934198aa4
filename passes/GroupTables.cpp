//===- GroupTables.cpp - table-batch embedding bag collections ------------===//
//
// Splits the features of each ember.embedding_bag_collection into groups
// whose tables share storage format, pooling mode and kernel (sharding type
// and compute kernel), looks each group up with one ember.grouped_lookup
// (FBGEMM's table-batched embedding), then merges the grouped lookups of
// disjoint keys of one KJT. Keyed tensors keep their types and layouts.
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberShardingAttrs.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/SymbolTable.h"
#include "passes/Passes.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SetVector.h"
#include <map>

namespace mlir {
namespace ember {
#define GEN_PASS_DEF_EMBERGROUPTABLES
#include "passes/Passes.h.inc"
} // namespace ember
} // namespace mlir

using namespace mlir;
using namespace mlir::ember;

namespace {

/// TorchRec's default compute kernel, for tables without a sharding.
constexpr StringLiteral kDefaultComputeKernel = "fused";

/// What tables must share to be looked up by one grouped (TBE) kernel.
struct GroupKey {
  TableFormat format;
  PoolingMode pooling;
  std::string kernel;

  bool operator<(const GroupKey &other) const {
    return std::tie(format, pooling, kernel) <
           std::tie(other.format, other.pooling, other.kernel);
  }
};

/// What decides the kernel that serves `table`: its symbol's sharding type
/// and compute kernel ("<sharding_type>/<compute_kernel>"), or "fused" for a
/// table without sharding. TorchRec groups tables per sharding type, and
/// per compute kernel within one.
std::string kernelKeyOf(Value table, SymbolTableCollection &symbols) {
  auto ref = table.getDefiningOp<TableRefOp>();
  if (!ref)
    return kDefaultComputeKernel.str();
  auto decl = symbols.lookupNearestSymbolFrom<TableOp>(ref, ref.getTableAttr());
  if (!decl || !decl.getSharding())
    return kDefaultComputeKernel.str();
  auto sharding = dyn_cast<ShardingAttr>(*decl.getSharding());
  if (!sharding)
    return kDefaultComputeKernel.str();
  StringRef kernel = sharding.getComputeKernel();
  return (stringifyShardingType(sharding.getShardingType()) + "/" +
          (kernel.empty() ? StringRef(kDefaultComputeKernel) : kernel))
      .str();
}

/// The features (KJT key positions) of one group, in KJT order.
struct FeatureGroup {
  GroupKey key;
  SmallVector<int64_t> features;
};

class CollectionGrouper {
public:
  CollectionGrouper(EmbeddingBagCollectionOp collection,
                    SymbolTableCollection &symbols)
      : collection(collection), symbols(symbols) {}

  /// Replaces the collection by grouped lookups (always possible: every
  /// feature belongs to exactly one group).
  void run() {
    SmallVector<FeatureGroup> groups = groupFeatures();
    OpBuilder builder(collection);
    KeyedTensorType resultType = collection.getType();
    if (groups.size() == 1) {
      Value grouped = buildGroupedLookup(builder, collection.getFeatures(),
                                         groups.front(), resultType);
      collection.getResult().replaceAllUsesWith(grouped);
      collection.erase();
      return;
    }
    // Several groups: each reads its keys of the KJT, and a regroup restores
    // the collection's key order and columns.
    auto kjtType = collection.getFeatures().getType();
    SmallVector<Value> groupResults;
    for (const FeatureGroup &group : groups) {
      Value features =
          KJTPermuteOp::create(builder, collection.getLoc(),
                               collection.getFeatures(), group.features);
      SmallVector<StringRef> keys;
      SmallVector<int64_t> dims;
      for (int64_t feature : group.features) {
        keys.push_back(kjtType.getKey(feature));
        dims.push_back(resultType.getDims()[feature]);
      }
      auto groupType = KeyedTensorType::get(builder.getContext(), keys, dims,
                                            resultType.getElementType());
      groupResults.push_back(
          buildGroupedLookup(builder, features, group, groupType));
    }
    Value regrouped = KeyedTensorRegroupOp::create(builder, collection.getLoc(),
                                                   resultType, groupResults);
    collection.getResult().replaceAllUsesWith(regrouped);
    collection.erase();
  }

private:
  /// Groups the collection's features by their table's GroupKey, groups in
  /// the order of their first feature.
  SmallVector<FeatureGroup> groupFeatures() {
    ArrayRef<int64_t> featureTables = collection.getFeatureTables();
    ArrayAttr pooling = collection.getPooling();
    std::map<GroupKey, unsigned> groupIndex;
    SmallVector<FeatureGroup> groups;
    for (auto [feature, tableIndex] : llvm::enumerate(featureTables)) {
      Value table = collection.getTables()[tableIndex];
      GroupKey key{cast<TableType>(table.getType()).getFormat(),
                   cast<PoolingModeAttr>(pooling[tableIndex]).getValue(),
                   kernelKeyOf(table, symbols)};
      auto [it, inserted] = groupIndex.try_emplace(key, groups.size());
      if (inserted)
        groups.push_back(FeatureGroup{key, {}});
      groups[it->second].features.push_back(feature);
    }
    return groups;
  }

  /// One grouped lookup of `group`'s features (the keys of `features`, in
  /// order) into a keyed tensor of type `resultType`, with only the tables
  /// the group uses.
  Value buildGroupedLookup(OpBuilder &builder, Value features,
                           const FeatureGroup &group,
                           KeyedTensorType resultType) {
    ArrayRef<int64_t> featureTables = collection.getFeatureTables();
    llvm::MapVector<int64_t, int64_t> newTableIndex;
    SmallVector<Value> tables;
    SmallVector<int64_t> groupFeatureTables, columnOffsets;
    auto kjtType = cast<KeyedJaggedTensorType>(features.getType());
    for (auto [position, feature] : llvm::enumerate(group.features)) {
      int64_t oldIndex = featureTables[feature];
      auto [it, inserted] = newTableIndex.try_emplace(oldIndex, tables.size());
      if (inserted)
        tables.push_back(collection.getTables()[oldIndex]);
      groupFeatureTables.push_back(it->second);
      unsigned column = *resultType.getKeyIndex(kjtType.getKey(position));
      columnOffsets.push_back(resultType.getColumnOffset(column));
    }
    return GroupedLookupOp::create(builder, collection.getLoc(), resultType,
                                   features, tables, groupFeatureTables,
                                   columnOffsets, group.key.pooling);
  }

  EmbeddingBagCollectionOp collection;
  SymbolTableCollection &symbols;
};

/// Where the keys of a KJT come from: positions in `base`, a KJT that is not
/// itself a permute or split result.
struct KeySource {
  Value base;
  SmallVector<int64_t> positions;
};

/// Follows `ember.kjt.permute` and `ember.kjt.split` back to their source.
KeySource resolveKeys(Value kjt) {
  auto type = cast<KeyedJaggedTensorType>(kjt.getType());
  KeySource source{kjt, llvm::to_vector(llvm::seq<int64_t>(
                            0, static_cast<int64_t>(type.getNumKeys())))};
  while (true) {
    if (auto permute = source.base.getDefiningOp<KJTPermuteOp>()) {
      for (int64_t &position : source.positions)
        position = permute.getPermutation()[position];
      source.base = permute.getInput();
    } else if (auto split = source.base.getDefiningOp<KJTSplitOp>()) {
      unsigned part = cast<OpResult>(source.base).getResultNumber();
      int64_t start = 0;
      for (int64_t count : split.getKeyCounts().take_front(part))
        start += count;
      for (int64_t &position : source.positions)
        position += start;
      source.base = split.getInput();
    } else {
      return source;
    }
  }
}

/// Lookups that one grouped kernel can serve: same source KJT, block,
/// format, pooling, compute kernel and result element type.
struct MergeKey {
  Value base;
  Block *block;
  TableFormat format;
  PoolingMode pooling;
  std::string kernel;
  Type elementType;

  bool operator==(const MergeKey &other) const {
    return std::tie(base, block, format, pooling, kernel, elementType) ==
           std::tie(other.base, other.block, other.format, other.pooling,
                    other.kernel, other.elementType);
  }
};

/// Replaces a keyed_tensor.regroup whose inputs are regroups by one over
/// their inputs (identical values once), when every result key then still
/// comes from exactly one input.
void flattenRegroup(KeyedTensorRegroupOp regroup) {
  SmallVector<Value> inputs;
  bool changed = false;
  for (Value input : regroup.getInputs()) {
    auto inner = input.getDefiningOp<KeyedTensorRegroupOp>();
    changed |= static_cast<bool>(inner);
    for (Value value :
         inner ? ValueRange(inner.getInputs()) : ValueRange(input))
      if (!llvm::is_contained(inputs, value))
        inputs.push_back(value);
  }
  if (!changed)
    return;
  for (StringRef key : regroup.getType().getKeyNames())
    if (llvm::count_if(inputs, [&](Value input) {
          return cast<KeyedTensorType>(input.getType()).getKeyIndex(key);
        }) != 1)
      return;
  OpBuilder builder(regroup);
  Value flat;
  if (inputs.size() == 1 && inputs.front().getType() == regroup.getType())
    flat = inputs.front();
  else
    flat = KeyedTensorRegroupOp::create(builder, regroup.getLoc(),
                                        regroup.getType(), inputs);
  regroup.getResult().replaceAllUsesWith(flat);
  regroup.erase();
}

/// Merges grouped lookups that read disjoint keys of one source KJT with
/// the same MergeKey into one grouped lookup over that KJT; each merged
/// lookup's keyed tensor becomes a regroup of the merged one.
class LookupMerger {
public:
  LookupMerger(Operation *root, SymbolTableCollection &symbols)
      : root(root), symbols(symbols), dominance(root) {}

  void run() {
    // Buckets in the order of their first lookup, so the output does not
    // depend on pointer values.
    SmallVector<std::pair<MergeKey, SmallVector<GroupedLookupOp>>> buckets;
    root->walk([&](GroupedLookupOp lookup) {
      KeySource source = resolveKeys(lookup.getFeatures());
      Value firstTable = lookup.getTables().front();
      MergeKey key{source.base,
                   lookup->getBlock(),
                   cast<TableType>(firstTable.getType()).getFormat(),
                   lookup.getPooling(),
                   kernelKeyOf(firstTable, symbols),
                   lookup.getType().getElementType()};
      // A lookup whose tables disagree on the kernel is left alone.
      if (llvm::any_of(lookup.getTables(), [&](Value table) {
            return kernelKeyOf(table, symbols) != key.kernel;
          }))
        return;
      auto *bucket = llvm::find_if(
          buckets, [&](const auto &entry) { return entry.first == key; });
      if (bucket == buckets.end()) {
        buckets.push_back({key, {}});
        bucket = std::prev(buckets.end());
      }
      bucket->second.push_back(lookup);
    });
    for (auto &[key, lookups] : buckets)
      if (lookups.size() > 1)
        merge(key.base, lookups);
  }

private:
  void merge(Value base, ArrayRef<GroupedLookupOp> lookups) {
    auto baseType = cast<KeyedJaggedTensorType>(base.getType());
    // Owner of each base key position: (lookup, feature index in it).
    std::map<int64_t, std::pair<GroupedLookupOp, int64_t>> owners;
    for (GroupedLookupOp lookup : lookups) {
      KeySource source = resolveKeys(lookup.getFeatures());
      for (auto [feature, position] : llvm::enumerate(source.positions))
        if (!owners.try_emplace(position, lookup, feature).second)
          return; // Two lookups read the same key: not mergeable.
    }
    GroupedLookupOp first =
        *llvm::min_element(lookups, [](GroupedLookupOp a, GroupedLookupOp b) {
          return a->isBeforeInBlock(b);
        });
    for (GroupedLookupOp lookup : lookups)
      for (Value table : lookup.getTables())
        if (!dominance.properlyDominates(table, first))
          return;
    if (!dominance.properlyDominates(base, first))
      return;

    SmallVector<int64_t> positions;
    SmallVector<StringRef> keys;
    SmallVector<int64_t> dims, featureTables, columnOffsets;
    llvm::MapVector<Value, int64_t> tableIndex;
    int64_t column = 0;
    for (auto &[position, owner] : owners) {
      auto [lookup, feature] = owner;
      Value table = lookup.getTables()[lookup.getFeatureTables()[feature]];
      auto [it, inserted] = tableIndex.try_emplace(table, tableIndex.size());
      (void)inserted;
      int64_t dim = cast<TableType>(table.getType()).getDim();
      positions.push_back(position);
      keys.push_back(baseType.getKey(position));
      dims.push_back(dim);
      featureTables.push_back(it->second);
      columnOffsets.push_back(column);
      column += dim;
    }
    SmallVector<Value> tables;
    for (auto &entry : tableIndex)
      tables.push_back(entry.first);

    OpBuilder builder(first);
    Location loc = builder.getFusedLoc(llvm::to_vector(llvm::map_range(
        lookups, [](GroupedLookupOp op) { return op.getLoc(); })));
    Value features = base;
    if (positions != llvm::to_vector(llvm::seq<int64_t>(
                         0, static_cast<int64_t>(baseType.getNumKeys()))))
      features = KJTPermuteOp::create(builder, loc, base, positions);
    auto mergedType = KeyedTensorType::get(builder.getContext(), keys, dims,
                                           first.getType().getElementType());
    Value merged = GroupedLookupOp::create(builder, loc, mergedType, features,
                                           tables, featureTables, columnOffsets,
                                           first.getPooling());
    llvm::SetVector<Operation *> users;
    SmallVector<Operation *> selectors;
    for (GroupedLookupOp lookup : lookups) {
      auto selected = KeyedTensorRegroupOp::create(
          builder, lookup.getLoc(), lookup.getType(), ValueRange(merged));
      selectors.push_back(selected);
      users.insert(lookup->user_begin(), lookup->user_end());
      lookup.getResult().replaceAllUsesWith(selected);
    }
    // Erased only now: the builder inserts before `first`.
    for (GroupedLookupOp lookup : lookups) {
      Value oldFeatures = lookup.getFeatures();
      lookup.erase();
      eraseDeadKeySelection(oldFeatures);
    }
    for (Operation *user : users)
      if (auto regroup = dyn_cast<KeyedTensorRegroupOp>(user))
        flattenRegroup(regroup);
    for (Operation *selector : selectors)
      if (selector->use_empty())
        selector->erase();
  }

  /// Erases the permutes and splits that selected the keys of a merged
  /// lookup once nothing else uses them.
  static void eraseDeadKeySelection(Value kjt) {
    while (Operation *def = kjt.getDefiningOp()) {
      if (!isa<KJTPermuteOp, KJTSplitOp>(def) || !def->use_empty())
        return;
      kjt = def->getOperand(0);
      def->erase();
    }
  }

  Operation *root;
  SymbolTableCollection &symbols;
  DominanceInfo dominance;
};

struct GroupTablesPass
    : public mlir::ember::impl::EmberGroupTablesBase<GroupTablesPass> {
  void runOnOperation() override {
    SmallVector<EmbeddingBagCollectionOp> collections;
    getOperation()->walk(
        [&](EmbeddingBagCollectionOp op) { collections.push_back(op); });
    SymbolTableCollection symbols;
    for (EmbeddingBagCollectionOp collection : collections)
      CollectionGrouper(collection, symbols).run();
    LookupMerger(getOperation(), symbols).run();
  }
};

} // namespace
