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
#include "plan/EmissionContract.h"
#include "passes/TosaMatchers.h"
#include "plan/PlanConstantFolding.h"
#include "plan/PlanEmitterContext.h"
#include "plan/PlanFinalization.h"
#include "plan/PlanKjtOps.h"
#include "plan/PlanProgramBuilder.h"
#include "plan/plan_writer.h"

#include "ember/EmberOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "kernel_contract/kernel_contract.h"
#include <map>

namespace kn = ::ember::contract::kernel_names;

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

/// The product of two shape expressions.
ShapeExpr multiply(ShapeExpr a, const ShapeExpr &b) {
  a.constant *= b.constant;
  for (const auto &[symbol, exponent] : b.exponents)
    if ((a.exponents[symbol] += exponent) == 0)
      a.exponents.erase(symbol);
  return a;
}

/// a / b when it is a product of dims (exact constant, no negative
/// exponents); failure otherwise.
FailureOr<ShapeExpr> divide(ShapeExpr a, const ShapeExpr &b) {
  if (b.constant == 0 || a.constant % b.constant != 0)
    return failure();
  a.constant /= b.constant;
  for (const auto &[symbol, exponent] : b.exponents)
    if ((a.exponents[symbol] -= exponent) == 0)
      a.exponents.erase(symbol);
  for (const auto &[symbol, exponent] : a.exponents)
    if (exponent < 0)
      return failure();
  return a;
}

class FunctionEmitter : public EmitterContext {
public:
  FunctionEmitter(func::FuncOp func, pb::Plan *plan)
      : func_(func), plan_(plan), builder_(plan->add_programs()),
        kjt_(builder_, kjtHooks()) {}

  using Lower = LogicalResult (*)(FunctionEmitter &, Operation *);
  /// The ops this file lowers itself (the other parts have tables of their
  /// own: isDenseKernelOp, isDenseOp, PlanKjtLowering::handles).
  static ArrayRef<OpLowering<Lower>> lowerings();

  LogicalResult run();
  std::vector<PendingConstant> &constants() { return builder_.constants(); }

private:
  LogicalResult emitSignatureInputs();
  LogicalResult emitOp(Operation *op);
  LogicalResult emitReturn(func::ReturnOp op);

  /// The slot of operand `v` of `op`, or an error at `op`.
  FailureOr<int> operandSlot(Operation *op, Value v) override;
  /// Dims of a result whose dynamic dims come from `symbolPerDim[d]` (a
  /// symbol, a known static size, or empty for a fresh symbol).
  DimList resultDims(Value result, ArrayRef<DimInfo> symbolPerDim);
  /// What the plan knows of dim `dim` of `v` (its slot's dim: a symbol or a
  /// static size, also where the IR type is dynamic); empty when unknown.
  DimInfo dimOf(Value v, int64_t dim) override;
  /// Only the symbol of dimOf (empty for static or unknown dims).
  std::string symbolOf(Value v, int64_t dim) { return dimOf(v, dim).symbol; }
  /// Defines the result slot and returns its index, or an error at op.
  FailureOr<int> defineResult(Operation *op, Value result,
                              ArrayRef<DimInfo> symbolPerDim) override;

