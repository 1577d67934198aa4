//===- PlanJaggedOps.cpp - Jagged tensors and sequence lookups in a plan --===//
//
// A jagged tensor value of the plan is two slots: values [N, dense...] and
// offsets [B + 1] (int64). Lowered here (docs/plan-emitter-kjt.md):
//
//   ember.jagged.create         nothing: the jagged tensor is its operands
//   ember.jagged.values/offsets identity of the part
//   ember.jagged.to_padded      jagged_to_padded (values, offsets)
//   ember.jagged.sum            jagged_sum (values, offsets)
//   ember.jagged.from_padded    padded_to_jagged (padded, offsets)
//   ember.sequence_lookup       embedding_sequence (table, ids' values); the
//                               result keeps the ids' offsets
//   ember.sequence_all_to_all   sequence_all_to_all (rows, sent KJT's
//                               lengths), a collective
//
//===----------------------------------------------------------------------===//
#include "plan/PlanKjtOps.h"

#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberTypes.h"
#include "kernel_contract/kernel_contract.h"

namespace kn = ::ember::contract::kernel_names;

namespace mlir::ember::plan_emitter {

namespace {
DimInfo staticDim(int64_t size) {
  DimInfo d;
  d.size = size;
  return d;
}
bool isKnown(const DimInfo &d) { return d.isSymbolic() || d.size > 0; }
} // namespace

ArrayRef<OpLowering<PlanKjtLowering::Method>>
PlanKjtLowering::jaggedLowerings() {
  using P = PlanKjtLowering;
  static const OpLowering<Method> table[] = {
      {JaggedCreateOp::getOperationName(), &P::emitJagged},
      {JaggedValuesOp::getOperationName(), &P::emitJagged},
      {JaggedOffsetsOp::getOperationName(), &P::emitJagged},
      {JaggedToPaddedOp::getOperationName(), &P::emitJagged},
      {JaggedFromPaddedOp::getOperationName(), &P::emitJagged},
      {JaggedSumOp::getOperationName(), &P::emitJagged},
      {SequenceLookupOp::getOperationName(), &P::emitJagged},
      {SequenceAllToAllOp::getOperationName(), &P::emitJagged},
  };
  return table;
}

FailureOr<const JaggedSlotRefs *>
PlanKjtLowering::jaggedOperand(Operation *op, Value v) {
  auto it = jaggeds_.find(v);
  if (it != jaggeds_.end())
    return &it->second;
  InFlightDiagnostic diag =
      op->emitError() << "'" << op->getName()
                      << "': its jagged tensor operand has no slots in the plan";
  if (Operation *def = v.getDefiningOp())
    diag << " (it is produced by '" << def->getName() << "')";
  return failure();
}

/// B of offsets read from a one-key KJT, else unknown.
DimInfo PlanKjtLowering::batchOfOffsets(Value offsets) const {
  if (auto read = offsets.getDefiningOp<KJTOffsetsOp>())
    if (const KjtSlotRefs *kjt = lookupKjt(read.getInput()))
      if (kjt->numKeys == 1)
        return kjt->batch;
  return {};
}

LogicalResult PlanKjtLowering::emitJagged(Operation *op) {
  std::string name = hooks_.location(op);
  auto identity = [&](int source, Value result,
                      ArrayRef<DimInfo> dims) -> LogicalResult {
    FailureOr<int> slot = hooks_.defineResult(op, result, dims);
    if (failed(slot))
      return failure();
    pb::Instruction *instr = builder_.addInstruction(kn::kIdentity, name);
    instr->add_inputs(source);
    instr->add_outputs(*slot);
    return success();
  };
  auto valuesDims = [](const JaggedSlotRefs &j, Value values) {
    SmallVector<DimInfo> dims = {j.numValues};
    auto type = cast<RankedTensorType>(values.getType());
    for (int64_t d = 1; d < type.getRank(); ++d)
      dims.push_back(staticDim(type.getDimSize(d)));
    return dims;
  };

  if (auto create = dyn_cast<JaggedCreateOp>(op)) {
    JaggedSlotRefs refs;
    FailureOr<int> values = hooks_.operandSlot(op, create.getValues());
    FailureOr<int> offsets = failed(values)
                                 ? FailureOr<int>(failure())
                                 : hooks_.operandSlot(op, create.getOffsets());
    if (failed(offsets))
      return failure();
    refs.values = *values;
    refs.offsets = *offsets;
    if (const DimList *dims = builder_.lookupDims(create.getValues()))
      refs.numValues = dims->front();
    if (const DimList *dims = builder_.lookupDims(create.getOffsets()))
      refs.numOffsets = dims->front();
    refs.batch = batchOfOffsets(create.getOffsets());
    if (!isKnown(refs.batch) && !refs.numOffsets.isSymbolic() &&
        refs.numOffsets.size > 0)
      refs.batch = staticDim(refs.numOffsets.size - 1);
    jaggeds_[create.getResult()] = refs;
    return success();
  }
  if (auto values = dyn_cast<JaggedValuesOp>(op)) {
    FailureOr<const JaggedSlotRefs *> in = jaggedOperand(op, values.getInput());
    if (failed(in))
      return failure();
    return identity((*in)->values, values.getValues(),
                    valuesDims(**in, values.getValues()));
  }
  if (auto offsets = dyn_cast<JaggedOffsetsOp>(op)) {
    FailureOr<const JaggedSlotRefs *> in =
        jaggedOperand(op, offsets.getInput());
    if (failed(in))
      return failure();
    return identity((*in)->offsets, offsets.getOffsets(),
                    {(*in)->numOffsets});
  }
  if (auto padded = dyn_cast<JaggedToPaddedOp>(op)) {
    FailureOr<const JaggedSlotRefs *> in = jaggedOperand(op, padded.getInput());
    if (failed(in))
      return failure();
    auto padding = dyn_cast<FloatAttr>(padded.getPadding());
    auto intPadding = dyn_cast<IntegerAttr>(padded.getPadding());
    if (!padding && !intPadding)
      return op->emitError("'ember.jagged.to_padded': the padding must be a "
                           "float or integer attribute");
    SmallVector<DimInfo> dims = {(*in)->batch};
    FailureOr<int> slot = hooks_.defineResult(op, padded.getResult(), dims);
    if (failed(slot))
      return failure();
    pb::Instruction *instr =
        builder_.addInstruction(kn::kJaggedToPadded, name);
    instr->add_inputs((*in)->values);
    instr->add_inputs((*in)->offsets);
    instr->add_outputs(*slot);
    addIntAttr(instr, "max_length", padded.getMaxLength());
    pb::Attribute *attr = instr->add_attrs();
    attr->set_name("padding_value");
    attr->set_f(padding ? padding.getValueAsDouble()
                        : static_cast<double>(intPadding.getInt()));
    return success();
  }
  if (auto from = dyn_cast<JaggedFromPaddedOp>(op)) {
    FailureOr<int> padded = hooks_.operandSlot(op, from.getPadded());
    FailureOr<int> offsets = failed(padded)
                                 ? FailureOr<int>(failure())
                                 : hooks_.operandSlot(op, from.getOffsets());
    if (failed(offsets))
      return failure();
    auto paddedType = cast<RankedTensorType>(from.getPadded().getType());
    std::optional<pb::DataType> dtype =
        PlanProgramBuilder::toPlanDType(paddedType.getElementType());
    if (!dtype)
      return op->emitError("'ember.jagged.from_padded' of ")
             << paddedType.getElementType() << " cannot be held by a plan slot";
    JaggedSlotRefs refs;
    refs.offsets = *offsets;
    if (const DimList *dims = builder_.lookupDims(from.getOffsets()))
      refs.numOffsets = dims->front();
    refs.batch = batchOfOffsets(from.getOffsets());
    refs.numValues = freshDim(); // offsets[B], known at run time
    SmallVector<std::pair<DimInfo, int64_t>> dims = {{refs.numValues, 1}};
    for (int64_t d = 2; d < paddedType.getRank(); ++d) {
      if (paddedType.isDynamicDim(d))
        return op->emitError("'ember.jagged.from_padded' needs static dense "
                             "dims, got ")
               << paddedType;
      dims.push_back({staticDim(paddedType.getDimSize(d)), 1});
    }
    refs.values = addSlot(name, *dtype, dims);
    jaggeds_[from.getResult()] = refs;
    pb::Instruction *instr =
        builder_.addInstruction(kn::kPaddedToJagged, name);
    instr->add_inputs(*padded);
    instr->add_inputs(*offsets);
    instr->add_outputs(refs.values);
    return success();
  }
  if (auto sum = dyn_cast<JaggedSumOp>(op)) {
    FailureOr<const JaggedSlotRefs *> in = jaggedOperand(op, sum.getInput());
    if (failed(in))
      return failure();
    SmallVector<DimInfo> dims = {(*in)->batch};
    FailureOr<int> slot = hooks_.defineResult(op, sum.getResult(), dims);
    if (failed(slot))
      return failure();
    pb::Instruction *instr = builder_.addInstruction(kn::kJaggedSum, name);
    instr->add_inputs((*in)->values);
    instr->add_inputs((*in)->offsets);
    instr->add_outputs(*slot);
    addIntAttr(instr, "max_length", sum.getMaxLength());
    return success();
  }
  if (auto lookup = dyn_cast<SequenceLookupOp>(op)) {
    FailureOr<const JaggedSlotRefs *> in = jaggedOperand(op, lookup.getIds());
    if (failed(in))
      return failure();
    const JaggedSlotRefs ids = **in;
    Value weights = hooks_.tableWeights(lookup.getTable());
    if (!weights)
      return op->emitError("'ember.sequence_lookup': the table must be made "
                           "by 'ember.table.from_tensor' of a constant");
    auto result = lookup.getResult().getType();
    if (!result.getElementType().isF32())
      return op->emitError("'ember.sequence_lookup': the embedding_sequence "
                           "kernel returns f32, but the result is ")
             << result;
    FailureOr<int> table = hooks_.operandSlot(op, weights);
    if (failed(table))
      return failure();
    TableType tableType = lookup.getTable().getType();
    JaggedSlotRefs out = ids;
    out.numValues = isKnown(ids.numValues) ? ids.numValues : freshDim();
    out.values = addSlot(name, pb::FLOAT32,
                         {{out.numValues, 1},
                          {staticDim(tableType.getDim()), 1}});
    jaggeds_[lookup.getResult()] = out;
    pb::Instruction *instr =
        builder_.addInstruction(kn::kEmbeddingSequence, name);
    instr->add_inputs(*table);
    instr->add_inputs(ids.values);
    instr->add_outputs(out.values);
    addIntAttr(instr, "dim", tableType.getDim());
    if (tableType.isQuantized())
      addStringAttr(instr, "format",
                    stringifyTableFormat(tableType.getFormat()).str());
    pb::Attribute *attr = instr->add_attrs();
    attr->set_name("feature_names");
    attr->mutable_strings()->add_values(name);
    return success();
  }
  auto a2a = cast<SequenceAllToAllOp>(op);
  if (std::optional<CommCodec> codec = a2a.getCodec();
      codec && *codec != CommCodec::none)
    return op->emitError("'ember.sequence_all_to_all' with a codec is not "
                         "supported by the plan emitter yet");
  auto inputType = a2a.getInput().getType();
  if (!inputType.getElementType().isF32())
    return op->emitError("'ember.sequence_all_to_all' carries f32 rows only, "
                         "not ")
           << inputType.getElementType();
  FailureOr<const KjtSlotRefs *> sent = kjtOperand(op, a2a.getSent());
  if (failed(sent))
    return failure();
  const KjtSlotRefs sentKjt = **sent;
  FailureOr<int> rows = hooks_.operandSlot(op, a2a.getInput());
  if (failed(rows))
    return failure();
  FailureOr<int> collective =
      hooks_.collective(op, pb::CollectiveDescriptor::ALL_TO_ALL,
                        a2a.getGroup().getRankList());
  if (failed(collective))
    return failure();
  // [rows this rank sent ids for, trailing dims]: its sent KJT's value count.
  DimList dims = {isKnown(sentKjt.numValues) ? sentKjt.numValues : freshDim()};
  for (int64_t d = 1; d < inputType.getRank(); ++d) {
    if (inputType.isDynamicDim(d))
      return op->emitError("'ember.sequence_all_to_all' needs static "
                           "trailing dims, got ")
             << inputType;
    dims.push_back(staticDim(inputType.getDimSize(d)));
  }
  SmallVector<std::pair<DimInfo, int64_t>> withFactors;
  for (const DimInfo &d : dims)
    withFactors.push_back({d, 1});
  int out = addSlot(name, pb::FLOAT32, withFactors);
  awaited_[a2a.getResult()] = {out, dims};
  pb::Instruction *instr =
      builder_.addInstruction(kn::kSequenceAllToAll, name);
  instr->add_inputs(*rows);
  instr->add_inputs(sentKjt.lengths);
  instr->add_outputs(out);
  instr->set_collective(*collective + 1);
  addIntsAttr(instr, "key_splits", a2a.getKeySplits());
  return success();
}

} // namespace mlir::ember::plan_emitter
