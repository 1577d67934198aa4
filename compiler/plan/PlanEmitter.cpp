//===- PlanEmitter.cpp - One function's ops -> one rank program -----------===//
//
// One walk over a function body (FunctionEmitter, PlanFunctionEmitter.h):
// each op is lowered by the row of a lowering table that lists it
// (OpLoweringTable.h): this file's own rows (constants, shape-only ops,
// tables, embedding_bag, matmul, add/sub, activations, concat, transpose,
// reshapes, return), PlanKjtLowering's (KJTs, keyed tensors, jagged tensors,
// collectives), PlanDenseKernels.cpp's (the Ember dense ops) and
// PlanDenseOps.cpp's (tosa/tensor/arith math and data movement). An op no
// row lists is outside the emission contract (EmissionContract.h).
//
//===----------------------------------------------------------------------===//
#include "plan/PlanFunctionEmitter.h"

#include "passes/TosaMatchers.h"
#include "passes/WeightData.h"
#include "plan/PlanConstantFolding.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/raw_ostream.h"

#include "kernel_contract/kernel_contract.h"

namespace kn = ::ember::contract::kernel_names;
namespace mlir::ember::plan_emitter {

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

namespace {

/// True for the scalar integer/index ops of shape computations (their
/// results are read by evaluateShapeScalar, never by a kernel).
bool isShapeScalarOp(Operation *op) {
  // min/max/sub of sizes: slice bounds on run-time dims (read by emitSlice).
  if (!isa<arith::MulIOp, arith::DivUIOp, arith::DivSIOp, arith::IndexCastOp,
           arith::MinSIOp, arith::MaxSIOp, arith::SubIOp>(op))
    return false;
  Type t = op->getResult(0).getType();
  return t.isIndex() || isa<IntegerType>(t);
}

} // namespace

LogicalResult FunctionEmitter::run() {
  if (!func_.getBody().hasOneBlock())
    return func_.emitError("the plan emitter needs a function with one block");
  if (failed(emitSignatureInputs()))
    return failure();
  for (Operation &op : func_.getBody().front())
    if (failed(emitOp(&op)))
      return failure();
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
    if (isa<KeyedJaggedTensorType>(arg.getType())) {
      std::string name = "arg" + std::to_string(i);
      if (auto n = func_.getArgAttrOfType<StringAttr>(i, "onnx.name"))
        name = n.getValue().str();
      if (failed(kjt_.defineInput(arg, name, plan_->mutable_signature())))
        return failure();
      continue;
    }
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

DimInfo FunctionEmitter::dimOf(Value v, int64_t dim) {
  const DimList *dims = builder_.lookupDims(v);
  if (!dims || dim < 0 || dim >= static_cast<int64_t>(dims->size()))
    return {};
  return (*dims)[dim];
}

DimList FunctionEmitter::resultDims(Value result,
                                    ArrayRef<DimInfo> symbolPerDim) {
  auto type = cast<RankedTensorType>(result.getType());
  DimList dims;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    DimInfo info;
    if (!type.isDynamicDim(d)) {
      info.size = type.getDimSize(d);
    } else if (d < static_cast<int64_t>(symbolPerDim.size()) &&
               symbolPerDim[d].isSymbolic()) {
      info.symbol = symbolPerDim[d].symbol;
    } else if (d < static_cast<int64_t>(symbolPerDim.size()) &&
               symbolPerDim[d].size > 0) {
      info.size = symbolPerDim[d].size; // static in the plan, not in the IR
    } else {
      info.symbol = builder_.freshSymbol();
    }
    dims.push_back(info);
  }
  return dims;
}

FailureOr<int> FunctionEmitter::defineResult(Operation *op, Value result,
                                             ArrayRef<DimInfo> symbols) {
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
                                          ArrayRef<DimInfo> symbols,
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
  SmallVector<DimInfo> symbols(type.getRank());
  for (int64_t d = 0; d < type.getRank(); ++d)
    for (Value in : op->getOperands()) {
      auto inType = dyn_cast<RankedTensorType>(in.getType());
      if (!inType || inType.getRank() != type.getRank())
        continue;
      std::string s = symbolOf(in, d);
      if (!s.empty()) {
        symbols[d].symbol = s;
        break;
      }
    }
  return emitSimple(op, kernel, op->getOperands(), symbols);
}

LogicalResult FunctionEmitter::emitMatMul(tosa::MatMulOp op) {
  if (!isZeroConstant(op.getAZp()) || !isZeroConstant(op.getBZp()))
    return op.emitError("'tosa.matmul' with non-zero (or non-constant) zero "
                        "points is not supported by the plan emitter");
  // [B, M, K] x [B, K, N] -> [B, M, N]
  SmallVector<DimInfo> symbols = {dimOf(op.getA(), 0), dimOf(op.getA(), 1),
                                  dimOf(op.getB(), 2)};
  return emitSimple(op, kn::kMatmul, ValueRange{op.getA(), op.getB()}, symbols);
}

LogicalResult FunctionEmitter::emitClamp(tosa::ClampOp op) {
  if (!isReluClamp(op))
    return op.emitError("'tosa.clamp' is supported only as ReLU (min 0, max "
                        "the largest float); this clamp has other bounds");
  return emitElementwise(op, kn::kRelu);
}

LogicalResult FunctionEmitter::emitConcat(tosa::ConcatOp op) {
  auto type = cast<RankedTensorType>(op.getResult().getType());
  int64_t axis = op.getAxis();
  SmallVector<DimInfo> symbols(type.getRank());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == axis)
      continue; // a dynamic concatenated dim gets a fresh symbol
    for (Value in : op.getInput1()) {
      std::string s = symbolOf(in, d);
      if (!s.empty()) {
        symbols[d].symbol = s;
        break;
      }
    }
  }
  pb::Instruction *instr = nullptr;
  if (failed(emitSimple(op, kn::kConcat, op.getInput1(), symbols, &instr)))
    return failure();
  addIntAttr(instr, "axis", axis);
  return success();
}

