//===- PlanEmitter.cpp - Value-semantics IR -> Ember plan -----------------===//
//
// One walk over the function body: every op either becomes one instruction
// (kernel contracts in docs/kernels-*.md), is recorded as a constant (written
// to the weights file when an instruction first reads it), is a shape-only
// op whose information the reshapes take from their static result types, or
// is an error. Files are written only after the whole function translated.
//
//===----------------------------------------------------------------------===//
#include "plan/PlanEmitter.h"
#include "plan/PlanConstantFolding.h"
#include "plan/PlanLinearFusion.h"
#include "plan/PlanProgramBuilder.h"
#include "plan/plan_writer.h"

#include "ember/EmberOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::ember::plan_emitter {
namespace {

/// "node name" for NameLoc (ONNX node), else the printed location.
std::string locationName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(inner))
        return name.getName().str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

class FunctionEmitter {
public:
  FunctionEmitter(func::FuncOp func, pb::Plan *plan)
      : func_(func), plan_(plan), builder_(plan->add_programs()) {}

  LogicalResult run();
  std::vector<PendingConstant> &constants() { return builder_.constants(); }

private:
  LogicalResult emitSignatureInputs();
  LogicalResult emitOp(Operation *op);
  LogicalResult emitReturn(func::ReturnOp op);

  /// The slot of operand `v` of `op`, or an error at `op`.
  FailureOr<int> operandSlot(Operation *op, Value v);
  /// Dims of a result whose dynamic dims come from `sources[d]` (a symbol,
  /// or empty for a fresh one).
  DimList resultDims(Value result, ArrayRef<std::string> symbolPerDim);
  std::string symbolOf(Value v, int64_t dim);
  /// Defines the result slot and returns its index, or an error at op.
  FailureOr<int> defineResult(Operation *op, Value result,
                              ArrayRef<std::string> symbolPerDim);

  LogicalResult emitSimple(Operation *op, const std::string &kernel,
                           ValueRange inputs,
                           ArrayRef<std::string> symbolPerDim,
                           pb::Instruction **out = nullptr);
  LogicalResult emitElementwise(Operation *op, const std::string &kernel);
  LogicalResult emitReshape(Operation *op, Value input, Value result);
  LogicalResult emitMatMul(tosa::MatMulOp op);
  LogicalResult emitClamp(tosa::ClampOp op);
  LogicalResult emitConcat(tosa::ConcatOp op);
  LogicalResult emitTranspose(tosa::TransposeOp op);
  LogicalResult emitEmbeddingBag(EmbeddingBagOp op);
  LogicalResult recordConstant(Operation *op, Attribute value);
  /// Folds a transpose/reshape of a constant into a new constant; true when
  /// it did (nothing is emitted for the op then).
  bool foldConstantOp(Operation *op);

  /// One `linear` for a chain found by findLinearChains, at its last op.
  LogicalResult emitLinear(Operation *anchor, LinearChain chain);

  std::string slotName(Operation *op, unsigned resultIndex) {
    std::string name = locationName(op->getLoc());
    if (op->getNumResults() > 1)
      name += "#" + std::to_string(resultIndex);
    return name;
  }

  func::FuncOp func_;
  pb::Plan *plan_;
  PlanProgramBuilder builder_;
  /// ember.table.from_tensor results -> their weight tensors.
  llvm::DenseMap<Value, Value> tableWeights_;
  LinearChains linear_;
};

LogicalResult FunctionEmitter::run() {
  if (!func_.getBody().hasOneBlock())
    return func_.emitError("the plan emitter needs a function with one block");
  if (failed(emitSignatureInputs()))
    return failure();
  linear_ = findLinearChains(func_.getBody().front());
  for (Operation &op : func_.getBody().front()) {
    if (linear_.fusedOps.count(&op))
      continue;
    auto anchor = linear_.anchors.find(&op);
    LogicalResult result = anchor != linear_.anchors.end()
                               ? emitLinear(&op, anchor->second)
                               : emitOp(&op);
    if (failed(result))
      return failure();
  }
  return success();
}

