//===- EmberJaggedOps.cpp - jagged, KJT and keyed tensor ops -------------===//
#include "EmberOpsUtils.h"
#include "dialects/ember/EmberOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::ember;

/// Checks that `actual` can hold `expected` (a type with dynamic sizes
/// where the IR does not know them): same rank and element type, static
/// sizes equal where both are static.
static LogicalResult verifyTensorCompatible(Operation *op, StringRef what,
                                            RankedTensorType actual,
                                            ArrayRef<int64_t> expectedShape,
                                            Type expectedElementType) {
  auto describe = [&]() {
    return RankedTensorType::get(expectedShape, expectedElementType);
  };
  if (actual.getElementType() != expectedElementType ||
      actual.getRank() != static_cast<int64_t>(expectedShape.size()))
    return op->emitOpError()
           << what << " must be " << describe() << ", got " << actual;
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(actual.getShape(), expectedShape)))
    if (!sizesCompatible(std::get<0>(pair), std::get<1>(pair)))
      return op->emitOpError()
             << what << " dim " << i << " must be "
             << sizeToString(std::get<1>(pair)) << ", got "
             << sizeToString(std::get<0>(pair)) << " (in " << actual << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Jagged tensors
//===----------------------------------------------------------------------===//

LogicalResult JaggedCreateOp::verify() {
  JaggedTensorType type = getType();
  return verifyTensorCompatible(
      *this, "values", cast<RankedTensorType>(getValues().getType()),
      type.getValuesType().getShape(), type.getElementType());
}

LogicalResult JaggedValuesOp::verify() {
  JaggedTensorType type = getInput().getType();
  return verifyTensorCompatible(
      *this, "result", cast<RankedTensorType>(getValues().getType()),
      type.getValuesType().getShape(), type.getElementType());
}

OpFoldResult JaggedValuesOp::fold(FoldAdaptor) {
  if (auto create = getInput().getDefiningOp<JaggedCreateOp>())
    if (create.getValues().getType() == getType())
      return create.getValues();
  return {};
}

OpFoldResult JaggedOffsetsOp::fold(FoldAdaptor) {
  if (auto create = getInput().getDefiningOp<JaggedCreateOp>())
    if (create.getOffsets().getType() == getType())
      return create.getOffsets();
  if (auto fromPadded = getInput().getDefiningOp<JaggedFromPaddedOp>())
    if (fromPadded.getOffsets().getType() == getType())
      return fromPadded.getOffsets();
  return {};
}

LogicalResult JaggedToPaddedOp::verify() {
  JaggedTensorType type = getInput().getType();
  SmallVector<int64_t> shape{ShapedType::kDynamic,
                             static_cast<int64_t>(getMaxLength())};
  llvm::append_range(shape, type.getDenseShape());
  if (failed(verifyTensorCompatible(*this, "result",
                                    cast<RankedTensorType>(getType()), shape,
                                    type.getElementType())))
    return failure();
  if (getPadding().getType() != type.getElementType())
    return emitOpError("padding value must have the element type ")
           << type.getElementType() << ", got " << getPadding().getType();
  return success();
}

LogicalResult JaggedSumOp::verify() {
  JaggedTensorType type = getInput().getType();
  if (!type.getElementType().isF32())
    return emitOpError("takes f32 values, got ") << type.getElementType();
  SmallVector<int64_t> shape{ShapedType::kDynamic};
  llvm::append_range(shape, type.getDenseShape());
  return verifyTensorCompatible(*this, "result",
                                cast<RankedTensorType>(getType()), shape,
                                type.getElementType());
}

LogicalResult JaggedFromPaddedOp::verify() {
  JaggedTensorType type = getType();
  auto padded = cast<RankedTensorType>(getPadded().getType());
  SmallVector<int64_t> shape{ShapedType::kDynamic, ShapedType::kDynamic};
  llvm::append_range(shape, type.getDenseShape());
  return verifyTensorCompatible(*this, "padded", padded, shape,
                                type.getElementType());
}

//===----------------------------------------------------------------------===//
// KJTCreateOp
//===----------------------------------------------------------------------===//