  LogicalResult emitSimple(Operation *op, const std::string &kernel,
                           ValueRange inputs, ArrayRef<DimInfo> symbolPerDim,
                           pb::Instruction **out = nullptr) override;
  PlanProgramBuilder &builder() override { return builder_; }
  std::string locationOf(Location loc) override { return locationName(loc); }
  FailureOr<int> shapeTensor(Operation *op,
                             ArrayRef<ShapeExpr> exprs) override {
    return emitShapeTensor(op, exprs);
  }
  FailureOr<ShapeExpr> shapeScalar(Value v) override {
    return evaluateShapeScalar(v);
  }
  LogicalResult emitElementwise(Operation *op, const std::string &kernel);
  LogicalResult emitReshape(Operation *op, Value input, Value result);
  LogicalResult emitReshapeTo(Operation *op, Value input, Value result,
                              SmallVector<std::optional<ShapeExpr>> outExprs);
  /// An int64 [rank] slot computed at run time holding `exprs`.
  FailureOr<int> emitShapeTensor(Operation *op, ArrayRef<ShapeExpr> exprs);
  /// Dim `d` of `v` as an expression over base symbols (a product symbol
  /// expanded); failure when unknown.
  FailureOr<ShapeExpr> dimExpr(Value v, int64_t d);
  /// The plan dim of an expression: static, a base symbol, or a symbol of
  /// its own recorded in symbolExprs_.
  DimInfo dimFromExpr(const ShapeExpr &e);
  LogicalResult emitMatMul(tosa::MatMulOp op);
  LogicalResult emitClamp(tosa::ClampOp op);
  LogicalResult emitConcat(tosa::ConcatOp op);
  LogicalResult emitTranspose(tosa::TransposeOp op);
  LogicalResult emitTensorReshape(tensor::ReshapeOp op);
  /// tosa.add/sub/mul of two integer constants (index arithmetic of
  /// exported advanced indexing) becomes a constant; false when the op is
  /// not that.
  bool foldIntegerBinary(Operation *op);
  /// tensor.from_elements whose elements all evaluate to constants becomes
  /// a constant; false otherwise (then only tensor.reshape may read it).
  bool foldFromElements(tensor::FromElementsOp op);
  /// The value of an index/integer scalar computed from constants and
  /// tensor.dim (arith.muli/divui/divsi/index_cast), as c * product of
  /// symbols; failure when it is anything else.
  FailureOr<ShapeExpr> evaluateShapeScalar(Value v, int depth = 0);
  LogicalResult emitEmbeddingBag(EmbeddingBagOp op);
  LogicalResult emitTableFromTensor(TableFromTensorOp op);
  LogicalResult emitTableRef(TableRefOp op);
  LogicalResult recordConstant(Operation *op, Attribute value);
  /// Folds a transpose/reshape of a constant into a new constant; true when
  /// it did (nothing is emitted for the op then).
  bool foldConstantOp(Operation *op);

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
  /// KJTs, keyed tensors and their lookups (PlanKjtOps.h).
  PlanKjtLowering kjt_;
  /// Multi-rank plans: the descriptor index of this program's next
  /// collective (see writePlan).
  std::function<FailureOr<int>(Operation *, int, ArrayRef<int64_t>)>
      collectiveHook_;

public:
  void setCollectiveHook(decltype(collectiveHook_) hook) {
    collectiveHook_ = std::move(hook);
  }

private:
  KjtLoweringHooks kjtHooks() {
    KjtLoweringHooks hooks;
    hooks.operandSlot = [this](Operation *op, Value v) {
      return operandSlot(op, v);
    };
    hooks.defineResult = [this](Operation *op, Value result,
                                ArrayRef<DimInfo> dims) {
      return defineResult(op, result, dims);
    };
    hooks.tableWeights = [this](Value table) {
      return tableWeights_.lookup(table);
    };
    hooks.location = [](Operation *op) { return locationName(op->getLoc()); };
    hooks.collective = [this](Operation *op, int kind,
                              ArrayRef<int64_t> group) -> FailureOr<int> {
      if (!collectiveHook_)
        return op->emitError("'")
               << op->getName()
               << "' is a collective, but the plan is for one rank (run "
                  "ember-partition with a world size above 1)";
      return collectiveHook_(op, kind, group);
    };
    return hooks;
  }
  /// Symbols that stand for a product of other symbols (B * 3 after a
  /// reshape) -> that product.
  std::map<std::string, ShapeExpr> symbolExprs_;
};

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