LogicalResult FunctionEmitter::emitSignatureInputs() {
  pb::RankProgram *program = builder_.program();
  // Reserve the ONNX dim params first so fresh symbols never collide.
  for (unsigned i = 0; i < func_.getNumArguments(); ++i)
    if (auto params = func_.getArgAttrOfType<ArrayAttr>(i, "onnx.dim_params"))
      for (Attribute p : params)
        if (auto s = dyn_cast<StringAttr>(p); s && !s.getValue().empty())
          builder_.reserveSymbol(s.getValue().str());

  for (unsigned i = 0; i < func_.getNumArguments(); ++i) {
    BlockArgument arg = func_.getArgument(i);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !PlanProgramBuilder::toPlanDType(type.getElementType()))
      return emitError(arg.getLoc())
             << "argument " << i << " has type " << arg.getType()
             << ", which a plan input cannot hold (ranked tensors of "
                "f32/f16/bf16/f64/i8/ui8/i32/i64/i1 only)";
    std::string name = "arg" + std::to_string(i);
    if (auto n = func_.getArgAttrOfType<StringAttr>(i, "onnx.name"))
      name = n.getValue().str();
    auto params = func_.getArgAttrOfType<ArrayAttr>(i, "onnx.dim_params");
    DimList dims;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      DimInfo info;
      if (!type.isDynamicDim(d)) {
        info.size = type.getDimSize(d);
      } else {
        StringAttr param;
        if (params && d < static_cast<int64_t>(params.size()))
          param = dyn_cast<StringAttr>(params[d]);
        info.symbol = param && !param.getValue().empty()
                          ? param.getValue().str()
                          : builder_.freshSymbol();
      }
      dims.push_back(info);
    }
    int slot = builder_.defineSlot(arg, dims, name);
    if (slot < 0)
      return emitError(arg.getLoc())
             << "cannot define a slot for argument " << i;
    program->add_input_slots(slot);
    pb::TensorSpec *spec = plan_->mutable_signature()->add_inputs();
    spec->set_name(name);
    *spec->mutable_shape() = program->slots(slot).shape();
    spec->set_dtype(program->slots(slot).dtype());
  }
  return success();
}

FailureOr<int> FunctionEmitter::operandSlot(Operation *op, Value v) {
  // Arguments and results already have slots; constants get theirs here.
  std::string name = "constant";
  if (auto result = dyn_cast<OpResult>(v))
    name = slotName(result.getOwner(), result.getResultNumber());
  int slot = builder_.lookupOrMaterialize(v, name);
  if (slot >= 0)
    return slot;
  InFlightDiagnostic diag = op->emitError()
                            << "'" << op->getName()
                            << "': an operand is not a tensor the plan holds";
  if (Operation *def = v.getDefiningOp())
    diag << " (it is produced by '" << def->getName() << "')";
  return failure();
}

std::string FunctionEmitter::symbolOf(Value v, int64_t dim) {
  const DimList *dims = builder_.lookupDims(v);
  if (!dims || dim < 0 || dim >= static_cast<int64_t>(dims->size()))
    return {};
  return (*dims)[dim].symbol;
}

DimList FunctionEmitter::resultDims(Value result,
                                    ArrayRef<std::string> symbolPerDim) {
  auto type = cast<RankedTensorType>(result.getType());
  DimList dims;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    DimInfo info;
    if (!type.isDynamicDim(d)) {
      info.size = type.getDimSize(d);
    } else if (d < static_cast<int64_t>(symbolPerDim.size()) &&
               !symbolPerDim[d].empty()) {
      info.symbol = symbolPerDim[d];
    } else {
      info.symbol = builder_.freshSymbol();
    }
    dims.push_back(info);
  }
  return dims;
}

FailureOr<int> FunctionEmitter::defineResult(Operation *op, Value result,
                                             ArrayRef<std::string> symbols) {
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type || !PlanProgramBuilder::toPlanDType(type.getElementType())) {
    op->emitError() << "'" << op->getName() << "': result type "
                    << result.getType() << " cannot be held by a plan slot";
    return failure();
  }
  int slot =
      builder_.defineSlot(result, resultDims(result, symbols), slotName(op, 0));
  if (slot < 0) {
    op->emitError() << "'" << op->getName() << "': cannot define its slot";
    return failure();
  }
  return slot;
}

LogicalResult FunctionEmitter::emitSimple(Operation *op,
                                          const std::string &kernel,
                                          ValueRange inputs,
                                          ArrayRef<std::string> symbols,
                                          pb::Instruction **out) {
  SmallVector<int> inputSlots;
  for (Value v : inputs) {
    FailureOr<int> slot = operandSlot(op, v);
    if (failed(slot))
      return failure();
    inputSlots.push_back(*slot);
  }
  FailureOr<int> result = defineResult(op, op->getResult(0), symbols);
  if (failed(result))
    return failure();
  pb::Instruction *instr =
      builder_.addInstruction(kernel, locationName(op->getLoc()));
  for (int s : inputSlots)
    instr->add_inputs(s);
  instr->add_outputs(*result);
  if (out)
    *out = instr;
  return success();
}

