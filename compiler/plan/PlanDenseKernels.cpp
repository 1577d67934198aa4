//===- PlanDenseKernels.cpp - Ember dense ops -> their kernels ------------===//
//
// ember.linear, ember.softmax, ember.layer_norm, ember.dcn_cross and
// ember.dot_interaction (dialects/ember/EmberDenseOps.td; made by the
// ember-raise-dense-ops pass) each become one instruction of the kernel of
// the same name, operands and attributes one to one (docs/kernels-dense.md).
// Constant weights, scales and biases are written under the instruction's
// name (`<name>.weight`, `.bias`, ...).
//
//===----------------------------------------------------------------------===//
#include "plan/PlanConstantFolding.h"
#include "plan/PlanEmitterContext.h"

#include "dialects/ember/EmberOps.h"

#include "kernel_contract/kernel_contract.h"

namespace kn = ::ember::contract::kernel_names;

namespace mlir::ember::plan_emitter {
namespace {

/// The plan dims of `x` (for results of its shape).
SmallVector<DimInfo> dimsLike(EmitterContext &ctx, Value x) {
  SmallVector<DimInfo> dims;
  for (int64_t d = 0; d < cast<RankedTensorType>(x.getType()).getRank(); ++d)
    dims.push_back(ctx.dimOf(x, d));
  return dims;
}

/// The slot of operand `v` of `op`: a constant (after the emitter folded
/// the reshapes and transposes of it) is written as `name` in v's own
/// shape; anything else is the tensor the plan holds. -1 after an error.
int weightSlot(EmitterContext &ctx, Operation *op, Value v,
               const std::string &name) {
  auto attr =
      dyn_cast_or_null<DenseElementsAttr>(ctx.builder().constantAttr(v));
  if (!attr) {
    FailureOr<int> slot = ctx.operandSlot(op, v);
    return failed(slot) ? -1 : *slot;
  }
  DenseElementsAttr shaped =
      reshapeConstant(attr, cast<RankedTensorType>(v.getType()));
  int slot = shaped ? ctx.builder().materializeConstant(shaped, name) : -1;
  if (slot < 0)
    op->emitError() << "'" << op->getName() << "': cannot write " << name;
  return slot;
}

/// Appends the slots of operands `values` of `op` to `inputs`; failure
/// after an error.
LogicalResult appendSlots(EmitterContext &ctx, Operation *op, ValueRange values,
                          SmallVectorImpl<int> &inputs) {
  for (Value v : values) {
    FailureOr<int> slot = ctx.operandSlot(op, v);
    if (failed(slot))
      return failure();
    inputs.push_back(*slot);
  }
  return success();
}

/// Appends the weightSlot of `v`, or -1 (the kernel's absent optional
/// input) when `v` is null; failure after an error.
LogicalResult appendWeight(EmitterContext &ctx, Operation *op, Value v,
                           const std::string &name,
                           SmallVectorImpl<int> &inputs) {
  int slot = v ? weightSlot(ctx, op, v, name) : -1;
  if (v && slot < 0)
    return failure();
  inputs.push_back(slot);
  return success();
}

/// One instruction `kernel` named after `op`: `inputs`, op's result with
/// `dims`.
FailureOr<pb::Instruction *> emitKernel(EmitterContext &ctx, Operation *op,
                                        const std::string &kernel,
                                        ArrayRef<int> inputs,
                                        ArrayRef<DimInfo> dims) {
  FailureOr<int> result = ctx.defineResult(op, op->getResult(0), dims);
  if (failed(result))
    return failure();
  pb::Instruction *instr =
      ctx.builder().addInstruction(kernel, ctx.locationOf(op->getLoc()));
  for (int s : inputs)
    instr->add_inputs(s);
  instr->add_outputs(*result);
  return instr;
}

LogicalResult emitLinear(EmitterContext &ctx, LinearOp op) {
  std::string name = ctx.locationOf(op.getLoc());
  SmallVector<int> inputs;
  if (failed(appendSlots(ctx, op, op.getInput(), inputs)) ||
      failed(appendWeight(ctx, op, op.getWeight(), name + ".weight", inputs)) ||
      (op.getBias() &&
       failed(appendWeight(ctx, op, op.getBias(), name + ".bias", inputs))))
    return failure();
  // Leading dims as x's, N static.
  SmallVector<DimInfo> dims = dimsLike(ctx, op.getInput());
  dims.back() = DimInfo();
  FailureOr<pb::Instruction *> instr =
      emitKernel(ctx, op, kn::kLinear, inputs, dims);
  if (failed(instr))
    return failure();
  addIntAttr(*instr, "transpose_weight", op.getTransposeWeight() ? 1 : 0);
  addStringAttr(*instr, "activation", op.getActivation().str());
  return success();
}

LogicalResult emitSoftmax(EmitterContext &ctx, SoftmaxOp op) {
  SmallVector<int> inputs;
  if (failed(appendSlots(ctx, op, op.getInput(), inputs)))
    return failure();
  FailureOr<pb::Instruction *> instr =
      emitKernel(ctx, op, kn::kSoftmax, inputs, dimsLike(ctx, op.getInput()));
  if (failed(instr))
    return failure();
  addIntAttr(*instr, "axis", static_cast<int64_t>(op.getAxis()));
  return success();
}

LogicalResult emitLayerNorm(EmitterContext &ctx, LayerNormOp op) {
  std::string name = ctx.locationOf(op.getLoc());
  SmallVector<int> inputs;
  if (failed(appendSlots(ctx, op, op.getInput(), inputs)) ||
      failed(appendWeight(ctx, op, op.getScale(), name + ".gamma", inputs)) ||
      failed(appendWeight(ctx, op, op.getBias(), name + ".beta", inputs)))
    return failure();
  FailureOr<pb::Instruction *> instr =
      emitKernel(ctx, op, kn::kLayerNorm, inputs, dimsLike(ctx, op.getInput()));
  if (failed(instr))
    return failure();
  addIntAttr(*instr, "axis", static_cast<int64_t>(op.getAxis()));
  pb::Attribute *eps = (*instr)->add_attrs();
  eps->set_name("epsilon");
  eps->set_f(op.getEpsilon().convertToDouble());
  return success();
}

LogicalResult emitDcnCross(EmitterContext &ctx, DcnCrossOp op) {
  std::string name = ctx.locationOf(op.getLoc());
  SmallVector<int> inputs;
  if (failed(appendSlots(ctx, op, {op.getX0(), op.getXl()}, inputs)))
    return failure();
  const char *names[] = {".weight", ".v", ".w"};
  for (auto [i, w] : llvm::enumerate(op.getWeights()))
    if (failed(appendWeight(ctx, op, w,
                            name + names[op.isLowRank() ? i + 1 : 0], inputs)))
      return failure();
  if (failed(appendWeight(ctx, op, op.getBias(), name + ".bias", inputs)))
    return failure();
  FailureOr<pb::Instruction *> instr =
      emitKernel(ctx, op, kn::kDcnCross, inputs, dimsLike(ctx, op.getXl()));
  if (failed(instr))
    return failure();
  addIntAttr(*instr, "low_rank", op.isLowRank() ? 1 : 0);
  return success();
}

LogicalResult emitDotInteraction(EmitterContext &ctx, DotInteractionOp op) {
  SmallVector<int> inputs;
  if (failed(appendSlots(ctx, op, {op.getDense(), op.getSparse()}, inputs)))
    return failure();
  FailureOr<pb::Instruction *> instr =
      emitKernel(ctx, op, kn::kDotInteraction, inputs,
                 {ctx.dimOf(op.getDense(), 0), DimInfo()});
  if (failed(instr))
    return failure();
  addIntAttr(*instr, "num_features", static_cast<int64_t>(op.getNumFeatures()));
  addIntAttr(*instr, "self_interaction", op.getSelfInteraction() ? 1 : 0);
  addStringAttr(*instr, "pair_order", op.getPairOrder().str());
  return success();
}

using DenseKernelLowering = LogicalResult (*)(EmitterContext &, Operation *);

template <typename OpT, LogicalResult (*Emit)(EmitterContext &, OpT)>
LogicalResult lowerAs(EmitterContext &ctx, Operation *op) {
  return Emit(ctx, cast<OpT>(op));
}

const OpLowering<DenseKernelLowering> kDenseKernelLowerings[] = {
    {LinearOp::getOperationName(), lowerAs<LinearOp, emitLinear>},
    {SoftmaxOp::getOperationName(), lowerAs<SoftmaxOp, emitSoftmax>},
    {LayerNormOp::getOperationName(), lowerAs<LayerNormOp, emitLayerNorm>},
    {DcnCrossOp::getOperationName(), lowerAs<DcnCrossOp, emitDcnCross>},
    {DotInteractionOp::getOperationName(),
     lowerAs<DotInteractionOp, emitDotInteraction>},
};

} // namespace

bool isDenseKernelOp(Operation *op) {
  return findLowering<DenseKernelLowering>(kDenseKernelLowerings, op);
}

LogicalResult emitDenseKernelOp(EmitterContext &ctx, Operation *op) {
  const OpLowering<DenseKernelLowering> *row =
      findLowering<DenseKernelLowering>(kDenseKernelLowerings, op);
  if (!row)
    return op->emitError("'") << op->getName() << "' is not an Ember dense op";
  return row->lower(ctx, op);
}

} // namespace mlir::ember::plan_emitter