bool FunctionEmitter::foldFromElements(tensor::FromElementsOp op) {
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!type || !type.hasStaticShape() ||
      !isa<IntegerType>(type.getElementType()))
    return false;
  SmallVector<APInt> values;
  for (Value e : op.getElements()) {
    FailureOr<ShapeExpr> v = evaluateShapeScalar(e);
    if (failed(v) || !v->exponents.empty())
      return false;
    values.push_back(APInt(type.getElementTypeBitWidth(), v->constant,
                           /*isSigned=*/true));
  }
  return builder_.addPendingConstant(op.getResult(),
                                     DenseElementsAttr::get(type, values));
}

FailureOr<ShapeExpr> FunctionEmitter::evaluateShapeScalar(Value v, int depth) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 32)
    return failure();
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value))) {
    ShapeExpr e;
    e.constant = value.getSExtValue();
    return e;
  }
  if (auto dim = dyn_cast<tensor::DimOp>(def)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    const DimList *dims = builder_.lookupDims(dim.getSource());
    if (!index || !dims || *index < 0 ||
        *index >= static_cast<int64_t>(dims->size()))
      return failure();
    return dimExpr(dim.getSource(), *index);
  }
  if (auto cast = dyn_cast<arith::IndexCastOp>(def))
    return evaluateShapeScalar(cast.getIn(), depth + 1);
  if (isa<arith::MulIOp, arith::DivUIOp, arith::DivSIOp>(def)) {
    FailureOr<ShapeExpr> lhs =
        evaluateShapeScalar(def->getOperand(0), depth + 1);
    FailureOr<ShapeExpr> rhs =
        evaluateShapeScalar(def->getOperand(1), depth + 1);
    if (failed(lhs) || failed(rhs))
      return failure();
    if (isa<arith::MulIOp>(def))
      return multiply(*lhs, *rhs);
    return divide(*lhs, *rhs); // fails for a quotient that is not a product
  }
  return failure();
}

FailureOr<ShapeExpr> FunctionEmitter::dimExpr(Value v, int64_t d) {
  DimInfo info = dimOf(v, d);
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!info.isSymbolic() && info.size <= 0 && type && d < type.getRank() &&
      !type.isDynamicDim(d))
    info.size = type.getDimSize(d);
  ShapeExpr e;
  if (info.isSymbolic()) {
    auto it = symbolExprs_.find(info.symbol);
    if (it != symbolExprs_.end())
      return it->second;
    e.exponents[info.symbol] = 1;
    return e;
  }
  if (info.size < 0 || (info.size == 0 && (!type || type.isDynamicDim(d))))
    return failure();
  e.constant = info.size;
  return e;
}

DimInfo FunctionEmitter::dimFromExpr(const ShapeExpr &e) {
  DimInfo info;
  if (e.exponents.empty()) {
    info.size = e.constant;
    return info;
  }
  if (e.constant == 1 && e.exponents.size() == 1 &&
      e.exponents.begin()->second == 1) {
    info.symbol = e.exponents.begin()->first;
    return info;
  }
  // A product such as B * 3: a symbol of its own, whose value later shape
  // arithmetic can still see.
  for (const auto &[symbol, expr] : symbolExprs_)
    if (expr.constant == e.constant && expr.exponents == e.exponents) {
      info.symbol = symbol;
      return info;
    }
  info.symbol = builder_.freshSymbol();
  symbolExprs_[info.symbol] = e;
  return info;
}