LogicalResult KJTFromBagsOp::verify() {
  KeyedJaggedTensorType type = getType();
  size_t numFeatures = getValues().size();
  if (numFeatures != type.getNumKeys())
    return emitOpError("needs one values tensor per key (")
           << type.getNumKeys() << "), got " << numFeatures;
  if (getOffsets().size() != numFeatures)
    return emitOpError("needs one offsets tensor per key (")
           << numFeatures << "), got " << getOffsets().size();
  if (getIncludeLastOffset().size() != numFeatures)
    return emitOpError("include_last_offset needs one entry per key (")
           << numFeatures << "), got " << getIncludeLastOffset().size();
  if (std::optional<ArrayRef<int64_t>> rows = getNumRows()) {
    if (rows->size() != numFeatures)
      return emitOpError("num_rows needs one entry per key (")
             << numFeatures << "), got " << rows->size();
    for (int64_t r : *rows)
      if (r < 0)
        return emitOpError("num_rows must be non-negative, got ") << r;
  }
  if (type.isVariableBatch())
    return emitOpError("cannot make a variable_batch KJT (every feature has "
                       "the same batch size)");
  if (type.isWeighted() ? getWeights().size() != numFeatures
                        : !getWeights().empty())
    return emitOpError(type.isWeighted()
                           ? "a weighted KJT needs one weights tensor per key"
                           : "weights given but the KJT type is not weighted");
  for (size_t i = 0; i < numFeatures; ++i) {
    auto values = cast<RankedTensorType>(getValues()[i].getType());
    if (values.getElementType() != type.getValueType())
      return emitOpError("values of key '")
             << type.getKey(i) << "' must have the KJT value type "
             << type.getValueType() << ", got " << values.getElementType();
    auto offsets = cast<RankedTensorType>(getOffsets()[i].getType());
    int64_t size = offsets.getDimSize(0);
    if (getIncludeLastOffset()[i] && !ShapedType::isDynamic(size) && size < 1)
      return emitOpError("offsets of key '")
             << type.getKey(i)
             << "' need at least one entry with include_last_offset";
    if (type.isWeighted()) {
      int64_t n =
          cast<RankedTensorType>(getWeights()[i].getType()).getDimSize(0);
      if (!sizesCompatible(n, values.getDimSize(0)))
        return emitOpError("weights of key '")
               << type.getKey(i) << "' must have one entry per value ("
               << sizeToString(values.getDimSize(0)) << "), got "
               << sizeToString(n);
    }
  }
  return success();
}