LogicalResult FunctionEmitter::emitTranspose(tosa::TransposeOp op) {
  SmallVector<int64_t> perm;
  SmallVector<DimInfo> symbols;
  for (int32_t p : op.getPerms()) {
    perm.push_back(p);
    symbols.push_back(dimOf(op.getInput1(), p));
  }
  pb::Instruction *instr = nullptr;
  if (failed(emitSimple(op, kn::kTranspose, ValueRange{op.getInput1()}, symbols,
                        &instr)))
    return failure();
  addIntsAttr(instr, "perm", perm);
  return success();
}

bool FunctionEmitter::foldIntegerBinary(Operation *op) {
  if (!isa<tosa::AddOp, tosa::SubOp, tosa::MulOp>(op))
    return false;
  if (auto mul = dyn_cast<tosa::MulOp>(op);
      mul && !isZeroConstant(mul.getShift()))
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() ||
      !isa<IntegerType>(type.getElementType()))
    return false;
  auto lhs = dyn_cast_or_null<DenseElementsAttr>(
      builder_.constantAttr(op->getOperand(0)));
  auto rhs = dyn_cast_or_null<DenseElementsAttr>(
      builder_.constantAttr(op->getOperand(1)));
  int64_t n = type.getNumElements();
  auto usable = [&](DenseElementsAttr a) {
    return a && isa<IntegerType>(a.getElementType()) &&
           (a.getNumElements() == 1 ||
            cast<ShapedType>(a.getType()).getShape() == type.getShape());
  };
  if (!usable(lhs) || !usable(rhs))
    return false;
  unsigned width = type.getElementTypeBitWidth();
  SmallVector<APInt> a(lhs.getValues<APInt>()), b(rhs.getValues<APInt>());
  SmallVector<APInt> out;
  for (int64_t i = 0; i < n; ++i) {
    APInt x = a[a.size() == 1 ? 0 : i].sextOrTrunc(width);
    APInt y = b[b.size() == 1 ? 0 : i].sextOrTrunc(width);
    out.push_back(isa<tosa::AddOp>(op)   ? x + y
                  : isa<tosa::SubOp>(op) ? x - y
                                         : x * y);
  }
  return builder_.addPendingConstant(op->getResult(0),
                                     DenseElementsAttr::get(type, out));
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
  SmallVector<DimInfo> symbols(2);
  if (!includeLast)
    symbols[0].symbol = symbolOf(op.getOffsets(), 0);
  FailureOr<int> result = defineResult(op, op.getResult(), symbols);
  if (failed(result))
    return failure();
  pb::Instruction *instr =
      builder_.addInstruction(kn::kEmbeddingBag, locationName(op.getLoc()));
  for (int s : slots)
    instr->add_inputs(s);
  instr->add_inputs(weightsSlot);
  instr->add_outputs(*result);
  addStringAttr(instr, "pooling", stringifyPoolingMode(op.getPooling()).str());
  addIntAttr(instr, "include_last_offset", includeLast ? 1 : 0);
  if (IntegerAttr pad = op.getPaddingIdxAttr())
    addIntAttr(instr, "padding_idx", pad.getInt());
  // A uint8 table's layout: its format and dim (docs/kernels-embedding.md).
  if (auto table = cast<TableType>(op.getTable().getType());
      table.isQuantized()) {
    addStringAttr(instr, "format",
                  stringifyTableFormat(table.getFormat()).str());
    addIntAttr(instr, "dim", table.getDim());
  }
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
  const int first = builder_.program()->instructions_size();
  if (failed(lowerOp(op)))
    return failure();
  // ember.stream (ember-assign-streams): the stream of the op's
  // communication, given to its collective instructions.
  auto stream = op->getAttrOfType<IntegerAttr>("ember.stream");
  if (!stream)
    return success();
  if (stream.getInt() != 0 && stream.getInt() != 1)
    return op->emitError("'")
           << op->getName() << "': ember.stream is " << stream.getInt()
           << "; plans have stream 0 (compute) and 1 (communication)";
  pb::RankProgram *program = builder_.program();
  for (int i = first; i < program->instructions_size(); ++i)
    if (program->instructions(i).collective() > 0)
      program->mutable_instructions(i)->set_stream(stream.getInt());
  return success();
}