/// Elementwise ops of equal rank: a dynamic result dim takes the symbol of
/// the first operand whose dim is dynamic (the others are 1 or equal).
LogicalResult FunctionEmitter::emitElementwise(Operation *op,
                                               const std::string &kernel) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<std::string> symbols(type.getRank());
  for (int64_t d = 0; d < type.getRank(); ++d)
    for (Value in : op->getOperands()) {
      auto inType = dyn_cast<RankedTensorType>(in.getType());
      if (!inType || inType.getRank() != type.getRank())
        continue;
      std::string s = symbolOf(in, d);
      if (!s.empty()) {
        symbols[d] = s;
        break;
      }
    }
  return emitSimple(op, kernel, op->getOperands(), symbols);
}

LogicalResult FunctionEmitter::emitReshape(Operation *op, Value input,
                                           Value result) {
  auto inType = dyn_cast<RankedTensorType>(input.getType());
  auto outType = dyn_cast<RankedTensorType>(result.getType());
  if (!inType || !outType)
    return op->emitError() << "'" << op->getName()
                           << "': needs ranked tensor types";
  SmallVector<int64_t> shape;
  int dynamicOut = 0;
  for (int64_t d : outType.getShape()) {
    if (ShapedType::isDynamic(d)) {
      ++dynamicOut;
      shape.push_back(-1);
    } else if (d == 0) {
      // The reshape kernel reads 0 as "copy the input's dim" (ONNX).
      return op->emitError() << "'" << op->getName()
                             << "': a reshape to a static size-0 dim is not "
                                "supported by the plan emitter";
    } else {
      shape.push_back(d);
    }
  }
  if (dynamicOut > 1)
    return op->emitError() << "'" << op->getName() << "': reshape to "
                           << result.getType()
                           << " has more than one dynamic dim (not supported "
                              "by the plan emitter yet)";
  // The one dynamic dim keeps the input's symbol when the static parts of
  // both shapes have the same number of elements.
  SmallVector<std::string> symbols(outType.getRank());
  if (dynamicOut == 1 && inType.getNumDynamicDims() == 1) {
    int64_t inStatic = 1, outStatic = 1;
    std::string inSymbol;
    for (int64_t d = 0; d < inType.getRank(); ++d) {
      if (inType.isDynamicDim(d))
        inSymbol = symbolOf(input, d);
      else
        inStatic *= inType.getDimSize(d);
    }
    for (int64_t d = 0; d < outType.getRank(); ++d)
      if (!outType.isDynamicDim(d))
        outStatic *= outType.getDimSize(d);
    if (inStatic == outStatic)
      for (int64_t d = 0; d < outType.getRank(); ++d)
        if (outType.isDynamicDim(d))
          symbols[d] = inSymbol;
  }
  pb::Instruction *instr = nullptr;
  if (failed(emitSimple(op, "reshape", ValueRange{input}, symbols, &instr)))
    return failure();
  addIntsAttr(instr, "shape", shape);
  return success();
}

LogicalResult FunctionEmitter::emitMatMul(tosa::MatMulOp op) {
  if (!isZeroConstant(op.getAZp()) || !isZeroConstant(op.getBZp()))
    return op.emitError("'tosa.matmul' with non-zero (or non-constant) zero "
                        "points is not supported by the plan emitter");
  // [B, M, K] x [B, K, N] -> [B, M, N]
  SmallVector<std::string> symbols = {
      symbolOf(op.getA(), 0), symbolOf(op.getA(), 1), symbolOf(op.getB(), 2)};
  return emitSimple(op, "matmul", ValueRange{op.getA(), op.getB()}, symbols);
}

LogicalResult FunctionEmitter::emitClamp(tosa::ClampOp op) {
  if (!isReluClamp(op))
    return op.emitError("'tosa.clamp' is supported only as ReLU (min 0, max "
                        "the largest float); this clamp has other bounds");
  return emitElementwise(op, "relu");
}

LogicalResult FunctionEmitter::emitConcat(tosa::ConcatOp op) {
  auto type = cast<RankedTensorType>(op.getResult().getType());
  int64_t axis = op.getAxis();
  SmallVector<std::string> symbols(type.getRank());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == axis)
      continue; // a dynamic concatenated dim gets a fresh symbol
    for (Value in : op.getInput1()) {
      std::string s = symbolOf(in, d);
      if (!s.empty()) {
        symbols[d] = s;
        break;
      }
    }
  }
  pb::Instruction *instr = nullptr;
  if (failed(emitSimple(op, "concat", op.getInput1(), symbols, &instr)))
    return failure();
  addIntAttr(instr, "axis", axis);
  return success();
}