LogicalResult KJTCreateOp::verify() {
  KeyedJaggedTensorType type = getType();
  auto values = cast<RankedTensorType>(getValues().getType());
  if (values.getElementType() != type.getValueType())
    return emitOpError("values must have the KJT value type ")
           << type.getValueType() << ", got " << values.getElementType();
  if (!getLengths() && !getOffsets())
    return emitOpError("needs lengths or offsets (or both)");
  int64_t numKeys = type.getNumKeys();
  if (Value lengths = getLengths()) {
    auto lengthsType = cast<RankedTensorType>(lengths.getType());
    if (lengthsType.getElementType() != type.getLengthType())
      return emitOpError("lengths must have the KJT length type ")
             << type.getLengthType() << ", got "
             << lengthsType.getElementType();
    int64_t size = lengthsType.getDimSize(0);
    if (!type.isVariableBatch() && !ShapedType::isDynamic(size) &&
        (numKeys == 0 ? size != 0 : size % numKeys != 0))
      return emitOpError("lengths size ")
             << size << " is not a multiple of the number of keys (" << numKeys
             << ")";
  }
  if (Value offsets = getOffsets()) {
    auto offsetsType = cast<RankedTensorType>(offsets.getType());
    if (offsetsType.getElementType() != type.getLengthType())
      return emitOpError("offsets must have the KJT length type ")
             << type.getLengthType() << ", got "
             << offsetsType.getElementType();
    int64_t size = offsetsType.getDimSize(0);
    if (!ShapedType::isDynamic(size) && size < 1)
      return emitOpError("offsets needs at least one entry");
    if (Value lengths = getLengths()) {
      int64_t numLengths =
          cast<RankedTensorType>(lengths.getType()).getDimSize(0);
      if (!ShapedType::isDynamic(size) && !ShapedType::isDynamic(numLengths) &&
          size != numLengths + 1)
        return emitOpError("offsets must have one more entry than lengths (")
               << numLengths + 1 << "), got " << size;
    }
  }
  if (type.isWeighted() != static_cast<bool>(getWeights()))
    return emitOpError(type.isWeighted()
                           ? "a weighted KJT needs weights"
                           : "weights given but the KJT type is not weighted");
  if (Value weights = getWeights()) {
    int64_t size = cast<RankedTensorType>(weights.getType()).getDimSize(0);
    if (!sizesCompatible(size, values.getDimSize(0)))
      return emitOpError("weights must have one entry per value (")
             << sizeToString(values.getDimSize(0)) << "), got "
             << sizeToString(size);
  }
  if (type.isVariableBatch() != static_cast<bool>(getBatchSizes()))
    return emitOpError(type.isVariableBatch()
                           ? "a variable_batch KJT needs batch_sizes"
                           : "batch_sizes given but the KJT type is not "
                             "variable_batch");
  if (Value batchSizes = getBatchSizes()) {
    int64_t size = cast<RankedTensorType>(batchSizes.getType()).getDimSize(0);
    if (!sizesCompatible(size, numKeys))
      return emitOpError("batch_sizes must have one entry per key (")
             << numKeys << "), got " << size;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// KJT accessors
//===----------------------------------------------------------------------===//

static LogicalResult verifyAccessor(Operation *op, Type resultType,
                                    Type expectedElementType) {
  auto tensor = cast<RankedTensorType>(resultType);
  if (tensor.getElementType() != expectedElementType)
    return op->emitOpError("result element type must be ")
           << expectedElementType << ", got " << tensor.getElementType();
  return success();
}

/// The operand of a `kjt.create` feeding `input` if it has `resultType`.
static OpFoldResult foldAccessor(Value input, Type resultType,
                                 function_ref<Value(KJTCreateOp)> operand) {
  auto create = input.getDefiningOp<KJTCreateOp>();
  if (!create)
    return {};
  Value value = operand(create);
  if (!value || value.getType() != resultType)
    return {};
  return value;
}

LogicalResult KJTValuesOp::verify() {
  return verifyAccessor(*this, getType(), getInput().getType().getValueType());
}
OpFoldResult KJTValuesOp::fold(FoldAdaptor) {
  return foldAccessor(getInput(), getType(),
                      [](KJTCreateOp c) { return c.getValues(); });
}

LogicalResult KJTLengthsOp::verify() {
  return verifyAccessor(*this, getType(), getInput().getType().getLengthType());
}
OpFoldResult KJTLengthsOp::fold(FoldAdaptor) {
  return foldAccessor(getInput(), getType(),
                      [](KJTCreateOp c) { return c.getLengths(); });
}

LogicalResult KJTOffsetsOp::verify() {
  // i64 offsets of i32 lengths are allowed (what jagged tensors take).
  if (getType().getElementType().isInteger(64))
    return success();
  return verifyAccessor(*this, getType(), getInput().getType().getLengthType());
}
OpFoldResult KJTOffsetsOp::fold(FoldAdaptor) {
  return foldAccessor(getInput(), getType(),
                      [](KJTCreateOp c) { return c.getOffsets(); });
}

LogicalResult KJTWeightsOp::verify() {
  if (!getInput().getType().isWeighted())
    return emitOpError("input KJT is not weighted");
  return verifyAccessor(*this, getType(), Float32Type::get(getContext()));
}
OpFoldResult KJTWeightsOp::fold(FoldAdaptor) {
  return foldAccessor(getInput(), getType(),
                      [](KJTCreateOp c) { return c.getWeights(); });
}

//===----------------------------------------------------------------------===//
// KJT restructuring
//===----------------------------------------------------------------------===//

/// Checks that two KJT types agree on everything but their keys.
static LogicalResult verifySameKJTLayout(Operation *op, StringRef what,
                                         KeyedJaggedTensorType expected,
                                         KeyedJaggedTensorType actual) {
  if (expected.getValueType() != actual.getValueType() ||
      expected.getLengthType() != actual.getLengthType() ||
      expected.isWeighted() != actual.isWeighted() ||
      expected.isVariableBatch() != actual.isVariableBatch())
    return op->emitOpError()
           << what << " must have the value/length types and flags of "
           << expected << ", got " << actual;
  return success();
}

static LogicalResult verifyKeysEqual(Operation *op, StringRef what,
                                     ArrayRef<StringRef> expected,
                                     KeyedJaggedTensorType actual) {
  if (actual.getKeyNames() != expected) {
    InFlightDiagnostic diag = op->emitOpError() << what << " keys must be [";
    llvm::interleaveComma(expected, diag,
                          [&](StringRef k) { diag << '"' << k << '"'; });
    diag << "], got " << actual;
    return diag;
  }
  return success();
}

LogicalResult KJTPermuteOp::verify() {
  KeyedJaggedTensorType input = getInput().getType();
  KeyedJaggedTensorType result = getType();
  if (failed(verifySameKJTLayout(*this, "result", input, result)))
    return failure();
  SmallVector<StringRef> keys;
  llvm::DenseSet<int64_t> seen;
  for (auto [i, index] : llvm::enumerate(getPermutation())) {
    if (index < 0 || index >= static_cast<int64_t>(input.getNumKeys()))
      return emitOpError("permutation[")
             << i << "] = " << index << " is out of range for "
             << input.getNumKeys() << " keys";
    if (!seen.insert(index).second)
      return emitOpError("permutation repeats key #")
             << index << " (\"" << input.getKey(index)
             << "\"); KJT keys must be unique";
    keys.push_back(input.getKey(index));
  }
  return verifyKeysEqual(*this, "result", keys, result);
}

OpFoldResult KJTPermuteOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> permutation = getPermutation();
  KeyedJaggedTensorType input = getInput().getType();
  if (getType() == input &&
      llvm::equal(permutation, llvm::seq<int64_t>(0, input.getNumKeys())))
    return getInput();
  // permute(permute(x, p), q) = permute(x, p[q]).
  if (auto inner = getInput().getDefiningOp<KJTPermuteOp>()) {
    ArrayRef<int64_t> innerPermutation = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t index : permutation)
      composed.push_back(innerPermutation[index]);
    getInputMutable().assign(inner.getInput());
    setPermutation(composed);
    return getResult();
  }
  return {};
}

