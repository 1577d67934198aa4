//===- EmberSequenceOps.cpp - Sequence embeddings of the 'ember' domain ---===//
//
// ember.EmbeddingCollection (TorchRec's EmbeddingCollection: unpooled lookups,
// one jagged tensor per KJT key) and the nodes that read those jagged tensors:
// JaggedValues, JaggedOffsets, JaggedLengths and JaggedToPadded. Documented (inputs,
// attributes) in docs/frontend-onnx.md. A jagged tensor is an MLIR value of
// type !ember.jagged that only these nodes make and read.
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberTypes.h"
#include "frontends/onnx/IRBuilders.h"
#include "frontends/onnx/OpConverterRegistry.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

/// Errors unless attribute `name`, when present, has ONNX type `type`.
LogicalResult checkAttrType(ImportContext &ctx, llvm::StringRef name,
                            ::onnx::AttributeProto::AttributeType type,
                            llvm::StringRef what) {
  const ::onnx::AttributeProto *a = ctx.attr(name);
  if (a && a->type() != type)
    return ctx.emitError() << "attribute '" << name << "' must be " << what;
  return success();
}

/// The batch of a KJT when its lengths (or offsets) have a static size (static
/// exports), else dynamic. Permuted and split KJTs keep their input's batch.
int64_t staticBatchOfKjt(Value kjt) {
  while (true) {
    if (auto permute = kjt.getDefiningOp<KJTPermuteOp>())
      kjt = permute.getInput();
    else if (auto split = kjt.getDefiningOp<KJTSplitOp>())
      kjt = split.getInput();
    else
      break;
  }
  auto create = kjt.getDefiningOp<KJTCreateOp>();
  if (!create)
    return ShapedType::kDynamic;
  auto type = cast<KeyedJaggedTensorType>(create.getType());
  Value counts = create.getLengths() ? create.getLengths() : create.getOffsets();
  int64_t n = tensorTypeOf(counts).getDimSize(0);
  if (ShapedType::isDynamic(n) || type.getNumKeys() == 0)
    return ShapedType::kDynamic;
  return (n - (create.getLengths() ? 0 : 1)) / type.getNumKeys();
}

/// The batch of a jagged result of an ember.embedding_collection, when static.
int64_t staticBatchOfJagged(Value jagged) {
  if (auto ec = jagged.getDefiningOp<EmbeddingCollectionOp>())
    return staticBatchOfKjt(ec.getFeatures());
  return ShapedType::kDynamic;
}

/// Input 0 of a Jagged* node: a jagged tensor (made by ember.EmbeddingCollection).
LogicalResult jaggedInput(ImportContext &ctx, Value &value,
                          JaggedTensorType &type) {
  value = ctx.input(0);
  if (!value)
    return failure();
  if (ctx.node().input_size() != 1)
    return ctx.emitError() << "takes one input (a jagged tensor), got "
                           << ctx.node().input_size();
  type = dyn_cast<JaggedTensorType>(value.getType());
  if (!type)
    return ctx.emitError() << "input 0 must be a jagged tensor (an output of "
                              "ember.EmbeddingCollection), got "
                           << value.getType();
  if (ctx.node().output_size() != 1)
    return ctx.emitError() << "has " << ctx.node().output_size()
                           << " outputs; it makes one";
  return success();
}