LogicalResult FunctionEmitter::emitTranspose(tosa::TransposeOp op) {
  SmallVector<int64_t> perm;
  SmallVector<std::string> symbols;
  for (int32_t p : op.getPerms()) {
    perm.push_back(p);
    symbols.push_back(symbolOf(op.getInput1(), p));
  }
  pb::Instruction *instr = nullptr;
  if (failed(emitSimple(op, "transpose", ValueRange{op.getInput1()}, symbols,
                        &instr)))
    return failure();
  addIntsAttr(instr, "perm", perm);
  return success();
}

LogicalResult FunctionEmitter::emitEmbeddingBag(EmbeddingBagOp op) {
  auto it = tableWeights_.find(op.getTable());
  if (it == tableWeights_.end())
    return op.emitError("'ember.embedding_bag': the table must come from "
                        "'ember.table.from_tensor' of a constant");
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  if (!resultType.getElementType().isF32())
    return op.emitError("'ember.embedding_bag': the runtime kernel returns "
                        "f32, but the op's result is ")
           << resultType;
  SmallVector<Value> inputs = {it->second, op.getIndices(), op.getOffsets()};
  SmallVector<int> slots;
  for (Value v : inputs) {
    FailureOr<int> s = operandSlot(op, v);
    if (failed(s))
      return failure();
    slots.push_back(*s);
  }
  int weightsSlot = -1;
  if (Value w = op.getPerSampleWeights()) {
    FailureOr<int> s = operandSlot(op, w);
    if (failed(s))
      return failure();
    weightsSlot = *s;
  }
  bool includeLast = op.getIncludeLastOffset();
  SmallVector<std::string> symbols(2);
  if (!includeLast)
    symbols[0] = symbolOf(op.getOffsets(), 0);
  FailureOr<int> result = defineResult(op, op.getResult(), symbols);
  if (failed(result))
    return failure();
  pb::Instruction *instr =
      builder_.addInstruction("embedding_bag", locationName(op.getLoc()));
  for (int s : slots)
    instr->add_inputs(s);
  instr->add_inputs(weightsSlot);
  instr->add_outputs(*result);
  addStringAttr(instr, "pooling", stringifyPoolingMode(op.getPooling()).str());
  addIntAttr(instr, "include_last_offset", includeLast ? 1 : 0);
  if (IntegerAttr pad = op.getPaddingIdxAttr())
    addIntAttr(instr, "padding_idx", pad.getInt());
  return success();
}

LogicalResult FunctionEmitter::recordConstant(Operation *op, Attribute value) {
  Value result = op->getResult(0);
  if (!isa<RankedTensorType>(result.getType()))
    return success(); // index/shape constants: read through result types
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || !builder_.addPendingConstant(result, elements))
    return op->emitError() << "'" << op->getName() << "': constant of type "
                           << result.getType()
                           << " cannot be written to a weights file (dense "
                              "numeric data only)";
  return success();
}

