//===- PlanSharding.cpp - the sharding planner as a pass ------------------===//
//
// Collects the embedding tables of ember.embedding_bag and
// ember.embedding_bag_collection ops, runs the planner of sharding/ (library
// EmberSharding) and records its choice as ember.sharding attributes (the
// contract the partitioning pass reads; docs/sharding.md).
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberShardingAttrs.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "passes/Passes.h"
#include "sharding/PlanJson.h"
#include "sharding/PlanReport.h"
#include "sharding/Planner.h"
#include "sharding/ShardingDriver.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"

namespace mlir {
namespace ember {
#define GEN_PASS_DEF_EMBERPLANSHARDING
#include "passes/Passes.h.inc"
} // namespace ember
} // namespace mlir

using namespace mlir;
using namespace mlir::ember;
namespace planner = ::ember::sharding;

namespace {

/// The attribute names of the contract with the partitioning pass.
constexpr StringLiteral kShardingAttrName = "ember.sharding";
constexpr StringLiteral kWorldSizeAttrName = "ember.world_size";
/// Set by the ONNX importer on an embedding_bag_collection from the
/// exporter's table_names and module (TorchRec's table names and module
/// path): the names of its tables in the plan and its ShardingPlan key.
constexpr StringLiteral kTableNamesAttr = "ember.table_names";
constexpr StringLiteral kModuleAttr = "ember.module";
/// On a sequence lookup: its EmbeddingCollection's name for the table.
constexpr StringLiteral kTableNameAttr = "ember.table_name";

planner::TableFormat toPlannerFormat(TableFormat format) {
  switch (format) {
  case TableFormat::f32:
    return planner::TableFormat::F32;
  case TableFormat::f16:
    return planner::TableFormat::F16;
  case TableFormat::bf16:
    return planner::TableFormat::BF16;
  case TableFormat::int8_rowwise:
    return planner::TableFormat::Int8RowWise;
  case TableFormat::int4_rowwise:
    return planner::TableFormat::Int4RowWise;
  }
  return planner::TableFormat::F32;
}

planner::PoolingKind toPlannerPooling(PoolingMode mode) {
  switch (mode) {
  case PoolingMode::sum:
    return planner::PoolingKind::Sum;
  case PoolingMode::mean:
    return planner::PoolingKind::Mean;
  case PoolingMode::max:
    return planner::PoolingKind::Max;
  }
  return planner::PoolingKind::Sum;
}

ShardingType toShardingType(planner::ShardingKind kind) {
  switch (kind) {
  case planner::ShardingKind::TableWise:
    return ShardingType::table_wise;
  case planner::ShardingKind::RowWise:
    return ShardingType::row_wise;
  case planner::ShardingKind::ColumnWise:
    return ShardingType::column_wise;
  case planner::ShardingKind::TableRowWise:
    return ShardingType::table_row_wise;
  case planner::ShardingKind::DataParallel:
    return ShardingType::data_parallel;
  }
  return ShardingType::table_wise;
}

/// A table as the planner sees it, and where the IR uses it.
struct CollectedTable {
  /// The table value (a table.ref or any other table-typed value).
  Value value;
  /// The ember.table symbol, when read with ember.table.ref.
  TableOp symbol;
  planner::TableSpec spec;
  /// Whether any use pools with something other than sum (the strictest
  /// pooling wins).
  bool seenPooling = false;
};

/// The name of a location, if it carries one (ONNX node or torch module).
std::optional<std::string> locationName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::optional<std::string> name = locationName(inner))
        return name;
  return std::nullopt;
}

/// Mean ids per bag of a KJT built by ember.kjt.create from static shapes
/// (values [N], lengths [K*B] or offsets [K*B+1]): N / (K*B); else 1.
double staticPoolingFactor(Value features) {
  auto create = features.getDefiningOp<KJTCreateOp>();
  if (!create || create.getBatchSizes())
    return 1.0;
  auto values = cast<RankedTensorType>(create.getValues().getType());
  int64_t bags = ShapedType::kDynamic;
  if (Value lengths = create.getLengths()) {
    auto type = cast<RankedTensorType>(lengths.getType());
    if (type.hasStaticShape())
      bags = type.getDimSize(0);
  } else if (Value offsets = create.getOffsets()) {
    auto type = cast<RankedTensorType>(offsets.getType());
    if (type.hasStaticShape())
      bags = type.getDimSize(0) - 1;
  }
  if (!values.hasStaticShape() || ShapedType::isDynamic(bags) || bags <= 0)
    return 1.0;
  return static_cast<double>(values.getDimSize(0)) / static_cast<double>(bags);
}

