//===- EmberKjtOps.cpp - KJT nodes of the 'ember' ONNX domain -------------===//
//
// ember.KJT builds a keyed jagged tensor from its parts, KJTPermute and
// KJTSplit rearrange its keys, ember.EmbeddingBagCollection looks every KJT
// feature up in its table and KeyedTensorGet reads one key's columns.
// Documented (inputs, attributes) in docs/frontend-onnx.md. A KJT is an MLIR
// value of type !ember.kjt that only these nodes consume; graph inputs that
// feed an ember.KJT node become one KJT argument (KjtInputs.cpp).
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberTypes.h"
#include "frontends/onnx/IRBuilders.h"
#include "frontends/onnx/OpConverterRegistry.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "passes/WeightData.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

bool isIndexTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 1 &&
         (type.getElementType().isInteger(32) ||
          type.getElementType().isInteger(64));
}

/// ember.KJT(values [N], lengths [K*B] (or offsets [K*B+1]) [, weights [N]])
///   -> KJT
/// attributes: keys (strings, required), offsets (0 | 1: the second input is
/// offsets instead of lengths; default 0).
LogicalResult convertKjt(ImportContext &ctx) {
  Value values = ctx.input(0), counts = ctx.input(1);
  if (!values || !counts)
    return failure();
  Value weights;
  if (ctx.hasInput(2) && !(weights = ctx.input(2)))
    return failure();
  if (!isIndexTensor(values) || !isIndexTensor(counts))
    return ctx.emitError() << "values and lengths/offsets must be 1-D i32/i64 "
                              "tensors, got "
                           << values.getType() << " and " << counts.getType();
  if (weights) {
    auto type = dyn_cast<RankedTensorType>(weights.getType());
    if (!type || type.getRank() != 1 || !type.getElementType().isF32())
      return ctx.emitError()
             << "weights must be a 1-D f32 tensor, got " << weights.getType();
  }
  const ::onnx::AttributeProto *keysAttr = ctx.attr("keys");
  if (!keysAttr || keysAttr->strings_size() == 0)
    return ctx.emitError() << "needs a non-empty 'keys' attribute (strings)";
  SmallVector<std::string> keyStorage(keysAttr->strings().begin(),
                                      keysAttr->strings().end());
  llvm::StringSet<> seen;
  for (const std::string &k : keyStorage)
    if (k.empty() || !seen.insert(k).second)
      return ctx.emitError() << "key '" << k << "' is empty or repeated";
  SmallVector<llvm::StringRef> keys(keyStorage.begin(), keyStorage.end());
  int64_t isOffsets = ctx.intAttr("offsets", 0);
  if (isOffsets != 0 && isOffsets != 1)
    return ctx.emitError() << "'offsets' must be 0 or 1";
  int64_t count = tensorTypeOf(counts).getDimSize(0);
  if (!ShapedType::isDynamic(count) &&
      (count - isOffsets) % static_cast<int64_t>(keys.size()) != 0)
    return ctx.emitError() << (isOffsets ? "offsets" : "lengths") << " has "
                           << count << " entries, which does not fit "
                           << keys.size() << " keys";
  auto type = KeyedJaggedTensorType::get(
      ctx.getContext(), keys, tensorTypeOf(values).getElementType(),
      tensorTypeOf(counts).getElementType(), /*weighted=*/bool(weights));
  OpBuilder &b = ctx.builder;
  Value lengths = isOffsets ? Value() : counts;
  Value offsets = isOffsets ? counts : Value();
  ctx.setOutput(0, KJTCreateOp::create(b, ctx.loc(), type, values, lengths,
                                       offsets, weights, Value()));
  return success();
}

/// Input 0 of a KJT op: a KJT value (made by ember.KJT), or an error.
LogicalResult kjtInput(ImportContext &ctx, Value &value,
                       KeyedJaggedTensorType &type) {
  value = ctx.input(0);
  if (!value)
    return failure();
  type = dyn_cast<KeyedJaggedTensorType>(value.getType());
  if (!type)
    return ctx.emitError() << "input 0 must be a KJT (made by ember.KJT), got "
                           << value.getType();
  return success();
}

