//===- SplitEmbeddingCollections.cpp - sequence lookups per feature -------===//
//
// Rewrites every ember.embedding_collection (TorchRec's EmbeddingCollection:
// unpooled lookups, one jagged result per KJT key) into what the planner,
// the partitioning and the plan emitter work on: the KJT split into one-key
// KJTs, and per key one ember.sequence_lookup of its ids (a jagged tensor of
// the key's values and offsets) in the key's table. Each lookup carries the
// collection's table name (`ember.table_name`) and module path
// (`ember.module`), so that planned tables keep TorchRec's names.
//
//===----------------------------------------------------------------------===//
#include "dialects/ember/EmberOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::ember {
#define GEN_PASS_DEF_EMBERSPLITEMBEDDINGCOLLECTIONS
#include "passes/Passes.h.inc"
} // namespace mlir::ember

using namespace mlir;
using namespace mlir::ember;

namespace {

constexpr llvm::StringLiteral kTableNamesAttr = "ember.table_names";
constexpr llvm::StringLiteral kTableNameAttr = "ember.table_name";
constexpr llvm::StringLiteral kModuleAttr = "ember.module";

void splitCollection(EmbeddingCollectionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  KeyedJaggedTensorType kjtType = op.getFeatures().getType();
  unsigned numKeys = kjtType.getNumKeys();
  auto tableNames = op->getAttrOfType<ArrayAttr>(kTableNamesAttr);
  if (tableNames && tableNames.size() != op.getTables().size())
    tableNames = nullptr;
  auto modulePath = op->getAttrOfType<StringAttr>(kModuleAttr);
  auto split = KJTSplitOp::create(b, loc, op.getFeatures(),
                                  SmallVector<int64_t>(numKeys, 1));
  auto i64Offsets = RankedTensorType::get({ShapedType::kDynamic},
                                          b.getI64Type());
  for (unsigned i = 0; i < numKeys; ++i) {
    Value feature = split.getResults()[i];
    // Named after the key: the lookup's messages and instructions say which.
    Location keyLoc = NameLoc::get(b.getStringAttr(kjtType.getKey(i)), loc);
    Value values = KJTValuesOp::create(b, keyLoc, feature);
    // Jagged offsets are i64 (also for i32 lengths).
    Value offsets = KJTOffsetsOp::create(b, keyLoc, i64Offsets, feature);
    auto idsType = JaggedTensorType::get(
        b.getContext(), kjtType.getValueType(), ArrayRef<int64_t>{});
    Value ids = JaggedCreateOp::create(b, keyLoc, idsType, values, offsets);
    int64_t t = op.getFeatureTables()[i];
    auto lookup =
        SequenceLookupOp::create(b, keyLoc, op.getResults()[i].getType(),
                                 op.getTables()[t], ids);
    if (tableNames)
      if (auto name = dyn_cast<StringAttr>(tableNames[t]);
          name && !name.getValue().empty())
        lookup->setAttr(kTableNameAttr, name);
    if (modulePath)
      lookup->setAttr(kModuleAttr, modulePath);
    op.getResults()[i].replaceAllUsesWith(lookup.getResult());
  }
  op.erase();
}

struct SplitEmbeddingCollectionsPass
    : public mlir::ember::impl::EmberSplitEmbeddingCollectionsBase<
          SplitEmbeddingCollectionsPass> {
  void runOnOperation() override {
    SmallVector<EmbeddingCollectionOp> collections;
    getOperation()->walk(
        [&](EmbeddingCollectionOp op) { collections.push_back(op); });
    for (EmbeddingCollectionOp op : collections)
      splitCollection(op);
  }
};

} // namespace