class TableCollector {
public:
  explicit TableCollector(ModuleOp module) : symbols(), module(module) {}

  /// The planner table of `value`, made on first sight. `hint` names a table
  /// that has no symbol.
  CollectedTable &tableOf(Value value, StringRef hint) {
    Value key = value;
    TableOp symbol;
    if (auto ref = value.getDefiningOp<TableRefOp>()) {
      symbol =
          symbols.lookupNearestSymbolFrom<TableOp>(ref, ref.getTableAttr());
      if (symbol) {
        auto it = bySymbol.find(symbol);
        if (it != bySymbol.end())
          return tables[it->second];
      }
    }
    auto it = byValue.find(key);
    if (it != byValue.end())
      return tables[it->second];
    CollectedTable table;
    table.value = value;
    table.symbol = symbol;
    auto type = cast<TableType>(value.getType());
    table.spec.rows = type.getRows();
    table.spec.dim = type.getDim();
    table.spec.format = toPlannerFormat(type.getFormat());
    table.spec.name = symbol ? symbol.getSymName().str() : hint.str();
    tables.push_back(table);
    byValue[key] = tables.size() - 1;
    if (symbol)
      bySymbol[symbol] = tables.size() - 1;
    return tables.back();
  }

  static void addUse(CollectedTable &table, PoolingMode mode, bool weighted) {
    planner::PoolingKind pooling = toPlannerPooling(mode);
    if (!table.seenPooling || pooling != planner::PoolingKind::Sum)
      table.spec.pooling = pooling;
    table.seenPooling = true;
    table.spec.weighted |= weighted;
  }