/// ember.EmbeddingCollection(kjt, weight_0 [R_0, D_0], ..., weight_{T-1})
///   -> one jagged tensor per KJT key: key i's ids replaced by their rows of
///      table feature_tables[i] (!ember.jagged<f32, [D]>, key i's offsets)
/// attributes: feature_tables (ints, one per KJT key: its table; every table
/// read by a key), optional table_names (strings, one per table, unique) and
/// module (string): TorchRec's table names and the module path, kept as
/// ember.table_names / ember.module as on ember.embedding_bag_collection.
LogicalResult convertEmbeddingCollection(ImportContext &ctx) {
  Value features = ctx.input(0);
  if (!features)
    return failure();
  auto kjtType = dyn_cast<KeyedJaggedTensorType>(features.getType());
  if (!kjtType)
    return ctx.emitError() << "input 0 must be a KJT (made by ember.KJT), got "
                           << features.getType();
  if (kjtType.isWeighted())
    return ctx.emitError()
           << "the KJT is weighted, but an embedding collection does not "
              "pool and has no use for per-value weights (pass the KJT "
              "without weights)";
  if (kjtType.isVariableBatch())
    return ctx.emitError() << "a variable-batch KJT is not supported";
  int numTables = ctx.node().input_size() - 1;
  if (numTables < 1)
    return ctx.emitError() << "needs at least one table";
  int64_t numKeys = kjtType.getNumKeys();
  if (failed(checkAttrType(ctx, "feature_tables",
                           ::onnx::AttributeProto::INTS, "ints")) ||
      failed(checkAttrType(ctx, "table_names", ::onnx::AttributeProto::STRINGS,
                           "strings")) ||
      failed(checkAttrType(ctx, "module", ::onnx::AttributeProto::STRING,
                           "a string")))
    return failure();
  std::optional<SmallVector<int64_t>> featureTables =
      ctx.intsAttr("feature_tables");
  if (!featureTables || featureTables->size() != static_cast<size_t>(numKeys))
    return ctx.emitError() << "'feature_tables' must give one table per KJT "
                              "key ("
                           << numKeys << ")";
  SmallVector<bool> used(numTables, false);
  for (int64_t t : *featureTables) {
    if (t < 0 || t >= numTables)
      return ctx.emitError() << "feature table " << t << " is not one of the "
                             << numTables << " tables";
    used[t] = true;
  }
  for (int t = 0; t < numTables; ++t)
    if (!used[t])
      return ctx.emitError() << "table " << t << " is read by no KJT key";
  if (ctx.node().output_size() != numKeys)
    return ctx.emitError() << "has " << ctx.node().output_size()
                           << " outputs for " << numKeys
                           << " KJT keys (one jagged tensor per key)";

  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  SmallVector<Value> tables;
  SmallVector<int64_t> dims;
  for (int t = 0; t < numTables; ++t) {
    Value weight = ctx.input(t + 1);
    if (!weight)
      return failure();
    auto weightType = dyn_cast<RankedTensorType>(weight.getType());
    if (!weightType || weightType.getRank() != 2 ||
        !weightType.hasStaticShape() || !weightType.getElementType().isF32())
      return ctx.emitError()
             << "table " << t << " must be a static 2-D f32 tensor, got "
             << weight.getType();
    auto tableType = TableType::get(ctx.getContext(), weightType.getDimSize(0),
                                    weightType.getDimSize(1), TableFormat::f32);
    tables.push_back(TableFromTensorOp::create(b, loc, tableType, weight));
    dims.push_back(weightType.getDimSize(1));
  }
  SmallVector<Type> resultTypes;
  for (int64_t t : *featureTables)
    resultTypes.push_back(
        JaggedTensorType::get(ctx.getContext(), b.getF32Type(), {dims[t]}));

  SmallVector<Attribute> nameAttrs;
  if (const ::onnx::AttributeProto *names = ctx.attr("table_names")) {
    if (names->strings_size() != numTables)
      return ctx.emitError() << "'table_names' must give one name per table ("
                             << numTables << ")";
    llvm::StringSet<> seen;
    for (const std::string &name : names->strings()) {
      if (name.empty() || !seen.insert(name).second)
        return ctx.emitError()
               << "table name '" << name << "' is empty or repeated";
      nameAttrs.push_back(b.getStringAttr(name));
    }
  }
  auto ec = EmbeddingCollectionOp::create(b, loc, resultTypes, features, tables,
                                          *featureTables);
  // As on ember.embedding_bag_collection (EmberKjtOps.cpp): the sharding
  // planner names the tables so and writes plans TorchRec can read.
  if (!nameAttrs.empty())
    ec->setAttr("ember.table_names", b.getArrayAttr(nameAttrs));
  std::string module = ctx.stringAttr("module", "");
  if (!module.empty())
    ec->setAttr("ember.module", b.getStringAttr(module));
  for (auto [i, result] : llvm::enumerate(ec.getResults()))
    ctx.setOutput(i, result);
  return success();
}

/// ember.JaggedValues(jagged) -> [N, D...] (the rows of every id, in order).
LogicalResult convertJaggedValues(ImportContext &ctx) {
  Value input;
  JaggedTensorType type;
  if (failed(jaggedInput(ctx, input, type)))
    return failure();
  ctx.setOutput(0, JaggedValuesOp::create(ctx.builder, ctx.loc(), input));
  return success();
}