LogicalResult KJTSplitOp::verify() {
  KeyedJaggedTensorType input = getInput().getType();
  ArrayRef<int64_t> counts = getKeyCounts();
  if (counts.size() != getResults().size())
    return emitOpError("must have one result per key count (")
           << counts.size() << "), got " << getResults().size();
  int64_t total = 0;
  for (auto [i, count] : llvm::enumerate(counts)) {
    if (count < 0)
      return emitOpError("key_counts[") << i << "] is negative: " << count;
    total += count;
  }
  if (total != static_cast<int64_t>(input.getNumKeys()))
    return emitOpError("key_counts sum to ")
           << total << " but the input has " << input.getNumKeys() << " keys";
  SmallVector<StringRef> keys = input.getKeyNames();
  int64_t start = 0;
  for (auto [i, result] : llvm::enumerate(getResults())) {
    auto type = cast<KeyedJaggedTensorType>(result.getType());
    std::string what = "result #" + std::to_string(i);
    if (failed(verifySameKJTLayout(*this, what, input, type)) ||
        failed(verifyKeysEqual(*this, what,
                               ArrayRef(keys).slice(start, counts[i]), type)))
      return failure();
    start += counts[i];
  }
  return success();
}

LogicalResult KJTSplitOp::fold(FoldAdaptor,
                               SmallVectorImpl<OpFoldResult> &results) {
  if (getNumResults() == 1 && getResult(0).getType() == getInput().getType()) {
    results.push_back(getInput());
    return success();
  }
  // split(concat(a, b, ...)) with the concat's part sizes = a, b, ...
  auto concat = getInput().getDefiningOp<KJTConcatOp>();
  if (!concat || concat.getInputs().size() != getNumResults())
    return failure();
  for (auto [part, result] : llvm::zip(concat.getInputs(), getResults()))
    if (part.getType() != result.getType())
      return failure();
  llvm::append_range(results, concat.getInputs());
  return success();
}

LogicalResult KJTConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  KeyedJaggedTensorType result = getType();
  SmallVector<StringRef> keys;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<KeyedJaggedTensorType>(input.getType());
    if (failed(verifySameKJTLayout(*this, "input #" + std::to_string(i), result,
                                   type)))
      return failure();
    llvm::append_range(keys, type.getKeyNames());
  }
  return verifyKeysEqual(*this, "result", keys, result);
}

OpFoldResult KJTConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  // concat of every result of one split, in order.
  auto split = getInputs()[0].getDefiningOp<KJTSplitOp>();
  if (!split || split.getNumResults() != getInputs().size() ||
      split.getInput().getType() != getType())
    return {};
  for (auto [input, result] : llvm::zip(getInputs(), split.getResults()))
    if (input != result)
      return {};
  return split.getInput();
}