/// The table of `weight` in `format` (`dim`: the table_dims entry, or -1):
/// float formats take a static 2-D tensor of the format's element type,
/// row-wise quantized ones a uint8 initializer [rows, row bytes] whose rows
/// are already Ember's layout (dim codes, f32 scale, f32 bias); its bytes
/// become the table's i8 storage constant.
FailureOr<Value> importTable(ImportContext &ctx, int t, Value weight,
                             TableFormat format, int64_t dim) {
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  MLIRContext *context = ctx.getContext();
  StringRef formatName = stringifyTableFormat(format);
  auto weightType = dyn_cast<RankedTensorType>(weight.getType());
  bool quantized = format == TableFormat::int8_rowwise ||
                   format == TableFormat::int4_rowwise;
  if (!quantized) {
    Type elementType = TableType::get(context, 1, 1, format).getElementType();
    if (!weightType || weightType.getRank() != 2 ||
        !weightType.hasStaticShape() ||
        weightType.getElementType() != elementType)
      return ctx.emitError()
             << "table " << t << " must be a static 2-D " << formatName
             << " tensor, got " << weight.getType();
    if (dim >= 0 && dim != weightType.getDimSize(1))
      return ctx.emitError()
             << "table " << t << " has dim " << weightType.getDimSize(1)
             << " but 'table_dims' says " << dim;
    auto tableType = TableType::get(context, weightType.getDimSize(0),
                                    weightType.getDimSize(1), format);
    return Value(TableFromTensorOp::create(b, loc, tableType, weight));
  }
  if (!weightType || weightType.getRank() != 2 ||
      !weightType.hasStaticShape() ||
      !weightType.getElementType().isUnsignedInteger(8))
    return ctx.emitError() << "table " << t << " is " << formatName
                           << ": its weight must be a static 2-D uint8 "
                              "tensor [rows, row bytes], got "
                           << weight.getType();
  int64_t rows = weightType.getDimSize(0), width = weightType.getDimSize(1);
  bool int8 = format == TableFormat::int8_rowwise;
  if (dim < 0) // Not given: the dim the row width implies.
    dim = int8 ? width - 8 : 2 * (width - 8);
  if (dim <= 0 || (!int8 && dim % 2 != 0))
    return ctx.emitError() << "table " << t << " is " << formatName
                           << " with dim " << dim
                           << (int8 ? "" : " (int4_rowwise needs an even dim)")
                           << " (weight " << weight.getType() << ")";
  int64_t rowBytes = int8 ? dim + 8 : dim / 2 + 8;
  if (width != rowBytes)
    return ctx.emitError() << "table " << t << ": an " << formatName
                           << " row of dim " << dim << " has " << rowBytes
                           << " bytes (" << (int8 ? "dim" : "dim / 2")
                           << " codes, f32 scale, f32 bias), but the weight "
                              "is "
                           << weight.getType();
  if (rows <= 0)
    return ctx.emitError() << "table " << t << " has no rows";
  // The table's storage type is i8 (signless): the same bytes (of a mapped
  // initializer: the same mapping).
  Type i8 = IntegerType::get(context, 8);
  TypedAttr storageBytes;
  if (DenseElementsAttr bytes = ctx.getConstant(weight))
    storageBytes = bytes.bitcast(i8);
  else if (auto constant = weight.getDefiningOp<arith::ConstantOp>())
    if (auto mapped = dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
      storageBytes = viewOfMappedWeights(mapped, weightType.clone(i8));
  if (!storageBytes)
    return ctx.emitError() << "table " << t << " is " << formatName
                           << ": its weight must be an initializer";
  auto tableType = TableType::get(context, rows, dim, format);
  Value storage = arith::ConstantOp::create(b, loc, storageBytes);
  return Value(TableFromTensorOp::create(b, loc, tableType, storage));
}

/// ember.EmbeddingBagCollection(kjt, weight_0 [R_0, D_0], ...,
///                              weight_{T-1}) -> [B, sum of the features' D]
/// attributes: feature_tables (ints, one per KJT key: its table),
/// pooling (strings, one per table: sum | mean | max); optional
/// table_formats (strings, one per table: f32 (default), f16, bf16,
/// int8_rowwise, int4_rowwise) and table_dims (ints, one per table).
/// The output is the pooled keyed tensor's dense values, key i's columns
/// after those of keys 0..i-1.
LogicalResult convertEmbeddingBagCollection(ImportContext &ctx) {
  Value features;
  KeyedJaggedTensorType kjtType;
  if (failed(kjtInput(ctx, features, kjtType)))
    return failure();
  int numTables = ctx.node().input_size() - 1;
  if (numTables < 1)
    return ctx.emitError() << "needs at least one table";
  std::optional<SmallVector<int64_t>> featureTables =
      ctx.intsAttr("feature_tables");
  if (!featureTables ||
      featureTables->size() != static_cast<size_t>(kjtType.getNumKeys()))
    return ctx.emitError() << "'feature_tables' must give one table per KJT "
                              "key ("
                           << kjtType.getNumKeys() << ")";
  for (int64_t t : *featureTables)
    if (t < 0 || t >= numTables)
      return ctx.emitError() << "feature table " << t << " is not one of the "
                             << numTables << " tables";
  const ::onnx::AttributeProto *poolingAttr = ctx.attr("pooling");
  if (!poolingAttr || poolingAttr->strings_size() != numTables)
    return ctx.emitError() << "'pooling' must give one mode per table ("
                           << numTables << ")";
  const ::onnx::AttributeProto *formatsAttr = ctx.attr("table_formats");
  if (formatsAttr && formatsAttr->strings_size() != numTables)
    return ctx.emitError() << "'table_formats' must give one format per "
                              "table ("
                           << numTables << ")";
  std::optional<SmallVector<int64_t>> tableDims;
  if (ctx.attr("table_dims")) {
    tableDims = ctx.intsAttr("table_dims");
    if (!tableDims || tableDims->size() != static_cast<size_t>(numTables))
      return ctx.emitError() << "'table_dims' must give one dim per table ("
                             << numTables << ")";
  }
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  SmallVector<Value> tables;
  SmallVector<PoolingMode> pooling;
  for (int t = 0; t < numTables; ++t) {
    Value weight = ctx.input(t + 1);
    if (!weight)
      return failure();
    TableFormat format = TableFormat::f32;
    if (formatsAttr) {
      std::optional<TableFormat> f =
          symbolizeTableFormat(formatsAttr->strings(t));
      if (!f)
        return ctx.emitError()
               << "unknown table format '" << formatsAttr->strings(t)
               << "' of table " << t
               << " (f32, f16, bf16, int8_rowwise or int4_rowwise)";
      format = *f;
    }
    int64_t dim = tableDims ? (*tableDims)[t] : -1;
    if (tableDims && dim <= 0)
      return ctx.emitError() << "table " << t << " has dim " << dim
                             << " in 'table_dims' (positive expected)";
    FailureOr<Value> table = importTable(ctx, t, weight, format, dim);
    if (failed(table))
      return failure();
    std::optional<PoolingMode> mode =
        symbolizePoolingMode(poolingAttr->strings(t));
    if (!mode)
      return ctx.emitError()
             << "unsupported pooling '" << poolingAttr->strings(t)
             << "' of table " << t << " (sum, mean or max)";
    if (kjtType.isWeighted() && *mode != PoolingMode::sum)
      for (int64_t ft : *featureTables)
        if (ft == t)
          return ctx.emitError()
                 << "a weighted KJT needs sum pooling, but table " << t
                 << " pools with " << poolingAttr->strings(t);
    pooling.push_back(*mode);
    tables.push_back(*table);
  }
  auto ebc = EmbeddingBagCollectionOp::create(b, loc, features, tables,
                                              *featureTables, pooling);
  // The frontend's names of the tables and module path of the collection
  // (TorchRec's EmbeddingBagConfig names and ShardingPlan key): the sharding
  // planner names the tables so, and writes plans TorchRec can read.
  if (const ::onnx::AttributeProto *names = ctx.attr("table_names")) {
    if (names->strings_size() != numTables)
      return ctx.emitError() << "'table_names' must give one name per table ("
                             << numTables << ")";
    llvm::StringSet<> seen;
    SmallVector<Attribute> nameAttrs;
    for (const std::string &name : names->strings()) {
      if (name.empty() || !seen.insert(name).second)
        return ctx.emitError()
               << "table name '" << name << "' is empty or repeated";
      nameAttrs.push_back(b.getStringAttr(name));
    }
    ebc->setAttr("ember.table_names", b.getArrayAttr(nameAttrs));
  }
  std::string module = ctx.stringAttr("module", "");
  if (!module.empty())
    ebc->setAttr("ember.module", b.getStringAttr(module));
  auto resultType = cast<KeyedTensorType>(ebc.getResult().getType());
  // A static batch when the KJT's lengths say it (static exports).
  int64_t batch = ShapedType::kDynamic;
  if (auto create = features.getDefiningOp<KJTCreateOp>()) {
    Value counts =
        create.getLengths() ? create.getLengths() : create.getOffsets();
    int64_t n = tensorTypeOf(counts).getDimSize(0);
    if (!ShapedType::isDynamic(n))
      batch = (n - (create.getLengths() ? 0 : 1)) / kjtType.getNumKeys();
  }
  auto valuesType = RankedTensorType::get({batch, resultType.getTotalDim()},
                                          resultType.getElementType());
  ctx.setOutput(
      0, KeyedTensorValuesOp::create(b, loc, valuesType, ebc.getResult()));
  return success();
}

/// ember.KJTPermute(kjt) -> KJT whose key i is input key permutation[i]
/// attributes: permutation (ints, required; keys may be dropped, not
/// repeated).
LogicalResult convertKjtPermute(ImportContext &ctx) {
  Value input;
  KeyedJaggedTensorType type;
  if (failed(kjtInput(ctx, input, type)))
    return failure();
  std::optional<SmallVector<int64_t>> perm = ctx.intsAttr("permutation");
  if (!perm || perm->empty())
    return ctx.emitError() << "needs a non-empty 'permutation' attribute";
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t p : *perm)
    if (p < 0 || p >= type.getNumKeys() || !seen.insert(p).second)
      return ctx.emitError() << "permutation entry " << p
                             << " is out of range or repeated (the KJT has "
                             << type.getNumKeys() << " keys)";
  ctx.setOutput(0, KJTPermuteOp::create(ctx.builder, ctx.loc(), input, *perm));
  return success();
}