/// Every reshape-like op: each result dim is known as an expression of the
/// input's dims (given in `outExprs`, or the one left inferred from the
/// element count). The `reshape` kernel's shape copies a dim that equals
/// the input's at the same position (0) and infers at most one (-1).
LogicalResult
FunctionEmitter::emitReshapeTo(Operation *op, Value input, Value result,
                               SmallVector<std::optional<ShapeExpr>> outExprs) {
  auto inType = dyn_cast<RankedTensorType>(input.getType());
  auto outType = dyn_cast<RankedTensorType>(result.getType());
  if (!inType || !outType)
    return op->emitError() << "'" << op->getName()
                           << "': needs ranked tensor types";
  int unknown = 0;
  ShapeExpr knownOut;
  for (const std::optional<ShapeExpr> &e : outExprs) {
    if (e)
      knownOut = multiply(knownOut, *e);
    else
      ++unknown;
  }
  if (unknown == 1) {
    ShapeExpr total;
    bool ok = true;
    for (int64_t d = 0; d < inType.getRank() && ok; ++d) {
      FailureOr<ShapeExpr> e = dimExpr(input, d);
      ok = succeeded(e);
      if (ok)
        total = multiply(total, *e);
    }
    FailureOr<ShapeExpr> rest =
        ok ? divide(total, knownOut) : FailureOr<ShapeExpr>(failure());
    for (std::optional<ShapeExpr> &e : outExprs)
      if (!e && succeeded(rest))
        e = *rest;
  }
  DimList dims;
  SmallVector<int64_t> shape;
  int inferred = 0;
  for (int64_t d = 0; d < outType.getRank(); ++d) {
    DimInfo info;
    if (outExprs[d]) {
      info = dimFromExpr(*outExprs[d]);
    } else {
      info.symbol = builder_.freshSymbol(); // the run-time size only
    }
    if (!info.isSymbolic() && info.size <= 0)
      return op->emitError() << "'" << op->getName() << "': dim " << d << " is "
                             << info.size << " (the plan emitter needs > 0)";
    if (!info.isSymbolic()) {
      shape.push_back(info.size);
    } else if (d < inType.getRank() && dimOf(input, d).symbol == info.symbol) {
      shape.push_back(0); // the input's dim at this position
    } else {
      shape.push_back(-1);
      ++inferred;
    }
    dims.push_back(info);
  }
  FailureOr<int> in = operandSlot(op, input);
  if (failed(in))
    return failure();
  int shapeSlot = -1;
  if (inferred > 1) {
    // Several run-time dims: the shape is computed at run time from the
    // dims of slots that hold each symbol (shape, gather, mul, concat).
    SmallVector<ShapeExpr> exprs;
    for (int64_t d = 0; d < outType.getRank(); ++d) {
      if (!outExprs[d])
        return op->emitError()
               << "'" << op->getName() << "': reshape to " << result.getType()
               << " has more than one run-time dim the plan emitter cannot "
                  "follow";
      exprs.push_back(*outExprs[d]);
    }
    FailureOr<int> computed = emitShapeTensor(op, exprs);
    if (failed(computed))
      return failure();
    shapeSlot = *computed;
  }
  int slot = builder_.defineSlot(result, dims, slotName(op, 0));
  if (slot < 0)
    return op->emitError() << "'" << op->getName()
                           << "': cannot define its slot";
  pb::Instruction *instr = builder_.addInstruction(
      outType.getRank() == 0 ? kn::kSqueeze : kn::kReshape,
      locationName(op->getLoc()));
  instr->add_inputs(*in);
  if (shapeSlot >= 0)
    instr->add_inputs(shapeSlot);
  instr->add_outputs(slot);
  if (shapeSlot < 0 && outType.getRank() > 0)
    addIntsAttr(instr, "shape", shape);
  return success();
}