LogicalResult FunctionEmitter::emitOp(Operation *op) {
  if (foldConstantOp(op))
    return success();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<arith::ConstantOp>(
          [&](auto c) { return recordConstant(op, c.getValue()); })
      .Case<tosa::ConstOp>(
          [&](auto c) { return recordConstant(op, c.getValues()); })
      // Shape-only values: reshapes take their shapes from result types.
      .Case<tosa::ConstShapeOp, tensor::DimOp>([&](auto) { return success(); })
      .Case<TableFromTensorOp>([&](TableFromTensorOp t) -> LogicalResult {
        auto table = cast<TableType>(t.getResult().getType());
        TableFormat format = table.getFormat();
        if (format != TableFormat::f32 && format != TableFormat::f16 &&
            format != TableFormat::bf16)
          return t.emitError("'ember.table.from_tensor': only float tables "
                             "are supported by the plan emitter yet");
        if (!builder_.isPendingConstant(t.getWeights()))
          return t.emitError("'ember.table.from_tensor': the weights must be "
                             "a constant");
        tableWeights_[t.getResult()] = t.getWeights();
        return success();
      })
      .Case<EmbeddingBagOp>([&](auto e) { return emitEmbeddingBag(e); })
      .Case<tosa::MatMulOp>([&](auto m) { return emitMatMul(m); })
      .Case<tosa::AddOp>([&](auto) { return emitElementwise(op, "add"); })
      .Case<tosa::SubOp>([&](auto) { return emitElementwise(op, "sub"); })
      .Case<tosa::SigmoidOp>(
          [&](auto) { return emitElementwise(op, "sigmoid"); })
      .Case<tosa::TanhOp>([&](auto) { return emitElementwise(op, "tanh"); })
      .Case<tosa::ClampOp>([&](auto c) { return emitClamp(c); })
      .Case<tosa::ConcatOp>([&](auto c) { return emitConcat(c); })
      .Case<tosa::TransposeOp>([&](auto t) { return emitTranspose(t); })
      .Case<tosa::ReshapeOp>([&](tosa::ReshapeOp r) {
        return emitReshape(op, r.getInput1(), r.getResult());
      })
      .Case<tensor::ExpandShapeOp>([&](tensor::ExpandShapeOp e) {
        return emitReshape(op, e.getSrc(), e.getResult());
      })
      .Case<tensor::CollapseShapeOp>([&](tensor::CollapseShapeOp c) {
        return emitReshape(op, c.getSrc(), c.getResult());
      })
      .Case<tensor::CastOp>(
          [&](tensor::CastOp c) { return emitElementwise(op, "identity"); })
      .Case<func::ReturnOp>([&](auto r) { return emitReturn(r); })
      .Default([&](Operation *other) {
        return other->emitError()
               << "the plan emitter does not support '" << other->getName()
               << "' (supported: ember.embedding_bag, tosa.matmul/add/sub/"
                  "clamp(ReLU)/sigmoid/tanh/transpose/reshape/concat, "
                  "tensor.expand_shape/collapse_shape/cast, constants)";
      });
}

bool FunctionEmitter::foldConstantOp(Operation *op) {
  if (!isa<tosa::TransposeOp, tosa::ReshapeOp, tensor::ExpandShapeOp,
           tensor::CollapseShapeOp>(op))
    return false;
  ElementsAttr input = builder_.constantAttr(op->getOperand(0));
  auto dense = dyn_cast_or_null<DenseElementsAttr>(input);
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!dense || !resultType || !resultType.hasStaticShape())
    return false;
  DenseElementsAttr folded;
  if (auto t = dyn_cast<tosa::TransposeOp>(op))
    folded = transposeConstant(dense, t.getPerms());
  else
    folded = reshapeConstant(dense, resultType);
  if (!folded || folded.getType() != resultType)
    return false;
  return builder_.addPendingConstant(op->getResult(0), folded);
}

LogicalResult FunctionEmitter::emitLinear(Operation *anchor,
                                          LinearChain chain) {
  auto weights = dyn_cast_or_null<DenseElementsAttr>(
      builder_.constantAttr(chain.matmul.getB()));
  auto bType = cast<RankedTensorType>(chain.matmul.getB().getType());
  auto weight2d = RankedTensorType::get(
      {bType.getDimSize(1), bType.getDimSize(2)}, bType.getElementType());
  DenseElementsAttr weight =
      weights ? reshapeConstant(weights, weight2d) : DenseElementsAttr();
  if (!weight)
    return anchor->emitError("linear layer: the weight is not a constant the "
                             "plan emitter can fold");
  FailureOr<int> x = operandSlot(anchor, chain.x);
  if (failed(x))
    return failure();
  std::string name = locationName(chain.matmul.getLoc());
  int weightSlot = builder_.materializeConstant(weight, name + ".weight");
  int biasSlot = -1;
  if (chain.bias) {
    auto bias =
        dyn_cast_or_null<DenseElementsAttr>(builder_.constantAttr(chain.bias));
    auto biasType = RankedTensorType::get({weight2d.getDimSize(1)},
                                          weight2d.getElementType());
    DenseElementsAttr bias1d =
        bias ? reshapeConstant(bias, biasType) : DenseElementsAttr();
    if (!bias1d)
      return anchor->emitError("linear layer: the bias is not a constant the "
                               "plan emitter can fold");
    biasSlot = builder_.materializeConstant(bias1d, name + ".bias");
  }
  if (weightSlot < 0)
    return anchor->emitError("linear layer: cannot write the weight");
  SmallVector<std::string> symbols = {symbolOf(chain.x, 0), ""};
  FailureOr<int> result = defineResult(anchor, anchor->getResult(0), symbols);
  if (failed(result))
    return failure();
  pb::Instruction *instr = builder_.addInstruction("linear", name);
  instr->add_inputs(*x);
  instr->add_inputs(weightSlot);
  if (biasSlot >= 0)
    instr->add_inputs(biasSlot);
  instr->add_outputs(*result);
  addIntAttr(instr, "transpose_weight", 0);
  addStringAttr(instr, "activation", chain.activation);
  return success();
}