/// ember.JaggedOffsets(jagged) -> [B + 1] i64.
LogicalResult convertJaggedOffsets(ImportContext &ctx) {
  Value input;
  JaggedTensorType type;
  if (failed(jaggedInput(ctx, input, type)))
    return failure();
  int64_t batch = staticBatchOfJagged(input);
  auto resultType = RankedTensorType::get(
      {ShapedType::isDynamic(batch) ? ShapedType::kDynamic : batch + 1},
      ctx.builder.getI64Type());
  ctx.setOutput(
      0, JaggedOffsetsOp::create(ctx.builder, ctx.loc(), resultType, input));
  return success();
}

/// ember.JaggedLengths(jagged) -> [B] i64: the rows' lengths. A jagged tensor
/// of ember.EmbeddingCollection has the lengths of its KJT key: they are read
/// there (ember.kjt.permute to that key, ember.kjt.lengths, widened to i64).
LogicalResult convertJaggedLengths(ImportContext &ctx) {
  Value input;
  JaggedTensorType type;
  if (failed(jaggedInput(ctx, input, type)))
    return failure();
  auto ec = input.getDefiningOp<EmbeddingCollectionOp>();
  if (!ec)
    return ctx.emitError() << "input 0 must be an output of "
                              "ember.EmbeddingCollection";
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc();
  int64_t key = cast<OpResult>(input).getResultNumber();
  Value single = KJTPermuteOp::create(b, loc, ec.getFeatures(),
                                      ArrayRef<int64_t>{key});
  Value lengths = KJTLengthsOp::create(b, loc, single);
  int64_t batch = staticBatchOfJagged(input);
  auto resultType = RankedTensorType::get({batch}, b.getI64Type());
  auto lengthsType = cast<RankedTensorType>(lengths.getType());
  if (!lengthsType.getElementType().isInteger(64))
    lengths = arith::ExtSIOp::create(
        b, loc, lengthsType.clone(b.getI64Type()), lengths);
  if (lengths.getType() != resultType)
    lengths = tensor::CastOp::create(b, loc, resultType, lengths);
  ctx.setOutput(0, lengths);
  return success();
}

/// ember.JaggedToPadded(jagged) -> [B, max_length, D...]: row b's first
/// min(len_b, max_length) values, then `padding`.
/// attributes: max_length (int > 0, required), padding (float, default 0).
LogicalResult convertJaggedToPadded(ImportContext &ctx) {
  Value input;
  JaggedTensorType type;
  if (failed(jaggedInput(ctx, input, type)))
    return failure();
  if (failed(checkAttrType(ctx, "max_length", ::onnx::AttributeProto::INT,
                           "an int")) ||
      failed(checkAttrType(ctx, "padding", ::onnx::AttributeProto::FLOAT,
                           "a float")))
    return failure();
  if (!ctx.attr("max_length"))
    return ctx.emitError() << "needs a 'max_length' attribute (int > 0)";
  int64_t maxLength = ctx.intAttr("max_length", 0);
  if (maxLength <= 0)
    return ctx.emitError() << "'max_length' must be positive, got "
                           << maxLength;
  auto elementType = dyn_cast<FloatType>(type.getElementType());
  if (!elementType)
    return ctx.emitError() << "pads float jagged tensors only, got " << type;
  OpBuilder &b = ctx.builder;
  SmallVector<int64_t> shape{staticBatchOfJagged(input), maxLength};
  llvm::append_range(shape, type.getDenseShape());
  auto resultType = RankedTensorType::get(shape, elementType);
  auto padding = b.getFloatAttr(elementType, ctx.floatAttr("padding", 0.0f));
  ctx.setOutput(0, JaggedToPaddedOp::create(b, ctx.loc(), resultType, input,
                                            b.getI64IntegerAttr(maxLength),
                                            padding));
  return success();
}

} // namespace

void registerEmberSequenceConverters(OpConverterRegistry &r) {
  r.add(kEmberDomain, "EmbeddingCollection", convertEmbeddingCollection,
        {"feature_tables", "table_names", "module"});
  r.add(kEmberDomain, "JaggedValues", convertJaggedValues);
  r.add(kEmberDomain, "JaggedOffsets", convertJaggedOffsets);
  r.add(kEmberDomain, "JaggedLengths", convertJaggedLengths);
  r.add(kEmberDomain, "JaggedToPadded", convertJaggedToPadded,
        {"max_length", "padding"});
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