  LogicalResult collect() {
    int64_t anonymous = 0;
    WalkResult result = module.walk([&](Operation *op) -> WalkResult {
      if (isa<GroupedLookupOp>(op)) {
        // Grouping reads the sharding (the kernel decides the groups).
        op->emitError("ember-plan-sharding runs before ember-group-tables: "
                      "it plans the tables of embedding_bag and "
                      "embedding_bag_collection ops, not of grouped lookups");
        return WalkResult::interrupt();
      }
      if (auto bag = dyn_cast<EmbeddingBagOp>(op)) {
        std::string hint = locationName(bag.getLoc())
                               .value_or("table_" + std::to_string(anonymous));
        ++anonymous;
        CollectedTable &table = tableOf(bag.getTable(), hint);
        addUse(table, bag.getPooling(), bag.getPerSampleWeights() != nullptr);
        // Mean ids per bag from static shapes, else 1 (stats may override).
        double factor = 1.0;
        auto ids = cast<RankedTensorType>(bag.getIndices().getType());
        auto offsets = cast<RankedTensorType>(bag.getOffsets().getType());
        if (ids.hasStaticShape() && offsets.hasStaticShape()) {
          int64_t bags =
              offsets.getDimSize(0) - (bag.getIncludeLastOffset() ? 1 : 0);
          if (bags > 0)
            factor = static_cast<double>(ids.getDimSize(0)) /
                     static_cast<double>(bags);
        }
        table.spec.features.push_back({table.spec.name, factor});
        ops.push_back({op, {static_cast<int64_t>(indexOf(table))}});
        return WalkResult::advance();
      }
      if (auto lookup = dyn_cast<SequenceLookupOp>(op)) {
        // An EmbeddingCollection's feature (ember-split-embedding-collections
        // keeps the collection's table name and module path on it).
        std::string hint = "table_" + std::to_string(anonymous);
        if (auto name = op->getAttrOfType<StringAttr>(kTableNameAttr);
            name && !name.getValue().empty())
          hint = name.str();
        else if (std::optional<std::string> loc =
                     locationName(lookup.getLoc()))
          hint = *loc;
        ++anonymous;
        CollectedTable &table = tableOf(lookup.getTable(), hint);
        if (auto modulePath = op->getAttrOfType<StringAttr>(kModuleAttr);
            modulePath && table.spec.module.empty())
          table.spec.module = modulePath.str();
        table.spec.sequence = true;
        if (!table.seenPooling)
          table.seenPooling = true;
        std::string feature =
            locationName(lookup.getLoc()).value_or(table.spec.name);
        table.spec.features.push_back({feature, 1.0});
        ops.push_back({op, {static_cast<int64_t>(indexOf(table))}});
        return WalkResult::advance();
      }
      if (auto collection = dyn_cast<EmbeddingBagCollectionOp>(op)) {
        auto kjt =
            cast<KeyedJaggedTensorType>(collection.getFeatures().getType());
        ArrayRef<int64_t> featureTables = collection.getFeatureTables();
        std::vector<int64_t> indices;
        // The frontend's table names and module path (TorchRec's
        // EmbeddingBagConfig names), when it gave them.
        auto tableNames = collection->getAttrOfType<ArrayAttr>(kTableNamesAttr);
        if (tableNames && tableNames.size() != collection.getTables().size())
          tableNames = nullptr;
        auto modulePath = collection->getAttrOfType<StringAttr>(kModuleAttr);
        for (auto [operand, tableValue] :
             llvm::enumerate(collection.getTables())) {
          // Else name a symbol-less table after its first feature.
          std::string hint = "table_" + std::to_string(anonymous);
          auto given = tableNames ? dyn_cast<StringAttr>(tableNames[operand])
                                  : StringAttr();
          if (given && !given.getValue().empty()) {
            hint = given.str();
          } else {
            for (auto [feature, t] : llvm::enumerate(featureTables))
              if (t == static_cast<int64_t>(operand)) {
                hint = kjt.getKey(feature).str();
                break;
              }
          }
          ++anonymous;
          CollectedTable &table = tableOf(tableValue, hint);
          if (modulePath && table.spec.module.empty())
            table.spec.module = modulePath.str();
          auto pooling =
              cast<PoolingModeAttr>(collection.getPooling()[operand]);
          addUse(table, pooling.getValue(), kjt.isWeighted());
          double factor = staticPoolingFactor(collection.getFeatures());
          for (auto [feature, t] : llvm::enumerate(featureTables))
            if (t == static_cast<int64_t>(operand))
              table.spec.features.push_back(
                  {kjt.getKey(feature).str(), factor});
          indices.push_back(indexOf(table));
        }
        ops.push_back({op, indices});
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    // A table no feature reads still has to be placed: give it one.
    for (CollectedTable &table : tables)
      if (table.spec.features.empty())
        table.spec.features.push_back({table.spec.name, 0.0});
    uniquifyNames();
    return success();
  }

  size_t indexOf(const CollectedTable &table) const {
    return &table - tables.data();
  }

  void uniquifyNames() {
    llvm::StringSet<> symbolNames;
    for (CollectedTable &table : tables)
      if (table.symbol)
        symbolNames.insert(table.spec.name);
    llvm::StringSet<> used;
    for (CollectedTable &table : tables) {
      if (table.symbol) {
        used.insert(table.spec.name);
        continue;
      }
      std::string name = table.spec.name;
      for (int k = 1; used.contains(name) || symbolNames.contains(name); ++k)
        name = table.spec.name + "_" + std::to_string(k);
      if (name != table.spec.name && table.spec.features.size() == 1 &&
          table.spec.features[0].name == table.spec.name)
        table.spec.features[0].name = name;
      table.spec.name = name;
      used.insert(name);
    }
  }

  SymbolTableCollection symbols;
  ModuleOp module;
  std::vector<CollectedTable> tables;
  llvm::DenseMap<Value, size_t> byValue;
  llvm::DenseMap<Operation *, size_t> bySymbol;
  /// Every lookup op and the planner tables of its table operands.
  std::vector<std::pair<Operation *, std::vector<int64_t>>> ops;
};

ShardingAttr toAttr(MLIRContext *context, const planner::TableSharding &plan,
                    const planner::Topology &topology) {
  ShardingType type = toShardingType(plan.kind);
  StringRef kernel = planner::computeKernelName(plan.kernel);
  if (plan.kind == planner::ShardingKind::DataParallel) {
    DenseI64ArrayAttr ranks;
    if (static_cast<int64_t>(plan.replicaRanks.size()) != topology.worldSize)
      ranks = DenseI64ArrayAttr::get(context, plan.replicaRanks);
    return ShardingAttr::get(context, type, {}, ranks, 0, kernel);
  }
  SmallVector<ShardAttr> shards;
  for (const planner::Shard &shard : plan.shards)
    shards.push_back(ShardAttr::get(context, {shard.rowOffset, shard.colOffset},
                                    {shard.rows, shard.cols}, shard.rank));
  int64_t ranksPerNode = plan.kind == planner::ShardingKind::TableRowWise
                             ? topology.ranksPerNode
                             : 0;
  return ShardingAttr::get(context, type, shards, DenseI64ArrayAttr(),
                           ranksPerNode, kernel);
}

struct PlanShardingPass
    : public mlir::ember::impl::EmberPlanShardingBase<PlanShardingPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TableCollector collector(module);
    if (failed(collector.collect()))
      return signalPassFailure();

    // The report's form (text or HTML), checked before planning.
    if (reportFile.empty() && !reportFormat.empty()) {
      module.emitError("ember-plan-sharding: report-format needs a "
                       "report-file");
      return signalPassFailure();
    }
    llvm::Expected<planner::ReportFormat> format =
        planner::chooseReportFormat(reportFile, reportFormat);
    if (!format) {
      module.emitError("ember-plan-sharding: ")
          << llvm::toString(format.takeError());
      return signalPassFailure();
    }

    planner::ShardingRequest request;
    request.worldSize = worldSize;
    request.ranksPerNode = ranksPerNode;
    request.batchSizePerRank = batchSize;
    request.sharding = sharding;
    request.tableOverrides.assign(tableSharding.begin(), tableSharding.end());
    request.optimizer = optimizer;
    request.includeBackward = includeBackward;
    request.objective = objective;
    request.memoryReservation = memoryReservation;
    request.leanSlack = leanSlack;
    request.pipelineDepth = pipelineDepth;
    request.topologyFile = topologyFile;
    request.statsFile = statsFile;
    request.planFile = planFile;

    std::vector<planner::TableSpec> specs;
    for (const CollectedTable &table : collector.tables)
      specs.push_back(table.spec);
    llvm::Expected<planner::PlannerOptions> options =
        planner::preparePlannerOptions(request, specs);
    if (!options) {
      module.emitError("ember-plan-sharding: ")
          << llvm::toString(options.takeError());
      return signalPassFailure();
    }
    llvm::Expected<planner::ShardingPlan> plan =
        planner::planSharding(specs, *options);
    if (!plan) {
      module.emitError("ember-plan-sharding: ")
          << llvm::toString(plan.takeError());
      return signalPassFailure();
    }

    // A forced kind some tables do not allow: say which.
    for (const std::string &note : plan->notes)
      module.emitWarning("ember-plan-sharding: ") << note;

    // Files first: a failure to write them leaves the IR unchanged.
    if (!exportFile.empty())
      if (llvm::Error error = planner::writeTextFile(
              exportFile, planner::planToJson(*plan, specs))) {
        module.emitError("ember-plan-sharding: cannot write the plan to '")
            << exportFile << "': " << llvm::toString(std::move(error));
        return signalPassFailure();
      }
    if (!reportFile.empty())
      if (llvm::Error error = planner::writeTextFile(
              reportFile, planner::renderPlanReport(*plan, specs, *format))) {
        module.emitError("ember-plan-sharding: cannot write the report to '")
            << reportFile << "': " << llvm::toString(std::move(error));
        // No half of the outputs: drop the plan written just before.
        if (!exportFile.empty() && exportFile != "-")
          (void)llvm::sys::fs::remove(exportFile);
        return signalPassFailure();
      }

    MLIRContext *context = &getContext();
    std::vector<ShardingAttr> attrs;
    for (const planner::TableSharding &table : plan->tables)
      attrs.push_back(toAttr(context, table, plan->topology));
    for (auto &[op, indices] : collector.ops) {
      if (isa<EmbeddingBagOp, SequenceLookupOp>(op)) {
        op->setAttr(kShardingAttrName, attrs[indices.front()]);
        continue;
      }
      SmallVector<Attribute> perTable;
      for (int64_t index : indices)
        perTable.push_back(attrs[index]);
      op->setAttr(kShardingAttrName, ArrayAttr::get(context, perTable));
    }
    for (auto [index, table] : llvm::enumerate(collector.tables))
      if (table.symbol)
        table.symbol.setShardingAttr(attrs[index]);
    module->setAttr(kWorldSizeAttrName,
                    IntegerAttr::get(IntegerType::get(context, 64),
                                     plan->topology.worldSize));
  }
};

} // namespace
