//===- PlanKjtOps.cpp - KJTs, keyed tensors and lookups in a plan ---------===//
//
// Kernel contracts: docs/kernels-embedding.md (grouped_embedding_bag, kjt_*,
// lengths_to_offsets) and docs/kernels-dense.md (slice, sub, concat, cast,
// identity). The lowering itself: docs/plan-emitter-kjt.md.
//
//===----------------------------------------------------------------------===//
#include "plan/PlanKjtOps.h"

#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberTypes.h"

#include "kernel_contract/kernel_contract.h"
#include <cctype>
#include <limits>

namespace kn = ::ember::contract::kernel_names;

namespace mlir::ember::plan_emitter {
namespace {

std::string sanitize(llvm::StringRef name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return out.empty() ? std::string("kjt") : out;
}

std::optional<std::string> tableFormatName(TableFormat format) {
  switch (format) {
  case TableFormat::f32:
    return std::string("float32");
  case TableFormat::f16:
    return std::string("float16");
  case TableFormat::bf16:
    return std::string("bfloat16");
  case TableFormat::int8_rowwise:
    return std::string("int8_rowwise");
  case TableFormat::int4_rowwise:
    return std::string("int4_rowwise");
  }
  return std::nullopt;
}

/// `dims` with the factor of each symbolic dim.
using FactoredDims = SmallVector<std::pair<DimInfo, int64_t>, 2>;

DimInfo staticDim(int64_t size) {
  DimInfo d;
  d.size = size;
  return d;
}

bool isKnown(const DimInfo &d) { return d.isSymbolic() || d.size > 0; }

} // namespace

const OpLowering<PlanKjtLowering::Method> *
PlanKjtLowering::lowering(Operation *op) {
  using P = PlanKjtLowering;
  static const OpLowering<Method> table[] = {
      {KJTCreateOp::getOperationName(), &P::emitCreate},
      {KJTValuesOp::getOperationName(), &P::emitAccessor},
      {KJTLengthsOp::getOperationName(), &P::emitAccessor},
      {KJTOffsetsOp::getOperationName(), &P::emitAccessor},
      {KJTWeightsOp::getOperationName(), &P::emitAccessor},
      // An index scalar: shape computations read it from the types.
      {KJTStrideOp::getOperationName(), &P::emitNothing},
      {KJTPermuteOp::getOperationName(), &P::emitPermute},
      {KJTSplitOp::getOperationName(), &P::emitSplit},
      {KJTConcatOp::getOperationName(), &P::emitConcat},
      {KJTBucketizeOp::getOperationName(), &P::emitBucketize},
      {EmbeddingBagCollectionOp::getOperationName(), &P::emitLookup},
      {GroupedLookupOp::getOperationName(), &P::emitLookup},
      {KeyedTensorCreateOp::getOperationName(), &P::emitKeyedTensor},
      {KeyedTensorValuesOp::getOperationName(), &P::emitKeyedTensor},
      {KeyedTensorGetOp::getOperationName(), &P::emitKeyedTensor},
      {KeyedTensorRegroupOp::getOperationName(), &P::emitKeyedTensor},
  };
  if (const OpLowering<Method> *row = findLowering<Method>(table, op))
    return row;
  if (const OpLowering<Method> *row = findLowering(jaggedLowerings(), op))
    return row;
  return findLowering(collectiveLowerings(), op);
}

bool PlanKjtLowering::handles(Operation *op) { return lowering(op); }

const KjtSlotRefs *PlanKjtLowering::lookupKjt(Value kjt) const {
  auto it = kjts_.find(kjt);
  return it == kjts_.end() ? nullptr : &it->second;
}

const KeyedTensorSlot *
PlanKjtLowering::lookupKeyedTensor(Value keyedTensor) const {
  auto it = keyed_.find(keyedTensor);
  return it == keyed_.end() ? nullptr : &it->second;
}

int PlanKjtLowering::addSlot(const std::string &name, pb::DataType dtype,
                             ArrayRef<std::pair<DimInfo, int64_t>> dims) {
  pb::RankProgram *program = builder_.program();
  int index = program->slots_size();
  pb::Slot *slot = program->add_slots();
  slot->set_name(name);
  slot->set_dtype(dtype);
  for (const auto &[d, factor] : dims) {
    pb::Dim *pd = slot->add_shape();
    if (d.isSymbolic()) {
      pd->set_symbol(d.symbol);
      builder_.reserveSymbol(d.symbol);
      if (factor != 1)
        pd->set_factor(factor);
    } else {
      pd->set_size(d.size * factor);
    }
  }
  return index;
}

DimInfo PlanKjtLowering::freshDim() {
  DimInfo d;
  d.symbol = builder_.freshSymbol();
  return d;
}

std::pair<DimInfo, int64_t> PlanKjtLowering::lengthsDim(int64_t numKeys,
                                                        const DimInfo &batch) {
  if (numKeys == 0)
    return {staticDim(0), 1};
  if (batch.isSymbolic())
    return {batch, numKeys};
  if (batch.size > 0)
    return {staticDim(batch.size * numKeys), 1};
  return {freshDim(), 1};
}

KjtSlotRefs PlanKjtLowering::addKjtSlots(Value result, const std::string &name,
                                         pb::DataType valuesType,
                                         pb::DataType lengthsType,
                                         bool weighted, int64_t numKeys,
                                         const DimInfo &batch) {
  KjtSlotRefs refs;
  refs.numKeys = numKeys;
  refs.batch = batch;
  refs.numValues = numKeys == 0 ? staticDim(0) : freshDim();
  refs.values = addSlot(name + ".values", valuesType, {{refs.numValues, 1}});
  refs.lengths =
      addSlot(name + ".lengths", lengthsType, {lengthsDim(numKeys, batch)});
  if (weighted)
    refs.weights =
        addSlot(name + ".weights", pb::FLOAT32, {{refs.numValues, 1}});
  if (result)
    kjts_[result] = refs;
  return refs;
}

FailureOr<const KjtSlotRefs *> PlanKjtLowering::kjtOperand(Operation *op,
                                                           Value v) {
  if (const KjtSlotRefs *refs = lookupKjt(v))
    return refs;
  InFlightDiagnostic diag = op->emitError()
                            << "'" << op->getName()
                            << "': its KJT operand has no slots in the plan";
  if (Operation *def = v.getDefiningOp())
    diag << " (it is produced by '" << def->getName() << "')";
  return failure();
}

FailureOr<const KeyedTensorSlot *> PlanKjtLowering::keyedOperand(Operation *op,
                                                                 Value v) {
  if (const KeyedTensorSlot *slot = lookupKeyedTensor(v))
    return slot;
  InFlightDiagnostic diag =
      op->emitError() << "'" << op->getName()
                      << "': its keyed tensor operand has no slot in the plan";
  if (Operation *def = v.getDefiningOp())
    diag << " (it is produced by '" << def->getName() << "')";
  return failure();
}

LogicalResult PlanKjtLowering::defineInput(BlockArgument arg,
                                           const std::string &name,
                                           pb::Signature *signature) {
  auto type = cast<KeyedJaggedTensorType>(arg.getType());
  if (type.isVariableBatch())
    return emitError(arg.getLoc())
           << "KJT argument '" << name
           << "' has a variable batch, which plans do not support yet";
  std::optional<pb::DataType> valuesType =
      PlanProgramBuilder::toPlanDType(type.getValueType());
  std::optional<pb::DataType> lengthsType =
      PlanProgramBuilder::toPlanDType(type.getLengthType());
  if (!valuesType || !lengthsType)
    return emitError(arg.getLoc())
           << "KJT argument '" << name << "' has unsupported value/length "
           << "types";
  KjtSlotRefs refs;
  refs.numKeys = type.getNumKeys();
  refs.batch.symbol = "B";
  refs.numValues.symbol = "N_" + sanitize(name);
  refs.values = addSlot(name + ".values", *valuesType, {{refs.numValues, 1}});
  refs.lengths =
      addSlot(name + ".lengths", *lengthsType, {{refs.batch, refs.numKeys}});
  if (type.isWeighted())
    refs.weights =
        addSlot(name + ".weights", pb::FLOAT32, {{refs.numValues, 1}});
  kjts_[arg] = refs;

  pb::KjtSlots *slots = builder_.program()->add_kjt_input_slots();
  slots->set_values(refs.values);
  slots->set_lengths(refs.lengths);
  slots->set_weights(refs.weights);
  pb::KjtSpec *spec = signature->add_kjt_inputs();
  spec->set_name(name);
  for (llvm::StringRef key : type.getKeyNames())
    spec->add_keys(key.str());
  spec->set_values_dtype(*valuesType);
  spec->set_lengths_dtype(*lengthsType);
  spec->set_has_weights(type.isWeighted());
  spec->set_batch_symbol(refs.batch.symbol);
  return success();
}

LogicalResult PlanKjtLowering::emit(Operation *op) {
  const OpLowering<Method> *row = lowering(op);
  if (!row)
    return op->emitError("'") << op->getName() << "' is not a KJT op";
  return (this->*row->lower)(op);
}

/// kjt.create: the KJT's slots are its operands' (no instruction), except
/// that offsets alone become lengths = offsets[1:] - offsets[:-1].
LogicalResult PlanKjtLowering::emitCreate(Operation *op) {
  auto create = cast<KJTCreateOp>(op);
  auto type = cast<KeyedJaggedTensorType>(create.getResult().getType());
  if (type.isVariableBatch())
    return op->emitError("'ember.kjt.create': variable-batch KJTs are not "
                         "supported by the plan emitter yet");
  KjtSlotRefs refs;
  refs.numKeys = type.getNumKeys();
  FailureOr<int> values = hooks_.operandSlot(op, create.getValues());
  if (failed(values))
    return failure();
  refs.values = *values;
  if (const DimList *dims = builder_.lookupDims(create.getValues()))
    refs.numValues = dims->front();
  if (Value w = create.getWeights()) {
    FailureOr<int> weights = hooks_.operandSlot(op, w);
    if (failed(weights))
      return failure();
    refs.weights = *weights;
  }
  auto batchFrom = [&](const DimInfo &count, int64_t extra) {
    // Static K * B (+ extra) gives a static B; a symbolic one is unknown.
    if (!count.isSymbolic() && count.size > 0 && refs.numKeys > 0 &&
        (count.size - extra) % refs.numKeys == 0)
      refs.batch.size = (count.size - extra) / refs.numKeys;
  };
  if (Value lengths = create.getLengths()) {
    FailureOr<int> slot = hooks_.operandSlot(op, lengths);
    if (failed(slot))
      return failure();
    refs.lengths = *slot;
    if (const DimList *dims = builder_.lookupDims(lengths))
      batchFrom(dims->front(), 0);
  } else {
    Value offsets = create.getOffsets();
    FailureOr<int> offsetsSlot = hooks_.operandSlot(op, offsets);
    if (failed(offsetsSlot))
      return failure();
    DimInfo count;
    if (const DimList *dims = builder_.lookupDims(offsets))
      count = dims->front();
    batchFrom(count, 1);
    std::optional<pb::DataType> dtype = PlanProgramBuilder::toPlanDType(
        cast<RankedTensorType>(offsets.getType()).getElementType());
    DimInfo lengthsDim = !count.isSymbolic() && count.size > 0
                             ? staticDim(count.size - 1)
                             : freshDim();
    std::string name = hooks_.location(op);
    int hi = addSlot(name + ".offsets_hi", *dtype, {{lengthsDim, 1}});
    int lo = addSlot(name + ".offsets_lo", *dtype, {{lengthsDim, 1}});
    refs.lengths = addSlot(name + ".lengths", *dtype, {{lengthsDim, 1}});
    pb::Instruction *slice = builder_.addInstruction(kn::kSlice, name);
    slice->add_inputs(*offsetsSlot);
    slice->add_outputs(hi);
    addIntsAttr(slice, "starts", {1});
    addIntsAttr(slice, "ends", {std::numeric_limits<int64_t>::max()});
    slice = builder_.addInstruction(kn::kSlice, name);
    slice->add_inputs(*offsetsSlot);
    slice->add_outputs(lo);
    addIntsAttr(slice, "starts", {0});
    addIntsAttr(slice, "ends", {-1});
    pb::Instruction *sub = builder_.addInstruction(kn::kSub, name);
    sub->add_inputs(hi);
    sub->add_inputs(lo);
    sub->add_outputs(refs.lengths);
  }
  kjts_[create.getResult()] = refs;
  return success();
}

/// Accessors alias the KJT's slots (identity), except offsets, which are
/// computed (lengths_to_offsets gives int64; a cast follows for i32).
LogicalResult PlanKjtLowering::emitAccessor(Operation *op) {
  FailureOr<const KjtSlotRefs *> refs = kjtOperand(op, op->getOperand(0));
  if (failed(refs))
    return failure();
  const KjtSlotRefs &kjt = **refs;
  Value result = op->getResult(0);
  std::string name = hooks_.location(op);
  DimInfo lengthsCount;
  if (kjt.batch.size > 0)
    lengthsCount = staticDim(kjt.batch.size * kjt.numKeys);
  int source = -1;
  DimInfo dim;
  if (isa<KJTValuesOp>(op)) {
    source = kjt.values;
    dim = kjt.numValues;
  } else if (isa<KJTWeightsOp>(op)) {
    source = kjt.weights;
    dim = kjt.numValues;
  } else if (isa<KJTLengthsOp>(op)) {
    source = kjt.lengths;
    dim = lengthsCount;
  }
  if (isa<KJTOffsetsOp>(op)) {
    auto type = cast<RankedTensorType>(result.getType());
    DimInfo count =
        lengthsCount.size > 0 ? staticDim(lengthsCount.size + 1) : freshDim();
    bool needsCast = !type.getElementType().isInteger(64);
    int offsets = -1;
    if (needsCast) {
      offsets = addSlot(name + ".offsets64", pb::INT64, {{count, 1}});
    } else {
      FailureOr<int> slot = hooks_.defineResult(op, result, {count});
      if (failed(slot))
        return failure();
      offsets = *slot;
    }
    pb::Instruction *instr =
        builder_.addInstruction(kn::kLengthsToOffsets, name);
    instr->add_inputs(kjt.lengths);
    instr->add_outputs(offsets);
    if (needsCast) {
      FailureOr<int> slot = hooks_.defineResult(op, result, {count});
      if (failed(slot))
        return failure();
      pb::Instruction *cast = builder_.addInstruction(kn::kCast, name);
      cast->add_inputs(offsets);
      cast->add_outputs(*slot);
      addStringAttr(cast, "to", "int32");
    }
    return success();
  }
  if (source < 0)
    return op->emitError() << "'" << op->getName()
                           << "': the KJT has no such part in the plan";
  FailureOr<int> slot = hooks_.defineResult(op, result, {dim});
  if (failed(slot))
    return failure();
  pb::Instruction *instr = builder_.addInstruction(kn::kIdentity, name);
  instr->add_inputs(source);
  instr->add_outputs(*slot);
  return success();
}

namespace {
void addKjtInputs(pb::Instruction *instr, const KjtSlotRefs &kjt) {
  instr->add_inputs(kjt.values);
  instr->add_inputs(kjt.lengths);
  instr->add_inputs(kjt.weights);
}
void addKjtOutputs(pb::Instruction *instr, const KjtSlotRefs &kjt,
                   bool alwaysWeights) {
  instr->add_outputs(kjt.values);
  instr->add_outputs(kjt.lengths);
  if (kjt.weights >= 0 || alwaysWeights)
    instr->add_outputs(kjt.weights);
}
pb::DataType dtypeOf(Type t) { return *PlanProgramBuilder::toPlanDType(t); }
} // namespace

LogicalResult PlanKjtLowering::emitPermute(Operation *op) {
  auto permute = cast<KJTPermuteOp>(op);
  FailureOr<const KjtSlotRefs *> in = kjtOperand(op, permute.getInput());
  if (failed(in))
    return failure();
  const KjtSlotRefs input = **in;
  auto type = cast<KeyedJaggedTensorType>(permute.getResult().getType());
  std::string name = hooks_.location(op);
  KjtSlotRefs out = addKjtSlots(
      permute.getResult(), name, dtypeOf(type.getValueType()),
      dtypeOf(type.getLengthType()), input.weights >= 0,
      static_cast<int64_t>(permute.getPermutation().size()), input.batch);
  pb::Instruction *instr = builder_.addInstruction(kn::kKjtPermute, name);
  addKjtInputs(instr, input);
  addKjtOutputs(instr, out, /*alwaysWeights=*/false);
  addIntsAttr(instr, "permutation", permute.getPermutation());
  addIntAttr(instr, "num_keys", input.numKeys);
  return success();
}

LogicalResult PlanKjtLowering::emitSplit(Operation *op) {
  auto split = cast<KJTSplitOp>(op);
  FailureOr<const KjtSlotRefs *> in = kjtOperand(op, split.getInput());
  if (failed(in))
    return failure();
  const KjtSlotRefs input = **in;
  std::string name = hooks_.location(op);
  SmallVector<KjtSlotRefs> parts;
  for (auto [i, result] : llvm::enumerate(split.getResults())) {
    auto type = cast<KeyedJaggedTensorType>(result.getType());
    parts.push_back(
        addKjtSlots(result, name + "#" + std::to_string(i),
                    dtypeOf(type.getValueType()), dtypeOf(type.getLengthType()),
                    input.weights >= 0, type.getNumKeys(), input.batch));
  }
  pb::Instruction *instr = builder_.addInstruction(kn::kKjtSplit, name);
  addKjtInputs(instr, input);
  for (const KjtSlotRefs &part : parts)
    addKjtOutputs(instr, part, /*alwaysWeights=*/true);
  addIntsAttr(instr, "key_counts", split.getKeyCounts());
  return success();
}

LogicalResult PlanKjtLowering::emitConcat(Operation *op) {
  auto concat = cast<KJTConcatOp>(op);
  std::string name = hooks_.location(op);
  pb::Instruction *instr = builder_.addInstruction(kn::kKjtConcat, name);
  SmallVector<int64_t> keyCounts;
  DimInfo batch;
  bool weighted = false;
  for (Value v : concat.getInputs()) {
    FailureOr<const KjtSlotRefs *> in = kjtOperand(op, v);
    if (failed(in))
      return failure();
    addKjtInputs(instr, **in);
    keyCounts.push_back((*in)->numKeys);
    weighted |= (*in)->weights >= 0;
    if (!isKnown(batch))
      batch = (*in)->batch;
  }
  auto type = cast<KeyedJaggedTensorType>(concat.getResult().getType());
  KjtSlotRefs out = addKjtSlots(
      concat.getResult(), name, dtypeOf(type.getValueType()),
      dtypeOf(type.getLengthType()), weighted, type.getNumKeys(), batch);
  addKjtOutputs(instr, out, /*alwaysWeights=*/false);
  addIntAttr(instr, "num_inputs", keyCounts.size());
  addIntsAttr(instr, "key_counts", keyCounts);
  return success();
}

LogicalResult PlanKjtLowering::emitBucketize(Operation *op) {
  auto bucketize = cast<KJTBucketizeOp>(op);
  FailureOr<const KjtSlotRefs *> in = kjtOperand(op, bucketize.getInput());
  if (failed(in))
    return failure();
  const KjtSlotRefs input = **in;
  auto type = cast<KeyedJaggedTensorType>(bucketize.getResult().getType());
  std::string name = hooks_.location(op);
  KjtSlotRefs out =
      addKjtSlots(bucketize.getResult(), name, dtypeOf(type.getValueType()),
                  dtypeOf(type.getLengthType()), input.weights >= 0,
                  type.getNumKeys(), input.batch);
  // The permutation has one entry per input value (N of the input).
  FailureOr<int> perm = hooks_.defineResult(
      op, bucketize.getUnbucketizePermutation(), {input.numValues});
  if (failed(perm))
    return failure();
  pb::Instruction *instr = builder_.addInstruction(kn::kKjtBucketize, name);
  addKjtInputs(instr, input);
  addKjtOutputs(instr, out, /*alwaysWeights=*/true);
  instr->add_outputs(*perm);
  addIntsAttr(instr, "block_sizes", bucketize.getBlockSizes());
  addIntAttr(instr, "num_buckets", bucketize.getNumBuckets());
  return success();
}

/// embedding_bag_collection and grouped_lookup -> one grouped_embedding_bag
/// writing every feature's pooled rows into its columns of [B, sum(D)].
LogicalResult PlanKjtLowering::emitLookup(Operation *op) {
  Value features = op->getOperand(0);
  ValueRange tables;
  ArrayRef<int64_t> featureTables;
  SmallVector<PoolingMode> tablePooling; // per table
  std::optional<PoolingMode> groupPooling;
  if (auto ebc = dyn_cast<EmbeddingBagCollectionOp>(op)) {
    tables = ebc.getTables();
    featureTables = ebc.getFeatureTables();
    for (Attribute a : ebc.getPooling())
      tablePooling.push_back(cast<PoolingModeAttr>(a).getValue());
  } else {
    auto grouped = cast<GroupedLookupOp>(op);
    tables = grouped.getTables();
    featureTables = grouped.getFeatureTables();
    groupPooling = grouped.getPooling();
  }
  FailureOr<const KjtSlotRefs *> in = kjtOperand(op, features);
  if (failed(in))
    return failure();
  const KjtSlotRefs kjt = **in;
  auto kjtType = cast<KeyedJaggedTensorType>(features.getType());
  auto resultType = cast<KeyedTensorType>(op->getResult(0).getType());
  if (!resultType.getElementType().isF32())
    return op->emitError() << "'" << op->getName()
                           << "': the grouped_embedding_bag kernel returns "
                              "f32, but the result is "
                           << resultType;

  std::string name = hooks_.location(op);
  SmallVector<int> tableSlots;
  SmallVector<std::string> formats;
  SmallVector<int64_t> dims;
  for (auto [i, table] : llvm::enumerate(tables)) {
    auto tableType = cast<TableType>(table.getType());
    std::optional<std::string> format = tableFormatName(tableType.getFormat());
    Value weights = hooks_.tableWeights(table);
    if (!format || !weights)
      return op->emitError()
             << "'" << op->getName() << "': table " << i
             << " must be a table made by 'ember.table.from_tensor' of a "
                "constant";
    FailureOr<int> slot = hooks_.operandSlot(op, weights);
    if (failed(slot))
      return failure();
    tableSlots.push_back(*slot);
    formats.push_back(*format);
    dims.push_back(tableType.getDim());
  }
  SmallVector<int64_t> outputOffsets;
  SmallVector<std::string> pooling, featureNames;
  for (unsigned f = 0; f < kjtType.getNumKeys(); ++f) {
    int64_t t = featureTables[f];
    PoolingMode mode = groupPooling ? *groupPooling : tablePooling[t];
    pooling.push_back(stringifyPoolingMode(mode).str());
    featureNames.push_back(kjtType.getKey(f).str());
    if (auto grouped = dyn_cast<GroupedLookupOp>(op))
      outputOffsets.push_back(grouped.getColumnOffsets()[f]);
    else
      outputOffsets.push_back(resultType.getColumnOffset(f));
  }

  KeyedTensorSlot out;
  out.batch = isKnown(kjt.batch) ? kjt.batch : freshDim();
  out.slot =
      addSlot(name, pb::FLOAT32,
              {{out.batch, 1}, {staticDim(resultType.getTotalDim()), 1}});
  keyed_[op->getResult(0)] = out;

  pb::Instruction *instr =
      builder_.addInstruction(kn::kGroupedEmbeddingBag, name);
  addKjtInputs(instr, kjt);
  for (int s : tableSlots)
    instr->add_inputs(s);
  instr->add_outputs(out.slot);
  addIntsAttr(instr, "feature_tables", featureTables);
  pb::Attribute *attr = instr->add_attrs();
  attr->set_name("pooling");
  for (const std::string &p : pooling)
    attr->mutable_strings()->add_values(p);
  attr = instr->add_attrs();
  attr->set_name("table_formats");
  for (const std::string &f : formats)
    attr->mutable_strings()->add_values(f);
  addIntsAttr(instr, "table_dims", dims);
  addIntsAttr(instr, "output_offsets", outputOffsets);
  addIntAttr(instr, "output_width", resultType.getTotalDim());
  attr = instr->add_attrs();
  attr->set_name("feature_names");
  for (const std::string &f : featureNames)
    attr->mutable_strings()->add_values(f);
  return success();
}

LogicalResult PlanKjtLowering::emitKeyedTensor(Operation *op) {
  std::string name = hooks_.location(op);
  if (auto create = dyn_cast<KeyedTensorCreateOp>(op)) {
    FailureOr<int> slot = hooks_.operandSlot(op, create.getValues());
    if (failed(slot))
      return failure();
    KeyedTensorSlot kt;
    kt.slot = *slot;
    if (const DimList *dims = builder_.lookupDims(create.getValues()))
      kt.batch = dims->front();
    if (!isKnown(kt.batch))
      kt.batch = freshDim();
    keyed_[create.getResult()] = kt;
    return success();
  }
  if (auto values = dyn_cast<KeyedTensorValuesOp>(op)) {
    FailureOr<const KeyedTensorSlot *> in = keyedOperand(op, values.getInput());
    if (failed(in))
      return failure();
    FailureOr<int> slot =
        hooks_.defineResult(op, values.getValues(), {(*in)->batch});
    if (failed(slot))
      return failure();
    pb::Instruction *instr = builder_.addInstruction(kn::kIdentity, name);
    instr->add_inputs((*in)->slot);
    instr->add_outputs(*slot);
    return success();
  }
  if (auto get = dyn_cast<KeyedTensorGetOp>(op)) {
    FailureOr<const KeyedTensorSlot *> in = keyedOperand(op, get.getInput());
    if (failed(in))
      return failure();
    auto type = cast<KeyedTensorType>(get.getInput().getType());
    std::optional<unsigned> key = type.getKeyIndex(get.getKey());
    if (!key)
      return op->emitError()
             << "'ember.keyed_tensor.get': no key '" << get.getKey() << "'";
    int64_t begin = type.getColumnOffset(*key);
    int64_t dim = type.getDims()[*key];
    FailureOr<int> slot = hooks_.defineResult(op, get.getResult(),
                                              {(*in)->batch, staticDim(dim)});
    if (failed(slot))
      return failure();
    pb::Instruction *instr = builder_.addInstruction(kn::kSlice, name);
    instr->add_inputs((*in)->slot);
    instr->add_outputs(*slot);
    addIntsAttr(instr, "starts", {begin});
    addIntsAttr(instr, "ends", {begin + dim});
    addIntsAttr(instr, "axes", {1});
    return success();
  }
  auto regroup = cast<KeyedTensorRegroupOp>(op);
  auto resultType = cast<KeyedTensorType>(regroup.getResult().getType());
  std::optional<pb::DataType> dtype =
      PlanProgramBuilder::toPlanDType(resultType.getElementType());
  if (!dtype)
    return op->emitError("'ember.keyed_tensor.regroup': unsupported element "
                         "type");
  // Runs of consecutive result keys read from one input's consecutive
  // columns become one slice each (or the whole input), then one concat.
  struct Run {
    unsigned input;
    int64_t begin, end;
  };
  SmallVector<Run> runs;
  DimInfo batch;
  for (unsigned k = 0; k < resultType.getNumKeys(); ++k) {
    llvm::StringRef key = resultType.getKey(k);
    bool found = false;
    for (auto [i, v] : llvm::enumerate(regroup.getInputs())) {
      auto type = cast<KeyedTensorType>(v.getType());
      std::optional<unsigned> idx = type.getKeyIndex(key);
      if (!idx)
        continue;
      int64_t begin = type.getColumnOffset(*idx);
      int64_t end = begin + type.getDims()[*idx];
      if (!runs.empty() && runs.back().input == i && runs.back().end == begin)
        runs.back().end = end;
      else
        runs.push_back({static_cast<unsigned>(i), begin, end});
      found = true;
      break;
    }
    if (!found)
      return op->emitError() << "'ember.keyed_tensor.regroup': no input has "
                                "key '"
                             << key << "'";
  }
  SmallVector<int> parts;
  for (const Run &run : runs) {
    Value v = regroup.getInputs()[run.input];
    FailureOr<const KeyedTensorSlot *> in = keyedOperand(op, v);
    if (failed(in))
      return failure();
    if (!isKnown(batch))
      batch = (*in)->batch;
    auto type = cast<KeyedTensorType>(v.getType());
    if (run.begin == 0 && run.end == type.getTotalDim()) {
      parts.push_back((*in)->slot);
      continue;
    }
    int part =
        addSlot(name + ".part", *dtype,
                {{(*in)->batch, 1}, {staticDim(run.end - run.begin), 1}});
    pb::Instruction *instr = builder_.addInstruction(kn::kSlice, name);
    instr->add_inputs((*in)->slot);
    instr->add_outputs(part);
    addIntsAttr(instr, "starts", {run.begin});
    addIntsAttr(instr, "ends", {run.end});
    addIntsAttr(instr, "axes", {1});
    parts.push_back(part);
  }
  KeyedTensorSlot out;
  out.batch = batch;
  out.slot = addSlot(name, *dtype,
                     {{batch, 1}, {staticDim(resultType.getTotalDim()), 1}});
  pb::Instruction *instr = builder_.addInstruction(
      parts.size() == 1 ? kn::kIdentity : kn::kConcat, name);
  for (int p : parts)
    instr->add_inputs(p);
  instr->add_outputs(out.slot);
  if (parts.size() > 1)
    addIntAttr(instr, "axis", 1);
  keyed_[regroup.getResult()] = out;
  return success();
}

} // namespace mlir::ember::plan_emitter
