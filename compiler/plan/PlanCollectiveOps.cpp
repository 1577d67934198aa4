//===- PlanCollectiveOps.cpp - A partitioned program's ops in a plan ------===//
//
// What the partitioning pass (passes/Partition.cpp) adds to a rank's
// program, lowered to the runtime's kernels (docs/kernels-embedding.md,
// docs/runtime.md "Collectives"):
//
//   ember.kjt.from_bags            kjt_from_bags
//   ember.kjt_all_to_all.splits    nothing: kjt_all_to_all exchanges the
//                                  split sizes itself
//   ember.kjt_all_to_all.tensors   kjt_all_to_all (KJT in, KJT out)
//   ember.pooled_all_to_all        pooled_all_to_all (x, batch_ref)
//   ember.reduce_scatter           reduce_scatter (x, batch_ref)
//   ember.all_gather / all_reduce  all_gather / all_reduce (x)
//   ember.wait                     nothing: the result is the collective's
//                                  output slot(s)
//
// `batch_of` KJTs become the collective's batch_ref input (its lengths,
// K * B entries) with `batch_ref_divisor` = K. Each collective instruction
// refers to a plan-wide CollectiveDescriptor through the `collective` hook,
// so that the k-th collective of every rank's program is the same one.
//
//===----------------------------------------------------------------------===//
#include "plan/PlanKjtOps.h"

#include "dialects/ember/EmberOps.h"
#include "kernel_contract/kernel_contract.h"

namespace kn = ::ember::contract::kernel_names;

