//===- PlanShapeAlgebra.cpp - Shapes as expressions over symbols ----------===//
//
// What the emitter knows of run-time dims: a dim is a constant times a
// product of symbols (ShapeExpr). Index scalars built from tensor.dim and
// constants evaluate to such expressions; reshapes state each result dim as
// one (the `reshape` kernel's shape: 0 copies an input dim, -1 is inferred);
// a shape only known at run time becomes an int64 tensor computed by
// `shape`/`slice`/`mul` instructions.
//
//===----------------------------------------------------------------------===//
#include "plan/PlanFunctionEmitter.h"

#include "passes/TosaMatchers.h"
#include "mlir/IR/Matchers.h"

#include "kernel_contract/kernel_contract.h"

namespace kn = ::ember::contract::kernel_names;

namespace mlir::ember::plan_emitter {
namespace {

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

/// "12*B" (for messages).
std::string exprText(const ShapeExpr &e) {
  std::string text = std::to_string(e.constant);
  for (const auto &[symbol, exponent] : e.exponents)
    for (int i = 0; i < exponent; ++i)
      text += "*" + symbol;
  return text;
}

} // namespace

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
  // The input's element count, where every dim of it is known.
  std::optional<ShapeExpr> total = ShapeExpr();
  for (int64_t d = 0; d < inType.getRank() && total; ++d) {
    FailureOr<ShapeExpr> e = dimExpr(input, d);
    if (failed(e))
      total.reset();
    else
      total = multiply(*total, *e);
  }
  // Distinct symbols may stand for equal sizes (a collective's result and
  // the batch): only counts over the same symbols are provably different.
  if (total && unknown == 0 && total->exponents == knownOut.exponents &&
      total->constant != knownOut.constant)
    return op->emitError() << "'" << op->getName() << "': reshape of "
                           << exprText(*total) << " elements to "
                           << result.getType() << " (" << exprText(knownOut)
                           << " elements)";
  if (unknown == 1) {
    FailureOr<ShapeExpr> rest =
        total ? divide(*total, knownOut) : FailureOr<ShapeExpr>(failure());
    if (total && failed(rest) && total->exponents == knownOut.exponents)
      return op->emitError() << "'" << op->getName() << "': reshape of "
                             << exprText(*total) << " elements to "
                             << result.getType() << ": the other dims hold "
                             << exprText(knownOut)
                             << ", which does not divide them";
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

} // namespace mlir::ember::plan_emitter