FailureOr<int> FunctionEmitter::emitShapeTensor(Operation *op,
                                                ArrayRef<ShapeExpr> exprs) {
  pb::RankProgram *program = builder_.program();
  std::string name = locationName(op->getLoc()) + ".shape";
  Type i64 = IntegerType::get(op->getContext(), 64);
  auto scalar = [&](int64_t v) {
    return builder_.materializeConstant(
        DenseElementsAttr::get(RankedTensorType::get({1}, i64),
                               ArrayRef<int64_t>{v}),
        name + ".c");
  };
  auto newSlot = [&](int64_t n) {
    return builder_.defineTypedSlot(i64, DimList{DimInfo{n, {}}}, name);
  };
  std::map<int, int> shapeOf; // slot -> its `shape` slot
  SmallVector<int> pieces;
  for (const ShapeExpr &e : exprs) {
    int piece = scalar(e.constant);
    if (piece < 0)
      return op->emitError("cannot write a shape constant");
    for (const auto &[symbol, exponent] : e.exponents) {
      // A slot holding `symbol` as one of its dims.
      int holder = -1, dim = -1;
      for (int s = 0; s < program->slots_size() && holder < 0; ++s)
        for (int k = 0; k < program->slots(s).shape_size(); ++k)
          if (program->slots(s).shape(k).symbol() == symbol) {
            holder = s;
            dim = k;
            break;
          }
      if (holder < 0)
        return op->emitError() << "no tensor of the plan holds dim '" << symbol
                               << "' to compute a reshape's shape from";
      auto it = shapeOf.find(holder);
      if (it == shapeOf.end()) {
        int shape = newSlot(program->slots(holder).shape_size());
        pb::Instruction *instr = builder_.addInstruction(kn::kShape, name);
        instr->add_inputs(holder);
        instr->add_outputs(shape);
        it = shapeOf.emplace(holder, shape).first;
      }
      int index = scalar(dim);
      for (int p = 0; p < exponent; ++p) {
        int picked = newSlot(1);
        pb::Instruction *gather = builder_.addInstruction(kn::kGather, name);
        gather->add_inputs(it->second);
        gather->add_inputs(index);
        gather->add_outputs(picked);
        addIntAttr(gather, "axis", 0);
        int product = newSlot(1);
        pb::Instruction *mul = builder_.addInstruction(kn::kMul, name);
        mul->add_inputs(piece);
        mul->add_inputs(picked);
        mul->add_outputs(product);
        piece = product;
      }
    }
    pieces.push_back(piece);
  }
  int shape = newSlot(static_cast<int64_t>(pieces.size()));
  pb::Instruction *concat = builder_.addInstruction(kn::kConcat, name);
  for (int p : pieces)
    concat->add_inputs(p);
  concat->add_outputs(shape);
  addIntAttr(concat, "axis", 0);
  return shape;
}

LogicalResult FunctionEmitter::emitReshape(Operation *op, Value input,
                                           Value result) {
  auto outType = cast<RankedTensorType>(result.getType());
  SmallVector<std::optional<ShapeExpr>> exprs(outType.getRank());
  auto constant = [](int64_t c) {
    ShapeExpr e;
    e.constant = c;
    return e;
  };
  for (int64_t d = 0; d < outType.getRank(); ++d)
    if (!outType.isDynamicDim(d))
      exprs[d] = constant(outType.getDimSize(d));
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    SmallVector<OpFoldResult> sizes = expand.getMixedOutputShape();
    for (int64_t d = 0; d < outType.getRank(); ++d)
      if (!exprs[d] && d < static_cast<int64_t>(sizes.size())) {
        if (auto v = dyn_cast<Value>(sizes[d])) {
          FailureOr<ShapeExpr> e = evaluateShapeScalar(v);
          if (succeeded(e))
            exprs[d] = *e;
        }
      }
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    for (auto [d, group] :
         llvm::enumerate(collapse.getReassociationIndices())) {
      ShapeExpr product;
      bool ok = true;
      for (int64_t i : group) {
        FailureOr<ShapeExpr> e = dimExpr(input, i);
        ok &= succeeded(e);
        if (ok)
          product = multiply(product, *e);
      }
      if (ok)
        exprs[d] = product;
    }
  }
  return emitReshapeTo(op, input, result, exprs);
}