/// ember.KJTSplit(kjt) -> one KJT per part: part j holds the next
/// key_counts[j] keys
/// attributes: key_counts (ints >= 0, required, summing to the number of keys).
LogicalResult convertKjtSplit(ImportContext &ctx) {
  Value input;
  KeyedJaggedTensorType type;
  if (failed(kjtInput(ctx, input, type)))
    return failure();
  std::optional<SmallVector<int64_t>> counts = ctx.intsAttr("key_counts");
  if (!counts || counts->empty())
    return ctx.emitError() << "needs a non-empty 'key_counts' attribute";
  int64_t total = 0;
  for (int64_t c : *counts) {
    if (c < 0)
      return ctx.emitError() << "key count " << c << " is negative";
    total += c;
  }
  if (total != type.getNumKeys())
    return ctx.emitError() << "key counts sum to " << total << ", the KJT has "
                           << type.getNumKeys() << " keys";
  if (ctx.node().output_size() != static_cast<int>(counts->size()))
    return ctx.emitError() << "has " << ctx.node().output_size()
                           << " outputs for " << counts->size() << " parts";
  auto split = KJTSplitOp::create(ctx.builder, ctx.loc(), input, *counts);
  for (auto [i, result] : llvm::enumerate(split.getResults()))
    ctx.setOutput(i, result);
  return success();
}