LogicalResult KJTBucketizeOp::verify() {
  KeyedJaggedTensorType input = getInput().getType();
  KeyedJaggedTensorType result = getResult().getType();
  ArrayRef<int64_t> blockSizes = getBlockSizes();
  if (blockSizes.size() != input.getNumKeys())
    return emitOpError("block_sizes must have one entry per key (")
           << input.getNumKeys() << "), got " << blockSizes.size();
  for (auto [i, size] : llvm::enumerate(blockSizes))
    if (size <= 0)
      return emitOpError("block_sizes[")
             << i << "] (key \"" << input.getKey(i)
             << "\") must be positive, got " << size;
  if (input.isVariableBatch())
    return emitOpError("does not accept a variable_batch KJT");
  if (failed(verifySameKJTLayout(*this, "result", input, result)))
    return failure();
  std::vector<std::string> storage;
  for (int64_t bucket = 0; bucket < getNumBuckets(); ++bucket)
    for (StringRef key : input.getKeyNames())
      storage.push_back(KeyedJaggedTensorType::getBucketKey(key, bucket));
  SmallVector<StringRef> keys(storage.begin(), storage.end());
  return verifyKeysEqual(*this, "result", keys, result);
}

//===----------------------------------------------------------------------===//
// Keyed tensors
//===----------------------------------------------------------------------===//

LogicalResult KeyedTensorCreateOp::verify() {
  KeyedTensorType type = getType();
  return verifyTensorCompatible(
      *this, "values", cast<RankedTensorType>(getValues().getType()),
      type.getValuesType().getShape(), type.getElementType());
}

LogicalResult KeyedTensorValuesOp::verify() {
  KeyedTensorType type = getInput().getType();
  return verifyTensorCompatible(
      *this, "result", cast<RankedTensorType>(getValues().getType()),
      type.getValuesType().getShape(), type.getElementType());
}

OpFoldResult KeyedTensorValuesOp::fold(FoldAdaptor) {
  if (auto create = getInput().getDefiningOp<KeyedTensorCreateOp>())
    if (create.getValues().getType() == getType())
      return create.getValues();
  return {};
}

LogicalResult KeyedTensorGetOp::verify() {
  KeyedTensorType type = getInput().getType();
  std::optional<unsigned> index = type.getKeyIndex(getKey());
  if (!index)
    return emitOpError("key \"") << getKey() << "\" is not in " << type;
  return verifyTensorCompatible(
      *this, "result", cast<RankedTensorType>(getType()),
      {ShapedType::kDynamic, type.getDims()[*index]}, type.getElementType());
}

OpFoldResult KeyedTensorGetOp::fold(FoldAdaptor) {
  auto regroup = getInput().getDefiningOp<KeyedTensorRegroupOp>();
  if (!regroup)
    return {};
  for (Value input : regroup.getInputs()) {
    if (cast<KeyedTensorType>(input.getType()).getKeyIndex(getKey())) {
      getInputMutable().assign(input);
      return getResult();
    }
  }
  return {};
}

LogicalResult KeyedTensorRegroupOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  KeyedTensorType result = getType();
  for (auto [k, key] : llvm::enumerate(result.getKeyNames())) {
    std::optional<unsigned> found;
    for (auto [i, input] : llvm::enumerate(getInputs())) {
      auto type = cast<KeyedTensorType>(input.getType());
      if (k == 0 && type.getElementType() != result.getElementType())
        return emitOpError("input #")
               << i << " has element type " << type.getElementType()
               << ", expected " << result.getElementType();
      std::optional<unsigned> index = type.getKeyIndex(key);
      if (!index)
        continue;
      if (found)
        return emitOpError("result key \"") << key << "\" is in both input #"
                                            << *found << " and input #" << i;
      found = i;
      if (type.getDims()[*index] != result.getDims()[k])
        return emitOpError("result dim of key \"")
               << key << "\" is " << result.getDims()[k] << " but input #" << i
               << " has " << type.getDims()[*index];
    }
    if (!found)
      return emitOpError("result key \"") << key << "\" is in no input";
  }
  return success();
}

OpFoldResult KeyedTensorRegroupOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  return {};
}

//===----------------------------------------------------------------------===//
// Builders that infer their result types
//===----------------------------------------------------------------------===//