/// tensor.reshape x(shape) where the shape is constant or comes from
/// tensor.from_elements of shape scalars (each a product/quotient of
/// constants and input dims, e.g. B * 6 / B = 6).
LogicalResult FunctionEmitter::emitTensorReshape(tensor::ReshapeOp op) {
  auto outType = cast<RankedTensorType>(op.getResult().getType());
  auto elements = op.getShape().getDefiningOp<tensor::FromElementsOp>();
  DenseElementsAttr constShape;
  if (!elements && !matchPattern(op.getShape(), m_Constant(&constShape)))
    return op.emitError("'tensor.reshape': the shape must be constant or "
                        "built by tensor.from_elements");
  SmallVector<std::optional<ShapeExpr>> exprs(outType.getRank());
  int unknown = 0;
  for (int64_t d = 0; d < outType.getRank(); ++d) {
    ShapeExpr e;
    if (!outType.isDynamicDim(d)) {
      e.constant = outType.getDimSize(d);
    } else if (constShape) {
      e.constant = constShape.getValues<APInt>()[d].getSExtValue();
    } else {
      FailureOr<ShapeExpr> v = evaluateShapeScalar(elements.getElements()[d]);
      if (failed(v)) {
        if (++unknown > 1)
          return op.emitError()
                 << "'tensor.reshape': dim " << d
                 << " of the shape is not a constant or a product of input "
                    "dims the plan emitter can follow";
        continue;
      }
      e = *v;
    }
    exprs[d] = e;
  }
  return emitReshapeTo(op, op.getSource(), op.getResult(), exprs);
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
  if (foldConstantOp(op) || foldIntegerBinary(op))
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

} // namespace

bool isCoreEmitterOp(Operation *op) {
  return findLowering(FunctionEmitter::lowerings(), op);
}