LogicalResult FunctionEmitter::lowerOp(Operation *op) {
  if (foldConstantOp(op) || foldIntegerBinary(op) || foldMappedWindow(op))
    return success();
  if (PlanKjtLowering::handles(op))
    return kjt_.emit(op);
  // ember.linear, softmax, layer_norm, dcn_cross, dot_interaction: one
  // kernel each (PlanDenseKernels.cpp).
  if (isDenseKernelOp(op))
    return emitDenseKernelOp(*this, op);
  // Dense math and data movement (PlanDenseOps.cpp).
  if (isDenseOp(op))
    return emitDenseOp(*this, op);
  if (const OpLowering<Lower> *row = findLowering(lowerings(), op))
    return row->lower(*this, op);
  return op->emitError() << "'" << op->getName()
                         << "' is outside the emission contract: no part of "
                            "the plan emitter lowers it (see "
                            "docs/architecture.md, \"The emission contract\")";
}

ArrayRef<OpLowering<FunctionEmitter::Lower>> FunctionEmitter::lowerings() {
  using E = FunctionEmitter;
  auto nothing = [](E &, Operation *) { return success(); };
  auto reshape = [](E &e, Operation *op) {
    return e.emitReshape(op, op->getOperand(0), op->getResult(0));
  };
  static const OpLowering<Lower> table[] = {
      {arith::ConstantOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.recordConstant(op, cast<arith::ConstantOp>(op).getValue());
       }},
      {tosa::ConstOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.recordConstant(op, cast<tosa::ConstOp>(op).getValues());
       }},
      // Shape-only values: reshapes take their shapes from result types.
      {tosa::ConstShapeOp::getOperationName(), nothing},
      {tensor::DimOp::getOperationName(), nothing},
      // Index scalars of shape computations, read by evaluateShapeScalar.
      {arith::MulIOp::getOperationName(), nothing, isShapeScalarOp},
      {arith::DivUIOp::getOperationName(), nothing, isShapeScalarOp},
      {arith::DivSIOp::getOperationName(), nothing, isShapeScalarOp},
      {arith::IndexCastOp::getOperationName(), nothing, isShapeScalarOp},
      {arith::MinSIOp::getOperationName(), nothing, isShapeScalarOp},
      {arith::MaxSIOp::getOperationName(), nothing, isShapeScalarOp},
      {arith::SubIOp::getOperationName(), nothing, isShapeScalarOp},
      // Shape tensors of tensor.reshape (read by emitTensorReshape; any
      // other user fails in operandSlot naming this op); a constant when its
      // elements are.
      {tensor::FromElementsOp::getOperationName(),
       [](E &e, Operation *op) {
         e.foldFromElements(cast<tensor::FromElementsOp>(op));
         return success();
       }},
      {tensor::ReshapeOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitTensorReshape(cast<tensor::ReshapeOp>(op));
       }},
      {TableFromTensorOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitTableFromTensor(cast<TableFromTensorOp>(op));
       }},
      {TableRefOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitTableRef(cast<TableRefOp>(op));
       }},
      {EmbeddingBagOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitEmbeddingBag(cast<EmbeddingBagOp>(op));
       }},
      {tosa::MatMulOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitMatMul(cast<tosa::MatMulOp>(op));
       }},
      {tosa::AddOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitElementwise(op, kn::kAdd); }},
      {tosa::SubOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitElementwise(op, kn::kSub); }},
      {tosa::SigmoidOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitElementwise(op, kn::kSigmoid); }},
      {tosa::TanhOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitElementwise(op, kn::kTanh); }},
      {tosa::ClampOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitClamp(cast<tosa::ClampOp>(op));
       }},
      {tosa::ConcatOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitConcat(cast<tosa::ConcatOp>(op));
       }},
      {tosa::TransposeOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitTranspose(cast<tosa::TransposeOp>(op));
       }},
      {tosa::ReshapeOp::getOperationName(), reshape},
      {tensor::ExpandShapeOp::getOperationName(), reshape},
      {tensor::CollapseShapeOp::getOperationName(), reshape},
      {tensor::CastOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitElementwise(op, kn::kIdentity);
       }},
      {func::ReturnOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitReturn(cast<func::ReturnOp>(op));
       }},
  };
  return table;
}

