//===- EmberEmbeddingOps.cpp - tables and lookups ------------------------===//
#include "EmberOpsUtils.h"
#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberShardingAttrs.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::ember;

//===----------------------------------------------------------------------===//
// TableOp
//===----------------------------------------------------------------------===//

LogicalResult TableOp::verify() {
  TableType type = getTableType();
  if (std::optional<ElementsAttr> value = getValue()) {
    RankedTensorType storage = type.getStorageType();
    auto valueType = dyn_cast<RankedTensorType>(value->getType());
    if (!valueType || valueType != storage)
      return emitOpError("initial value must have the table's storage type ")
             << storage << ", got " << value->getType();
    if (getFile())
      return emitOpError("has both an inline initial value and an external "
                         "weight file; give at most one");
  }
  if (getFile().has_value() != getOffset().has_value())
    return emitOpError("external weights need both a file and a byte offset");
  if (std::optional<int64_t> offset = getOffset(); offset && *offset < 0)
    return emitOpError("external weight offset must be non-negative, got ")
           << *offset;
  if (std::optional<StringRef> file = getFile(); file && file->empty())
    return emitOpError("external weight file name is empty");
  if (std::optional<Attribute> sharding = getSharding()) {
    auto shardingAttr = dyn_cast<ShardingAttr>(*sharding);
    if (!shardingAttr)
      return emitOpError(
                 "'sharding' must be an #ember.sharding attribute, got ")
             << *sharding;
    if (failed(verifyTableSharding(shardingAttr, type.getRows(), type.getDim(),
                                   [&] { return emitOpError(); })))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// TableRefOp
//===----------------------------------------------------------------------===//

LogicalResult TableRefOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *symbol =
      symbolTable.lookupNearestSymbolFrom(getOperation(), getTableAttr());
  if (!symbol)
    return emitOpError("refers to unknown table @") << getTable();
  auto table = dyn_cast<TableOp>(symbol);
  if (!table)
    return emitOpError("@") << getTable() << " is a '" << symbol->getName()
                            << "', not an ember.table";
  if (table.getTableType() != getType())
    return emitOpError("result type ")
           << getType() << " does not match the type " << table.getTableType()
           << " of table @" << getTable();
  return success();
}

//===----------------------------------------------------------------------===//
// TableFromTensorOp
//===----------------------------------------------------------------------===//

LogicalResult TableFromTensorOp::verify() {
  TableType table = getType();
  RankedTensorType storage = table.getStorageType();
  RankedTensorType weights = getWeights().getType();
  if (weights != storage)
    return emitOpError("weights must have the storage type ")
           << storage << " of " << table << ", got " << weights;
  return success();
}

//===----------------------------------------------------------------------===//
// EmbeddingBagOp
//===----------------------------------------------------------------------===//

/// Checks that `result` is a [batch, dim] float tensor whose element type a
/// lookup in `table` can produce.
static LogicalResult verifyPooledResult(Operation *op, TableType table,
                                        RankedTensorType result,
                                        int64_t batch) {
  Type elementType = result.getElementType();
  if (!elementType.isF32() && elementType != table.getElementType())
    return op->emitOpError("result element type must be f32 or the table's ")
           << table.getElementType() << ", got " << elementType;
  if (!sizesCompatible(result.getDimSize(1), table.getDim()))
    return op->emitOpError("result dim 1 must be the table dim ")
           << table.getDim() << ", got " << sizeToString(result.getDimSize(1));
  if (!sizesCompatible(result.getDimSize(0), batch))
    return op->emitOpError("result dim 0 must be the number of bags ")
           << sizeToString(batch) << ", got "
           << sizeToString(result.getDimSize(0));
  return success();
}

LogicalResult EmbeddingBagOp::verify() {
  TableType table = getTable().getType();
  auto indices = cast<RankedTensorType>(getIndices().getType());
  auto offsets = cast<RankedTensorType>(getOffsets().getType());
  if (indices.getElementType() != offsets.getElementType())
    return emitOpError("indices and offsets must have the same element type, "
                       "got ")
           << indices.getElementType() << " and " << offsets.getElementType();
  if (Value weights = getPerSampleWeights()) {
    if (getPooling() != PoolingMode::sum)
      return emitOpError("per-sample weights are only supported with "
                         "pooling = sum, got pooling = ")
             << stringifyPoolingMode(getPooling());
    auto weightsType = cast<RankedTensorType>(weights.getType());
    if (!sizesCompatible(weightsType.getDimSize(0), indices.getDimSize(0)))
      return emitOpError("per-sample weights must have one entry per index (")
             << sizeToString(indices.getDimSize(0)) << "), got "
             << sizeToString(weightsType.getDimSize(0));
  }
  if (std::optional<int64_t> pad = getPaddingIdx()) {
    if (*pad < -table.getRows() || *pad >= table.getRows())
      return emitOpError("padding_idx must be in [")
             << -table.getRows() << ", " << table.getRows() << "), got "
             << *pad;
  }
  int64_t batch = offsets.getDimSize(0);
  if (!ShapedType::isDynamic(batch) && getIncludeLastOffset()) {
    if (batch == 0)
      return emitOpError("with include_last_offset, offsets needs at least "
                         "one entry");
    --batch;
  }
  return verifyPooledResult(*this, table, getResult().getType(), batch);
}

//===----------------------------------------------------------------------===//
// Collections
//===----------------------------------------------------------------------===//

/// Checks feature_tables: one in-range table index per KJT key, and that
/// every table is used.
static LogicalResult verifyFeatureTables(Operation *op,
                                         KeyedJaggedTensorType kjt,
                                         ArrayRef<int64_t> featureTables,
                                         size_t numTables) {
  if (featureTables.size() != kjt.getNumKeys())
    return op->emitOpError("feature_tables must have one entry per KJT key (")
           << kjt.getNumKeys() << "), got " << featureTables.size();
  if (numTables == 0)
    return op->emitOpError("needs at least one table");
  SmallVector<bool> used(numTables, false);
  for (auto [i, table] : llvm::enumerate(featureTables)) {
    if (table < 0 || table >= static_cast<int64_t>(numTables))
      return op->emitOpError("feature_tables[")
             << i << "] (key \"" << kjt.getKey(i) << "\") is " << table
             << ", out of range for " << numTables << " tables";
    used[table] = true;
  }
  for (auto [i, isUsed] : llvm::enumerate(used))
    if (!isUsed)
      return op->emitOpError("table #") << i << " is not used by any feature";
  return success();
}

LogicalResult EmbeddingBagCollectionOp::verify() {
  KeyedJaggedTensorType kjt = getFeatures().getType();
  if (kjt.isVariableBatch())
    return emitOpError("does not accept a variable_batch KJT: the keyed tensor "
                       "result has one batch size");
  if (getPooling().size() != getTables().size())
    return emitOpError("pooling must have one mode per table (")
           << getTables().size() << "), got " << getPooling().size();
  if (failed(verifyFeatureTables(*this, kjt, getFeatureTables(),
                                 getTables().size())))
    return failure();
  KeyedTensorType result = getResult().getType();
  if (result.getKeys() != kjt.getKeys())
    return emitOpError("result keys must be the KJT keys in order");
  for (auto [i, tableIndex] : llvm::enumerate(getFeatureTables())) {
    auto table = cast<TableType>(getTables()[tableIndex].getType());
    if (result.getDims()[i] != table.getDim())
      return emitOpError("result dim of key \"")
             << kjt.getKey(i) << "\" must be its table's dim " << table.getDim()
             << ", got " << result.getDims()[i];
    auto mode = cast<PoolingModeAttr>(getPooling()[tableIndex]).getValue();
    if (kjt.isWeighted() && mode != PoolingMode::sum)
      return emitOpError("weighted KJT feature \"")
             << kjt.getKey(i) << "\" uses table #" << tableIndex
             << " with pooling = " << stringifyPoolingMode(mode)
             << "; per-sample weights need pooling = sum";
    Type elementType = result.getElementType();
    if (!elementType.isF32() && elementType != table.getElementType())
      return emitOpError("result element type must be f32 or the element "
                         "type of every table, got ")
             << elementType << " for table #" << tableIndex << " ("
             << table.getElementType() << ")";
  }
  return success();
}

LogicalResult EmbeddingCollectionOp::verify() {
  KeyedJaggedTensorType kjt = getFeatures().getType();
  if (failed(verifyFeatureTables(*this, kjt, getFeatureTables(),
                                 getTables().size())))
    return failure();
  if (getResults().size() != kjt.getNumKeys())
    return emitOpError("must have one result per KJT key (")
           << kjt.getNumKeys() << "), got " << getResults().size();
  for (auto [i, tableIndex] : llvm::enumerate(getFeatureTables())) {
    auto table = cast<TableType>(getTables()[tableIndex].getType());
    auto result = cast<JaggedTensorType>(getResults()[i].getType());
    if (result.getDenseShape() != ArrayRef<int64_t>{table.getDim()})
      return emitOpError("result #") << i << " (key \"" << kjt.getKey(i)
                                     << "\") must have dense shape ["
                                     << table.getDim() << "], got " << result;
    Type elementType = result.getElementType();
    if (!elementType.isF32() && elementType != table.getElementType())
      return emitOpError("result #")
             << i << " element type must be f32 or " << table.getElementType()
             << ", got " << elementType;
  }
  return success();
}

LogicalResult SequenceLookupOp::verify() {
  TableType table = getTable().getType();
  JaggedTensorType ids = getIds().getType();
  JaggedTensorType result = getResult().getType();
  if (!ids.getDenseShape().empty() ||
      !(ids.getElementType().isSignlessInteger(32) ||
        ids.getElementType().isSignlessInteger(64)))
    return emitOpError("ids must be a jagged list of i32 or i64 ids with no "
                       "dense dims, got ")
           << ids;
  if (result.getDenseShape() != ArrayRef<int64_t>{table.getDim()})
    return emitOpError("result must have dense shape [")
           << table.getDim() << "] (the table dim), got " << result;
  Type elementType = result.getElementType();
  if (!elementType.isF32() && elementType != table.getElementType())
    return emitOpError("result element type must be f32 or the table's ")
           << table.getElementType() << ", got " << elementType;
  return success();
}

LogicalResult GroupedLookupOp::verify() {
  KeyedJaggedTensorType kjt = getFeatures().getType();
  if (kjt.isVariableBatch())
    return emitOpError("does not accept a variable_batch KJT: the keyed tensor "
                       "result has one batch size");
  if (failed(verifyFeatureTables(*this, kjt, getFeatureTables(),
                                 getTables().size())))
    return failure();
  auto first = cast<TableType>(getTables()[0].getType());
  for (auto [i, value] : llvm::enumerate(getTables())) {
    auto table = cast<TableType>(value.getType());
    if (table.getFormat() != first.getFormat())
      return emitOpError("all tables of a group must have one format: table #0 "
                         "is ")
             << stringifyTableFormat(first.getFormat()) << ", table #" << i
             << " is " << stringifyTableFormat(table.getFormat());
  }
  if (kjt.isWeighted() && getPooling() != PoolingMode::sum)
    return emitOpError("a weighted KJT needs pooling = sum, got pooling = ")
           << stringifyPoolingMode(getPooling());
  ArrayRef<int64_t> columnOffsets = getColumnOffsets();
  if (columnOffsets.size() != kjt.getNumKeys())
    return emitOpError("column_offsets must have one entry per KJT key (")
           << kjt.getNumKeys() << "), got " << columnOffsets.size();
  KeyedTensorType result = getResult().getType();
  if (result.getNumKeys() != kjt.getNumKeys())
    return emitOpError("result must hold the ")
           << kjt.getNumKeys() << " KJT keys, got " << result.getNumKeys()
           << " keys";
  for (auto [i, tableIndex] : llvm::enumerate(getFeatureTables())) {
    StringRef key = kjt.getKey(i);
    std::optional<unsigned> column = result.getKeyIndex(key);
    if (!column)
      return emitOpError("result has no key \"") << key << "\"";
    auto table = cast<TableType>(getTables()[tableIndex].getType());
    if (result.getDims()[*column] != table.getDim())
      return emitOpError("result dim of key \"")
             << key << "\" must be its table's dim " << table.getDim()
             << ", got " << result.getDims()[*column];
    if (columnOffsets[i] != result.getColumnOffset(*column))
      return emitOpError("column_offsets[")
             << i << "] (key \"" << key << "\") is " << columnOffsets[i]
             << " but the result places that key at column "
             << result.getColumnOffset(*column);
  }
  Type elementType = result.getElementType();
  if (!elementType.isF32() && elementType != first.getElementType())
    return emitOpError("result element type must be f32 or the tables' ")
           << first.getElementType() << ", got " << elementType;
  return success();
}

void EmbeddingBagCollectionOp::build(OpBuilder &builder, OperationState &state,
                                     Value features, ValueRange tables,
                                     ArrayRef<int64_t> featureTables,
                                     ArrayRef<PoolingMode> pooling) {
  auto kjt = cast<KeyedJaggedTensorType>(features.getType());
  SmallVector<int64_t> dims;
  for (int64_t index : featureTables)
    dims.push_back(index >= 0 && index < static_cast<int64_t>(tables.size())
                       ? cast<TableType>(tables[index].getType()).getDim()
                       : 1);
  SmallVector<Attribute> modes;
  for (PoolingMode mode : pooling)
    modes.push_back(PoolingModeAttr::get(builder.getContext(), mode));
  auto result = KeyedTensorType::get(builder.getContext(), kjt.getKeys(), dims,
                                     builder.getF32Type());
  build(builder, state, result, features, tables,
        builder.getDenseI64ArrayAttr(featureTables),
        builder.getArrayAttr(modes));
}