namespace mlir::ember::plan_emitter {
namespace {

pb::DataType dtypeOf(Type t) { return *PlanProgramBuilder::toPlanDType(t); }

DimInfo staticDim(int64_t size) {
  DimInfo d;
  d.size = size;
  return d;
}

} // namespace

ArrayRef<OpLowering<PlanKjtLowering::Method>>
PlanKjtLowering::collectiveLowerings() {
  using P = PlanKjtLowering;
  static const OpLowering<Method> table[] = {
      {KJTFromBagsOp::getOperationName(), &P::emitFromBags},
      // Its sizes travel inside kjt_all_to_all; only the tensors phase
      // reads the splits, and it does not take them as an input.
      {KJTAllToAllSplitsOp::getOperationName(), &P::emitNothing},
      {KJTAllToAllTensorsOp::getOperationName(), &P::emitKjtAllToAll},
      {PooledAllToAllOp::getOperationName(), &P::emitPooledCollective},
      {ReduceScatterOp::getOperationName(), &P::emitPooledCollective},
      {AllGatherOp::getOperationName(), &P::emitGatherOrReduce},
      {AllReduceOp::getOperationName(), &P::emitGatherOrReduce},
      {WaitOp::getOperationName(), &P::emitWait},
  };
  return table;
}

LogicalResult PlanKjtLowering::emitFromBags(Operation *op) {
  auto fromBags = cast<KJTFromBagsOp>(op);
  auto type = cast<KeyedJaggedTensorType>(fromBags.getResult().getType());
  std::string name = hooks_.location(op);
  size_t numFeatures = fromBags.getValues().size();
  SmallVector<int> inputs;
  for (size_t f = 0; f < numFeatures; ++f) {
    for (Value v : {fromBags.getValues()[f], fromBags.getOffsets()[f]}) {
      FailureOr<int> slot = hooks_.operandSlot(op, v);
      if (failed(slot))
        return failure();
      inputs.push_back(*slot);
    }
    if (type.isWeighted()) {
      FailureOr<int> slot = hooks_.operandSlot(op, fromBags.getWeights()[f]);
      if (failed(slot))
        return failure();
      inputs.push_back(*slot);
    } else {
      inputs.push_back(-1);
    }
  }
  // The batch: the offsets count of a feature without include_last_offset
  // (B), else a static count of one with it (B + 1); unknown otherwise.
  DimInfo batch;
  for (size_t f = 0; f < numFeatures && batch.symbol.empty() && !batch.size;
       ++f)
    if (const DimList *dims = builder_.lookupDims(fromBags.getOffsets()[f])) {
      const DimInfo &count = dims->front();
      if (!fromBags.getIncludeLastOffset()[f])
        batch = count;
      else if (!count.isSymbolic() && count.size > 0)
        batch = staticDim(count.size - 1);
    }
  KjtSlotRefs out =
      addKjtSlots(fromBags.getResult(), name, dtypeOf(type.getValueType()),
                  dtypeOf(type.getLengthType()), type.isWeighted(),
                  static_cast<int64_t>(numFeatures), batch);
  pb::Instruction *instr = builder_.addInstruction(kn::kKjtFromBags, name);
  for (int slot : inputs)
    instr->add_inputs(slot);
  instr->add_outputs(out.values);
  instr->add_outputs(out.lengths);
  if (out.weights >= 0)
    instr->add_outputs(out.weights);
  SmallVector<int64_t> includeLast;
  for (bool b : fromBags.getIncludeLastOffset())
    includeLast.push_back(b ? 1 : 0);
  addIntsAttr(instr, "include_last_offset", includeLast);
  addStringAttr(instr, "lengths_dtype",
                type.getLengthType().isInteger(32) ? "int32" : "int64");
  if (std::optional<ArrayRef<int64_t>> rows = fromBags.getNumRows())
    addIntsAttr(instr, "num_rows", *rows);
  if (auto names = op->getAttrOfType<ArrayAttr>("ember.feature_names");
      names && names.size() == numFeatures) {
    pb::Attribute *attr = instr->add_attrs();
    attr->set_name("feature_names");
    for (Attribute name : names)
      if (auto s = dyn_cast<StringAttr>(name))
        attr->mutable_strings()->add_values(s.getValue().str());
  }
  return success();
}

LogicalResult PlanKjtLowering::emitKjtAllToAll(Operation *op) {
  auto a2a = cast<KJTAllToAllTensorsOp>(op);
  if (a2a.getBatchSizePerRank())
    return op->emitError("'ember.kjt_all_to_all.tensors' with "
                         "batch_size_per_rank is not supported by the plan "
                         "emitter (the runtime exchanges batch sizes itself)");
  FailureOr<const KjtSlotRefs *> in = kjtOperand(op, a2a.getInput());
  if (failed(in))
    return failure();
  const KjtSlotRefs input = **in;
  auto awaitable = cast<AwaitableType>(a2a.getResult().getType());
  auto type = cast<KeyedJaggedTensorType>(awaitable.getValueType());
  if (type.isVariableBatch())
    return op->emitError("variable-batch KJTs cannot be sent yet");
  FailureOr<int> collective =
      hooks_.collective(op, pb::CollectiveDescriptor::KJT_ALL_TO_ALL,
                        a2a.getGroup().getRankList());
  if (failed(collective))
    return failure();
  std::string name = hooks_.location(op);
  // The received KJT holds every sender's bags: its batch is known at run
  // time only.
  KjtSlotRefs out = addKjtSlots(
      a2a.getResult(), name, dtypeOf(type.getValueType()),
      dtypeOf(type.getLengthType()), type.isWeighted(), type.getNumKeys(), {});
  pb::Instruction *instr = builder_.addInstruction(kn::kKjtAllToAll, name);
  instr->add_inputs(input.lengths);
  instr->add_inputs(input.values);
  instr->add_inputs(input.weights);
  instr->add_outputs(out.lengths);
  instr->add_outputs(out.values);
  if (out.weights >= 0)
    instr->add_outputs(out.weights);
  instr->set_collective(*collective + 1);
  addIntsAttr(instr, "key_splits", a2a.getKeySplits());
  return success();
}

LogicalResult PlanKjtLowering::emitPooledCollective(Operation *op) {
  auto pooled = dyn_cast<PooledAllToAllOp>(op);
  auto scatter = dyn_cast<ReduceScatterOp>(op);
  Value input = pooled ? pooled.getInput() : scatter.getInput();
  Value batchOf = pooled ? pooled.getBatchOf() : scatter.getBatchOf();
  GroupAttr group = pooled ? pooled.getGroup() : scatter.getGroup();
  Value result = op->getResult(0);
  std::string what = "'" + op->getName().getStringRef().str() + "'";
  if (!batchOf)
    return op->emitError() << what
                           << " without batch_of is not supported by the plan "
                              "emitter (the partitioning pass always sets it)";
  // The codec (ember-set-comm-codec) becomes the kernel's comm_dtype.
  std::optional<CommCodec> codec =
      pooled ? pooled.getCodec() : scatter.getCodec();
  const char *commDType = nullptr;
  if (codec == CommCodec::fp16)
    commDType = "float16";
  else if (codec == CommCodec::bf16)
    commDType = "bfloat16";
  else if (codec && *codec != CommCodec::none)
    return op->emitError() << what << " with codec "
                           << stringifyCommCodec(*codec)
                           << ": the runtime has fp16 and bf16 codecs only";
  if (scatter && scatter.getReduction() != ReduceKind::sum &&
      scatter.getReduction() != ReduceKind::max)
    return op->emitError() << what << " supports sum and max reductions";
  auto inputType = cast<RankedTensorType>(input.getType());
  if (!inputType.getElementType().isF32())
    return op->emitError() << what << " carries f32 payloads only, not "
                           << inputType.getElementType();
  FailureOr<const KjtSlotRefs *> ref = kjtOperand(op, batchOf);
  if (failed(ref))
    return failure();
  const KjtSlotRefs batchRef = **ref;
  FailureOr<int> x = hooks_.operandSlot(op, input);
  if (failed(x))
    return failure();
  FailureOr<int> collective =
      hooks_.collective(op,
                        pooled ? pb::CollectiveDescriptor::ALL_TO_ALL
                               : pb::CollectiveDescriptor::REDUCE_SCATTER,
                        group.getRankList());
  if (failed(collective))
    return failure();

  // [B_me, columns]: this rank's batch is the sent KJT's.
  auto payload = cast<RankedTensorType>(
      cast<AwaitableType>(result.getType()).getValueType());
  DimList dims = {batchRef.batch.isSymbolic() || batchRef.batch.size > 0
                      ? batchRef.batch
                      : freshDim()};
  for (int64_t d = 1; d < payload.getRank(); ++d) {
    if (payload.isDynamicDim(d))
      return op->emitError()
             << what << " needs static trailing dims, got " << payload;
    dims.push_back(staticDim(payload.getDimSize(d)));
  }
  std::string name = hooks_.location(op);
  SmallVector<std::pair<DimInfo, int64_t>> withFactors;
  for (const DimInfo &d : dims)
    withFactors.push_back({d, 1});
  int out = addSlot(name, pb::FLOAT32, withFactors);
  awaited_[result] = {out, dims};

  pb::Instruction *instr = builder_.addInstruction(
      pooled ? kn::kPooledAllToAll : kn::kReduceScatter, name);
  instr->add_inputs(*x);
  instr->add_inputs(batchRef.lengths);
  instr->add_outputs(out);
  instr->set_collective(*collective + 1);
  addIntAttr(instr, "batch_ref_divisor", batchRef.numKeys);
  if (pooled) {
    addIntsAttr(instr, "dim_per_rank", pooled.getDimPerRank());
    // The received columns' order (absent: the wire order).
    if (pooled.permutesColumns()) {
      addIntsAttr(instr, "segment_dims", *pooled.getSegmentDims());
      addIntsAttr(instr, "segment_columns", *pooled.getSegmentColumns());
    }
  } else
    addStringAttr(instr, "reduce",
                  scatter.getReduction() == ReduceKind::max ? "max" : "sum");
  if (commDType)
    addStringAttr(instr, "comm_dtype", commDType);
  return success();
}

/// all_gather (rows of every position, in group order) and all_reduce
/// (sum or max; the kernel's `reduce`) of a dense tensor.
LogicalResult PlanKjtLowering::emitGatherOrReduce(Operation *op) {
  auto gather = dyn_cast<AllGatherOp>(op);
  auto reduce = dyn_cast<AllReduceOp>(op);
  Value input = op->getOperand(0);
  std::string what = "'" + op->getName().getStringRef().str() + "'";
  std::optional<CommCodec> codec =
      gather ? gather.getCodec() : reduce.getCodec();
  const char *commDType = nullptr;
  if (codec == CommCodec::fp16)
    commDType = "float16";
  else if (codec == CommCodec::bf16)
    commDType = "bfloat16";
  else if (codec && *codec != CommCodec::none)
    return op->emitError() << what << " with codec "
                           << stringifyCommCodec(*codec)
                           << ": the runtime has fp16 and bf16 codecs only";
  if (gather && commDType)
    return op->emitError() << what << " carries its payload as it is (no "
                                      "codec in the runtime's all_gather)";
  if (reduce && reduce.getReduction() != ReduceKind::sum &&
      reduce.getReduction() != ReduceKind::max)
    return op->emitError() << what << " supports sum and max reductions";
  auto inputType = cast<RankedTensorType>(input.getType());
  std::optional<pb::DataType> dtype =
      PlanProgramBuilder::toPlanDType(inputType.getElementType());
  if (!dtype || (reduce && !inputType.getElementType().isF32()))
    return op->emitError() << what << " of " << inputType.getElementType()
                           << " is not supported by the plan emitter";
  FailureOr<int> x = hooks_.operandSlot(op, input);
  if (failed(x))
    return failure();
  GroupAttr group = gather ? gather.getGroup() : reduce.getGroup();
  FailureOr<int> collective = hooks_.collective(
      op,
      gather ? pb::CollectiveDescriptor::ALL_GATHER
             : pb::CollectiveDescriptor::ALL_REDUCE,
      group.getRankList());
  if (failed(collective))
    return failure();
  // all_reduce keeps x's dims; all_gather's rows are every position's.
  DimList dims;
  if (const DimList *in = builder_.lookupDims(input))
    dims = *in;
  else
    for (int64_t d = 0; d < inputType.getRank(); ++d)
      dims.push_back(inputType.isDynamicDim(d)
                         ? freshDim()
                         : staticDim(inputType.getDimSize(d)));
  if (gather && !dims.empty())
    dims.front() = freshDim();
  std::string name = hooks_.location(op);
  SmallVector<std::pair<DimInfo, int64_t>> withFactors;
  for (const DimInfo &d : dims)
    withFactors.push_back({d, 1});
  int out = addSlot(name, *dtype, withFactors);
  awaited_[op->getResult(0)] = {out, dims};
  pb::Instruction *instr = builder_.addInstruction(
      gather ? kn::kAllGather : kn::kAllReduce, name);
  instr->add_inputs(*x);
  instr->add_outputs(out);
  instr->set_collective(*collective + 1);
  if (reduce)
    addStringAttr(instr, "reduce",
                  reduce.getReduction() == ReduceKind::max ? "max" : "sum");
  if (commDType)
    addStringAttr(instr, "comm_dtype", commDType);
  return success();
}

LogicalResult PlanKjtLowering::emitWait(Operation *op) {
  auto wait = cast<WaitOp>(op);
  Value awaitable = wait.getAwaitable();
  if (awaitable.getDefiningOp<KJTAllToAllSplitsOp>())
    return success(); // read only by the tensors phase (see above)
  if (const KjtSlotRefs *kjt = lookupKjt(awaitable)) {
    kjts_[wait.getResult()] = *kjt;
    return success();
  }
  auto it = awaited_.find(awaitable);
  if (it == awaited_.end())
    return op->emitError("'ember.wait' of a value the plan emitter did not "
                         "produce (only the partitioning pass's collectives "
                         "are supported)");
  builder_.bindSlot(wait.getResult(), it->second.first, it->second.second);
  return success();
}

} // namespace mlir::ember::plan_emitter