LogicalResult FunctionEmitter::emitTableFromTensor(TableFromTensorOp t) {
  auto table = cast<TableType>(t.getResult().getType());
  if (!builder_.isPendingConstant(t.getWeights()))
    return t.emitError("'ember.table.from_tensor': the weights must be "
                       "a constant");
  if (table.isQuantized()) {
    // Row-wise quantized rows are uint8 [rows, row bytes] in the plan
    // (the runtime's table dtype); the IR's storage type is i8.
    if (!builder_.retypePendingConstant(
            t.getWeights(),
            IntegerType::get(t.getContext(), 8, IntegerType::Unsigned)))
      return t.emitError("'ember.table.from_tensor': the rows of a ")
             << table << " must be a dense constant used only as the "
             << "table";
  }
  tableWeights_[t.getResult()] = t.getWeights();
  return success();
}

/// ember.table.ref of a table declared with its rows inline (`init =`): the
/// rows become a constant of the plan, as for ember.table.from_tensor.
LogicalResult FunctionEmitter::emitTableRef(TableRefOp ref) {
  auto decl =
      SymbolTable::lookupNearestSymbolFrom<TableOp>(ref, ref.getTableAttr());
  if (!decl)
    return ref.emitError("'ember.table.ref': no ember.table named ")
           << ref.getTableAttr();
  if (decl.getFile())
    return ref.emitError("'ember.table.ref': table ")
           << ref.getTableAttr()
           << " has its rows in an external file; the plan emitter needs "
              "them inline (init = dense<...>)";
  auto rows = dyn_cast_or_null<DenseElementsAttr>(decl.getValueAttr());
  if (!rows)
    return ref.emitError("'ember.table.ref': table ")
           << ref.getTableAttr()
           << " has no inline rows (init = dense<...>); a plan holds every "
              "table's rows";
  TableType table = decl.getTableType();
  if (table.isQuantized())
    rows = rows.bitcast(
        IntegerType::get(ref.getContext(), 8, IntegerType::Unsigned));
  // The ref's own value keys the rows' constant.
  if (!builder_.addPendingConstant(ref.getResult(), rows))
    return ref.emitError("'ember.table.ref': cannot record the rows of ")
           << ref.getTableAttr();
  tableWeights_[ref.getResult()] = ref.getResult();
  return success();
}

bool FunctionEmitter::foldMappedWindow(Operation *op) {
  auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
  if (!slice || slice.getSourceType().getRank() != 2 ||
      slice.getResultType().getRank() != 2 ||
      !builder_.isPendingConstant(slice.getSource()))
    return false;
  ElementsAttr source = builder_.constantAttr(slice.getSource());
  if (!source || !isMappedWeights(source))
    return false;
  ArrayRef<int64_t> offsets = slice.getStaticOffsets(),
                    sizes = slice.getStaticSizes(),
                    strides = slice.getStaticStrides();
  if (ShapedType::isDynamicShape(offsets) ||
      ShapedType::isDynamicShape(sizes) ||
      !llvm::all_of(strides, [](int64_t s) { return s == 1; }) ||
      slice.getResultType().getShape() != sizes)
    return false;
  return builder_.addPendingWindow(slice.getResult(), slice.getSource(),
                                   offsets[0], sizes[0], offsets[1], sizes[1]);
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
          builder_.addInstruction(kn::kIdentity, locationName(op.getLoc()));
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

bool isCoreEmitterOp(Operation *op) {
  return findLowering(FunctionEmitter::lowerings(), op);
}

} // namespace mlir::ember::plan_emitter