/// ember.KeyedTensorGet(values [B, sum D]) -> [B, D] (the columns of `key`)
/// attributes: key (string), start (int), dim (int). `values` must be the
/// output of an ember.EmbeddingBagCollection node whose keyed tensor has `key`
/// at columns [start, start + dim).
LogicalResult convertKeyedTensorGet(ImportContext &ctx) {
  Value values = ctx.input(0);
  if (!values)
    return failure();
  auto producer = values.getDefiningOp<KeyedTensorValuesOp>();
  if (!producer)
    return ctx.emitError() << "input 0 must be the output of an "
                              "ember.EmbeddingBagCollection node";
  auto type = cast<KeyedTensorType>(producer.getInput().getType());
  std::string key = ctx.stringAttr("key", "");
  std::optional<unsigned> index = type.getKeyIndex(key);
  if (!index)
    return ctx.emitError() << "the keyed tensor has no key '" << key << "'";
  int64_t start = ctx.intAttr("start", -1), dim = ctx.intAttr("dim", -1);
  if (start != type.getColumnOffset(*index) || dim != type.getDims()[*index])
    return ctx.emitError() << "key '" << key << "' has columns ["
                           << type.getColumnOffset(*index) << ", "
                           << type.getColumnOffset(*index) +
                                  type.getDims()[*index]
                           << "), not [" << start << ", " << start + dim << ")";
  auto get = KeyedTensorGetOp::create(ctx.builder, ctx.loc(),
                                      producer.getInput(), key);
  Value result = get.getResult();
  // Keep the batch dim of the values (static in static exports).
  auto valuesType = cast<RankedTensorType>(values.getType());
  auto resultType = RankedTensorType::get({valuesType.getDimSize(0), dim},
                                          valuesType.getElementType());
  if (result.getType() != resultType)
    result = tensor::CastOp::create(ctx.builder, ctx.loc(), resultType, result);
  ctx.setOutput(0, result);
  return success();
}

} // namespace

void registerEmberKjtConverters(OpConverterRegistry &r) {
  r.add(kEmberDomain, "KJT", convertKjt, {"keys", "offsets"});
  r.add(kEmberDomain, "KJTPermute", convertKjtPermute, {"permutation"});
  r.add(kEmberDomain, "KJTSplit", convertKjtSplit, {"key_counts"});
  r.add(kEmberDomain, "KeyedTensorGet", convertKeyedTensorGet,
        {"key", "start", "dim"});
  r.add(kEmberDomain, "EmbeddingBagCollection", convertEmbeddingBagCollection,
        {"feature_tables", "pooling", "table_names", "module", "table_formats",
         "table_dims"});
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