LogicalResult FunctionEmitter::emitReturn(func::ReturnOp op) {
  pb::RankProgram *program = builder_.program();
  for (unsigned i = 0; i < op.getNumOperands(); ++i) {
    Value v = op.getOperand(i);
    std::string name = "output" + std::to_string(i);
    if (auto n = func_.getResultAttrOfType<StringAttr>(i, "onnx.name"))
      name = n.getValue().str();
    FailureOr<int> slot = operandSlot(op, v);
    if (failed(slot))
      return failure();
    // An output that is an input or a constant gets its own slot.
    bool defined = false;
    for (const pb::Instruction &instr : program->instructions())
      for (int out : instr.outputs())
        defined |= out == *slot;
    int outSlot = *slot;
    if (!defined) {
      // An output that is an input or a constant gets its own slot (an
      // identity instruction, which aliases without copying).
      const DimList *dims = builder_.lookupDims(v);
      outSlot = builder_.defineExtraSlot(v, dims ? *dims : DimList(), name);
      if (outSlot < 0)
        return op.emitError() << "cannot define the slot of result " << i;
      pb::Instruction *instr =
          builder_.addInstruction("identity", locationName(op.getLoc()));
      instr->add_inputs(*slot);
      instr->add_outputs(outSlot);
    }
    program->add_output_slots(outSlot);
    pb::TensorSpec *spec = plan_->mutable_signature()->add_outputs();
    spec->set_name(name);
    spec->set_dtype(program->slots(outSlot).dtype());
    *spec->mutable_shape() = program->slots(outSlot).shape();
  }
  return success();
}

std::string stemOf(llvm::StringRef planPath) {
  llvm::StringRef file = llvm::sys::path::filename(planPath);
  for (llvm::StringRef suffix :
       {".plan.txt", ".plan.pbtxt", ".plan", ".txt", ".pbtxt"})
    if (file.ends_with(suffix) && file.size() > suffix.size())
      return file.drop_back(suffix.size()).str();
  return file.str();
}

} // namespace

std::string weightsFileNameFor(llvm::StringRef planPath) {
  return stemOf(planPath) + ".rank0.weights";
}

LogicalResult writePlan(ModuleOp module, llvm::StringRef planPath,
                        const PlanEmitterOptions &options) {
  auto func = module.lookupSymbol<func::FuncOp>(options.functionName);
  if (!func)
    return module.emitError() << "the module has no function '"
                              << options.functionName << "' to emit";
  pb::Plan plan;
  plan.set_producer(options.producer);
  plan.set_world_size(1);
  FunctionEmitter emitter(func, &plan);
  if (failed(emitter.run()))
    return failure();

  // Everything translated: write the weights file, then the plan.
  pb::RankProgram *program = plan.mutable_programs(0);
  program->set_rank(0);
  llvm::SmallString<256> dir(planPath);
  llvm::sys::path::remove_filename(dir);
  std::string weightsName = weightsFileNameFor(planPath);
  llvm::SmallString<256> weightsPath(dir);
  llvm::sys::path::append(weightsPath, weightsName);
  std::string error;
  std::vector<PendingConstant> &constants = emitter.constants();
  if (!constants.empty()) {
    ::ember::WeightsFileWriter weights;
    if (!weights.open(std::string(weightsPath), &error))
      return module.emitError()
             << "cannot write '" << weightsPath << "': " << error;
    for (const PendingConstant &c : constants) {
      pb::Constant *pc = program->add_constants();
      pc->set_slot(c.slot);
      pc->set_file(0);
      pc->set_offset(weights.append(c.bytes.data(), c.bytes.size()));
      pc->set_nbytes(c.bytes.size());
    }
    if (!weights.finish(program->add_weight_files(), weightsName, &error))
      return module.emitError()
             << "cannot write '" << weightsPath << "': " << error;
  }
  if (!::ember::writePlanFile(plan, planPath.str(), &error)) {
    if (!constants.empty())
      llvm::sys::fs::remove(weightsPath);
    return module.emitError() << "cannot write '" << planPath << "': " << error;
  }
  return success();
}

} // namespace mlir::ember::plan_emitter