namespace {

LogicalResult FunctionEmitter::emitTableFromTensor(TableFromTensorOp t) {
  auto table = cast<TableType>(t.getResult().getType());
  if (!builder_.isPendingConstant(t.getWeights()))
    return t.emitError("'ember.table.from_tensor': the weights must be "
                       "a constant");
  if (table.isQuantized()) {
    // Row-wise quantized rows are uint8 [rows, row bytes] in the plan
    // (the runtime's table dtype); the IR's storage type is i8.
    auto bytes = dyn_cast_or_null<DenseElementsAttr>(
        builder_.constantAttr(t.getWeights()));
    if (!bytes || builder_.lookupSlot(t.getWeights()) >= 0 ||
        !builder_.addPendingConstant(
            t.getWeights(),
            bytes.bitcast(IntegerType::get(t.getContext(), 8,
                                           IntegerType::Unsigned))))
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
  return weightsFileNameFor(planPath, 0);
}

std::string weightsFileNameFor(llvm::StringRef planPath, int rank) {
  return stemOf(planPath) + ".rank" + std::to_string(rank) + ".weights";
}

namespace {

/// Marks the inputs that hold the ids (and per-sample weights) of
/// nn.EmbeddingBag-style bags with their offsets input, and records the
/// batch symbol (dim 0 of the first output, else of the first input), so
/// that tools splitting a global batch over ranks split them by bags.
void annotateSignature(func::FuncOp func, pb::Signature &signature) {
  auto inputNamed = [&](Value v) -> pb::TensorSpec * {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &func.getBody().front())
      return nullptr;
    std::string name = "arg" + std::to_string(arg.getArgNumber());
    if (auto n =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "onnx.name"))
      name = n.getValue().str();
    for (pb::TensorSpec &spec : *signature.mutable_inputs())
      if (spec.name() == name)
        return &spec;
    return nullptr;
  };
  auto mark = [&](Value ids, Value offsets, Value weights, bool includeLast) {
    pb::TensorSpec *offsetsSpec = inputNamed(offsets);
    if (!offsetsSpec || !offsetsSpec->bag_offsets().empty())
      return;
    for (Value member : {ids, weights})
      if (pb::TensorSpec *spec = member ? inputNamed(member) : nullptr) {
        spec->set_bag_offsets(offsetsSpec->name());
        spec->set_include_last_offset(includeLast);
      }
  };
  func.walk([&](Operation *op) {
    if (auto bag = dyn_cast<EmbeddingBagOp>(op))
      mark(bag.getIndices(), bag.getOffsets(), bag.getPerSampleWeights(),
           bag.getIncludeLastOffset());
    else if (auto fromBags = dyn_cast<KJTFromBagsOp>(op))
      for (size_t f = 0; f < fromBags.getValues().size(); ++f)
        mark(fromBags.getValues()[f], fromBags.getOffsets()[f],
             fromBags.getWeights().empty() ? Value() : fromBags.getWeights()[f],
             fromBags.getIncludeLastOffset()[f]);
  });
  for (const auto *specs : {&signature.outputs(), &signature.inputs()})
    if (!specs->empty() && specs->Get(0).shape_size() > 0 &&
        !specs->Get(0).shape(0).symbol().empty()) {
      signature.set_batch_symbol(specs->Get(0).shape(0).symbol());
      return;
    }
}

/// Renames the symbols of `program` (emitted with `own` as its signature)
/// to those `reference` uses at the same input/output positions, so that
/// every rank's program matches the plan's one signature. Fresh symbols
/// differ between ranks whose programs differ; the dims they stand for do
/// not.
LogicalResult unifySymbols(func::FuncOp func, const pb::Signature &own,
                           const pb::Signature &reference,
                           pb::RankProgram &program) {
  std::map<std::string, std::string> rename;
  auto match =
      [&](const google::protobuf::RepeatedPtrField<pb::TensorSpec> &mine,
          const google::protobuf::RepeatedPtrField<pb::TensorSpec> &theirs)
      -> LogicalResult {
    if (mine.size() != theirs.size())
      return func.emitError("this rank's program has ")
             << mine.size() << " inputs/outputs, rank 0's " << theirs.size();
    for (int i = 0; i < mine.size(); ++i) {
      if (mine[i].shape_size() != theirs[i].shape_size() ||
          mine[i].dtype() != theirs[i].dtype())
        return func.emitError("'")
               << mine[i].name() << "' differs from rank 0's signature";
      for (int d = 0; d < mine[i].shape_size(); ++d) {
        const pb::Dim &a = mine[i].shape(d), &b = theirs[i].shape(d);
        if (a.symbol().empty() != b.symbol().empty() ||
            (a.symbol().empty() && a.size() != b.size()))
          return func.emitError("dim ") << d << " of '" << mine[i].name()
                                        << "' differs from rank 0's signature";
        if (a.symbol().empty())
          continue;
        auto [it, inserted] = rename.emplace(a.symbol(), b.symbol());
        if (!inserted && it->second != b.symbol())
          return func.emitError("symbol '")
                 << a.symbol() << "' of this rank stands for both '"
                 << it->second << "' and '" << b.symbol() << "' of rank 0";
      }
    }
    return success();
  };
  if (failed(match(own.inputs(), reference.inputs())) ||
      failed(match(own.outputs(), reference.outputs())))
    return failure();
  // Symbols of this rank that rank 0 uses for something else get a suffix.
  std::set<std::string> taken;
  for (const auto &[from, to] : rename)
    taken.insert(to);
  auto renamed = [&](const std::string &symbol) {
    auto it = rename.find(symbol);
    if (it != rename.end())
      return it->second;
    std::string fresh = symbol;
    while (taken.count(fresh))
      fresh += "_r" + std::to_string(program.rank());
    return rename[symbol] = fresh;
  };
  for (pb::Slot &slot : *program.mutable_slots())
    for (pb::Dim &dim : *slot.mutable_shape())
      if (!dim.symbol().empty())
        dim.set_symbol(renamed(dim.symbol()));
  return success();
}

/// Writes one weights file per rank into `files` (published with the plan).
LogicalResult writeWeights(ModuleOp module, pb::Plan &plan,
                           std::vector<std::vector<PendingConstant>> &constants,
                           llvm::StringRef planPath,
                           SmallVectorImpl<std::string> &written,
                           ::ember::FileTransaction &files) {
  llvm::SmallString<256> dir(planPath);
  llvm::sys::path::remove_filename(dir);
  for (int r = 0; r < plan.programs_size(); ++r) {
    if (constants[r].empty())
      continue;
    pb::RankProgram *program = plan.mutable_programs(r);
    std::string weightsName = weightsFileNameFor(planPath, r);
    llvm::SmallString<256> weightsPath(dir);
    llvm::sys::path::append(weightsPath, weightsName);
    std::string error;
    ::ember::WeightsFileWriter weights;
    if (!weights.open(std::string(weightsPath), &error, &files))
      return module.emitError()
             << "cannot write '" << weightsPath << "': " << error;
    for (const PendingConstant &c : constants[r]) {
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
  return success();
}

} // namespace

LogicalResult writePlan(ModuleOp module, llvm::StringRef planPath,
                        const PlanEmitterOptions &options) {
  if (failed(verifyEmissionContract(module, options.functionName)))
    return failure();
  FailureOr<SmallVector<func::FuncOp>> funcs =
      functionsToEmit(module, options.functionName);
  if (failed(funcs))
    return failure();
  const int worldSize = static_cast<int>(funcs->size());
  pb::Plan plan;
  plan.set_producer(options.producer);
  plan.set_world_size(worldSize);
  std::vector<std::vector<PendingConstant>> constants(worldSize);
  for (int r = 0; r < worldSize; ++r) {
    // Each rank's program is emitted on its own; rank 0 gives the
    // signature and the collective descriptors, which every other rank's
    // k-th collective must match.
    pb::Plan rankPlan;
    FunctionEmitter emitter((*funcs)[r], &rankPlan);
    int next = 0;
    if (worldSize > 1)
      emitter.setCollectiveHook([&,
                                 r](Operation *op, int kind,
                                    ArrayRef<int64_t> group) -> FailureOr<int> {
        int index = next++;
        if (r == 0) {
          pb::CollectiveDescriptor *d = plan.add_collectives();
          d->set_kind(static_cast<pb::CollectiveDescriptor::Kind>(kind));
          for (int64_t rank : group)
            d->add_group_ranks(rank);
          d->set_name(locationName(op->getLoc()));
          return index;
        }
        if (index >= plan.collectives_size() ||
            plan.collectives(index).kind() != kind ||
            plan.collectives(index).group_ranks_size() !=
                static_cast<int>(group.size()))
          return op->emitError("collective ")
                 << index << " of rank " << r
                 << " does not match rank 0's (the ranks' programs must run "
                    "the same collectives in the same order)";
        return index;
      });
    if (failed(emitter.run()))
      return failure();
    if (r > 0 && next != plan.collectives_size())
      return (*funcs)[r].emitError("rank ")
             << r << " runs " << next << " collectives, rank 0 runs "
             << plan.collectives_size();
    if (r == 0) {
      *plan.mutable_signature() = rankPlan.signature();
      annotateSignature((*funcs)[r], *plan.mutable_signature());
    }
    pb::RankProgram *program = plan.add_programs();
    *program = std::move(*rankPlan.mutable_programs(0));
    program->set_rank(r);
    if (r > 0 && failed(unifySymbols((*funcs)[r], rankPlan.signature(),
                                     plan.signature(), *program)))
      return failure();
    constants[r] = std::move(emitter.constants());
  }
  if (failed(finishPlan(module, plan, options)))
    return failure();

  // Everything translated: write the weights files, then the plan.
  SmallVector<std::string> written;
  ::ember::FileTransaction files; // the weights and the plan, whole or none
  auto removeWritten = [&] {
    for (const std::string &path : written)
      llvm::sys::fs::remove(path);
  };
  if (failed(writeWeights(module, plan, constants, planPath, written, files))) {
    removeWritten();
    return failure();
  }
  std::string error;
  if (!::ember::writePlanFile(plan, planPath.str(), &error, &files)) {
    removeWritten();
    return module.emitError() << "cannot write '" << planPath << "': " << error;
  }
  return success();
}

} // namespace mlir::ember::plan_emitter