void JaggedValuesOp::build(OpBuilder &builder, OperationState &state,
                           Value input) {
  auto type = cast<JaggedTensorType>(input.getType());
  build(builder, state, type.getValuesType(), input);
}

/// A dynamic-size 1-D tensor of `elementType`.
static RankedTensorType dynamic1D(Type elementType) {
  return RankedTensorType::get({ShapedType::kDynamic}, elementType);
}

void KJTValuesOp::build(OpBuilder &builder, OperationState &state,
                        Value input) {
  auto type = cast<KeyedJaggedTensorType>(input.getType());
  build(builder, state, dynamic1D(type.getValueType()), input);
}
void KJTLengthsOp::build(OpBuilder &builder, OperationState &state,
                         Value input) {
  auto type = cast<KeyedJaggedTensorType>(input.getType());
  build(builder, state, dynamic1D(type.getLengthType()), input);
}
void KJTOffsetsOp::build(OpBuilder &builder, OperationState &state,
                         Value input) {
  auto type = cast<KeyedJaggedTensorType>(input.getType());
  build(builder, state, dynamic1D(type.getLengthType()), input);
}
void KJTWeightsOp::build(OpBuilder &builder, OperationState &state,
                         Value input) {
  build(builder, state, dynamic1D(builder.getF32Type()), input);
}

void KJTPermuteOp::build(OpBuilder &builder, OperationState &state, Value input,
                         ArrayRef<int64_t> permutation) {
  auto type = cast<KeyedJaggedTensorType>(input.getType());
  SmallVector<StringRef> keys;
  for (int64_t index : permutation) {
    assert(index >= 0 && index < type.getNumKeys() &&
           "kjt.permute index out of range");
    keys.push_back(type.getKey(index));
  }
  build(builder, state, type.withKeys(keys), input,
        builder.getDenseI64ArrayAttr(permutation));
}

void KJTSplitOp::build(OpBuilder &builder, OperationState &state, Value input,
                       ArrayRef<int64_t> keyCounts) {
  auto type = cast<KeyedJaggedTensorType>(input.getType());
  SmallVector<StringRef> keys = type.getKeyNames();
  SmallVector<Type> resultTypes;
  size_t start = 0;
  for (int64_t count : keyCounts) {
    size_t end = std::min(
        keys.size(), start + static_cast<size_t>(std::max<int64_t>(count, 0)));
    resultTypes.push_back(
        type.withKeys(ArrayRef(keys).slice(start, end - start)));
    start = end;
  }
  build(builder, state, resultTypes, input,
        builder.getDenseI64ArrayAttr(keyCounts));
}

void KJTConcatOp::build(OpBuilder &builder, OperationState &state,
                        ValueRange inputs) {
  assert(!inputs.empty() && "kjt.concat needs at least one input");
  auto first = cast<KeyedJaggedTensorType>(inputs.front().getType());
  SmallVector<StringRef> keys;
  for (Value input : inputs)
    llvm::append_range(
        keys, cast<KeyedJaggedTensorType>(input.getType()).getKeyNames());
  build(builder, state, first.withKeys(keys), inputs);
}

void KJTBucketizeOp::build(OpBuilder &builder, OperationState &state,
                           Value input, ArrayRef<int64_t> blockSizes,
                           int64_t numBuckets) {
  auto type = cast<KeyedJaggedTensorType>(input.getType());
  std::vector<std::string> storage;
  for (int64_t bucket = 0; bucket < numBuckets; ++bucket)
    for (StringRef key : type.getKeyNames())
      storage.push_back(KeyedJaggedTensorType::getBucketKey(key, bucket));
  SmallVector<StringRef> keys(storage.begin(), storage.end());
  build(builder, state, type.withKeys(keys), dynamic1D(builder.getI64Type()),
        input, builder.getDenseI64ArrayAttr(blockSizes),
        builder.getI64IntegerAttr(numBuckets));
}

void KeyedTensorGetOp::build(OpBuilder &builder, OperationState &state,
                             Value input, StringRef key) {
  auto type = cast<KeyedTensorType>(input.getType());
  std::optional<unsigned> index = type.getKeyIndex(key);
  int64_t dim = index ? type.getDims()[*index] : ShapedType::kDynamic;
  build(
      builder, state,
      RankedTensorType::get({ShapedType::kDynamic, dim}, type.getElementType()),
      input, builder.getStringAttr(key));
}
