//===- PlanDenseOps.cpp - Dense math and data movement -> plan kernels ----===//
//
// The ops of imported recommendation models beyond embedding bags and linear
// layers: elementwise math, reductions, comparisons and select, casts,
// slices and slice writes, expand, and tosa.gather in all its forms. Each op
// becomes one or a few instructions of the CPU kernels documented in
// docs/kernels-dense.md. Called by PlanEmitter.cpp before its own cases.
//
//===----------------------------------------------------------------------===//
#include "passes/TosaMatchers.h"
#include "plan/PlanEmitterContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

#include "kernel_contract/kernel_contract.h"
#include <limits>

namespace kn = ::ember::contract::kernel_names;

namespace mlir::ember::plan_emitter {

std::string castDTypeName(Type t) {
  if (t.isF32())
    return "float32";
  if (t.isF16())
    return "float16";
  if (t.isBF16())
    return "bfloat16";
  if (t.isF64())
    return "float64";
  if (t.isInteger(1))
    return "bool";
  if (t.isSignlessInteger(8) || t.isSignedInteger(8))
    return "int8";
  if (t.isUnsignedInteger(8))
    return "uint8";
  if (t.isInteger(32))
    return "int32";
  if (t.isInteger(64))
    return "int64";
  return "";
}

namespace {

constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

class DenseOpEmitter {
public:
  explicit DenseOpEmitter(EmitterContext &ctx) : ctx_(ctx) {}

  using Lower = LogicalResult (*)(DenseOpEmitter &, Operation *);
  /// The one list of the ops this file lowers and how.
  static ArrayRef<OpLowering<Lower>> lowerings();

private:
  /// tosa.slice with constant start and size.
  LogicalResult emitTosaSlice(tosa::SliceOp s);
  /// arith.trunci: a constant operand is folded, else a cast.
  LogicalResult emitTruncI(arith::TruncIOp t);
  PlanProgramBuilder &builder() { return ctx_.builder(); }
  std::string name(Operation *op) { return ctx_.locationOf(op->getLoc()); }

  /// The dims of a broadcasting op's result: a dynamic dim takes the symbol
  /// of the first operand of the same rank whose dim is symbolic there.
  SmallVector<DimInfo> broadcastDims(Value result, ValueRange operands);
  /// One instruction over operand values, result dims by broadcasting.
  LogicalResult emitBroadcasting(Operation *op, const std::string &kernel,
                                 ValueRange operands);
  /// One instruction over slots, defining op's result.
  FailureOr<pb::Instruction *> emitOnSlots(Operation *op,
                                           const std::string &kernel,
                                           ArrayRef<int> inputs,
                                           ArrayRef<DimInfo> dims);
  /// A slot for an intermediate of a multi-instruction op.
  FailureOr<int> tempSlot(Operation *op, Type elementType, const DimList &dims,
                          const std::string &suffix);
  /// A [1, ..., 1] constant of `value` (rank `rank`).
  FailureOr<int> scalarSlot(Operation *op, Type elementType, double value,
                            int64_t rank, const std::string &suffix);

  LogicalResult emitUnaryMath(Operation *op, const std::string &kernel);
  LogicalResult emitReciprocal(Operation *op, bool sqrtFirst);
  LogicalResult emitReduce(Operation *op, const std::string &kernel,
                           int64_t axis);
  LogicalResult emitCast(Operation *op);
  /// tosa.add(x, splat 0) / tosa.logical_or(x, splat false): the ONNX
  /// importer's Expand (isExpandIdiom).
  LogicalResult emitExpandIdiom(Operation *op);
  LogicalResult emitTile(tosa::TileOp op);
  /// tensor.splat with run-time dims: `shape` of a value with the same dims,
  /// then `constant_of_shape`. Nothing when only expand idioms read it.
  LogicalResult emitSplat(tensor::SplatOp op);
  /// The dims of a tensor.splat / expand target (static, or one input dim
  /// each); failure after an error at `op`.
  FailureOr<DimList> splatDims(Operation *op, tensor::SplatOp splat);
  LogicalResult emitSlice(Operation *op, Value source, Value result,
                          ArrayRef<OpFoldResult> offsets,
                          ArrayRef<OpFoldResult> sizes,
                          ArrayRef<OpFoldResult> strides);
  LogicalResult emitInsertSlice(tensor::InsertSliceOp op);
  LogicalResult emitStridedInsert(tensor::InsertSliceOp op);
  LogicalResult emitGather(tosa::GatherOp op);

  /// dims of `v` as the plan knows them.
  DimList dimsOf(Value v) {
    DimList dims;
    auto type = cast<RankedTensorType>(v.getType());
    for (int64_t d = 0; d < type.getRank(); ++d) {
      DimInfo info = ctx_.dimOf(v, d);
      if (!info.isSymbolic() && info.size <= 0 && !type.isDynamicDim(d))
        info.size = type.getDimSize(d);
      dims.push_back(info);
    }
    return dims;
  }
  /// True when size `s` of a slice is all of dim `d` of `source`.
  bool isFullDim(Value source, int64_t d, OpFoldResult s);

  EmitterContext &ctx_;
};

SmallVector<DimInfo> DenseOpEmitter::broadcastDims(Value result,
                                                   ValueRange operands) {
  auto type = cast<RankedTensorType>(result.getType());
  SmallVector<DimInfo> dims(type.getRank());
  for (int64_t d = 0; d < type.getRank(); ++d)
    for (Value in : operands) {
      auto inType = dyn_cast<RankedTensorType>(in.getType());
      if (!inType || inType.getRank() != type.getRank())
        continue;
      DimInfo info = ctx_.dimOf(in, d);
      if (info.isSymbolic()) {
        dims[d] = info;
        break;
      }
    }
  return dims;
}

LogicalResult DenseOpEmitter::emitBroadcasting(Operation *op,
                                               const std::string &kernel,
                                               ValueRange operands) {
  return ctx_.emitSimple(op, kernel, operands,
                         broadcastDims(op->getResult(0), operands));
}

FailureOr<pb::Instruction *>
DenseOpEmitter::emitOnSlots(Operation *op, const std::string &kernel,
                            ArrayRef<int> inputs, ArrayRef<DimInfo> dims) {
  FailureOr<int> result = ctx_.defineResult(op, op->getResult(0), dims);
  if (failed(result))
    return failure();
  pb::Instruction *instr = builder().addInstruction(kernel, name(op));
  for (int s : inputs)
    instr->add_inputs(s);
  instr->add_outputs(*result);
  return instr;
}

FailureOr<int> DenseOpEmitter::tempSlot(Operation *op, Type elementType,
                                        const DimList &dims,
                                        const std::string &suffix) {
  int slot = builder().defineTypedSlot(elementType, dims, name(op) + suffix);
  if (slot < 0) {
    op->emitError() << "'" << op->getName()
                    << "': cannot define an intermediate slot of "
                    << elementType;
    return failure();
  }
  return slot;
}

FailureOr<int> DenseOpEmitter::scalarSlot(Operation *op, Type elementType,
                                          double value, int64_t rank,
                                          const std::string &suffix) {
  auto type = RankedTensorType::get(SmallVector<int64_t>(rank, 1), elementType);
  Attribute element;
  if (auto f = dyn_cast<FloatType>(elementType))
    element = FloatAttr::get(f, value);
  else
    element = IntegerAttr::get(elementType, static_cast<int64_t>(value));
  int slot = builder().materializeConstant(
      DenseElementsAttr::get(type, element), name(op) + suffix);
  if (slot < 0) {
    op->emitError() << "'" << op->getName() << "': cannot write a constant of "
                    << elementType;
    return failure();
  }
  return slot;
}

LogicalResult DenseOpEmitter::emitUnaryMath(Operation *op,
                                            const std::string &kernel) {
  Value x = op->getOperand(0);
  if (!isa<FloatType>(cast<RankedTensorType>(x.getType()).getElementType()))
    return op->emitError() << "'" << op->getName() << "': the runtime's '"
                           << kernel
                           << "' kernel takes float tensors only, not "
                           << x.getType();
  return ctx_.emitSimple(op, kernel, ValueRange{x}, dimsOf(x));
}

/// 1 / x (tosa.reciprocal) or 1 / sqrt(x) (tosa.rsqrt) as `div` of a
/// constant one (and `sqrt` first).
LogicalResult DenseOpEmitter::emitReciprocal(Operation *op, bool sqrtFirst) {
  Value x = op->getOperand(0);
  auto type = cast<RankedTensorType>(x.getType());
  if (!isa<FloatType>(type.getElementType()))
    return op->emitError() << "'" << op->getName()
                           << "' is supported on float tensors only";
  FailureOr<int> in = ctx_.operandSlot(op, x);
  FailureOr<int> one =
      scalarSlot(op, type.getElementType(), 1.0, type.getRank(), ".one");
  if (failed(in) || failed(one))
    return failure();
  DimList dims = dimsOf(x);
  int denominator = *in;
  if (sqrtFirst) {
    FailureOr<int> root =
        tempSlot(op, Float32Type::get(op->getContext()), dims, ".sqrt");
    if (failed(root))
      return failure();
    pb::Instruction *instr = builder().addInstruction(kn::kSqrt, name(op));
    instr->add_inputs(*in);
    instr->add_outputs(*root);
    denominator = *root;
  }
  return emitOnSlots(op, kn::kDiv, {*one, denominator}, dims);
}

LogicalResult DenseOpEmitter::emitReduce(Operation *op,
                                         const std::string &kernel,
                                         int64_t axis) {
  Value x = op->getOperand(0);
  DimList dims = dimsOf(x);
  if (axis < 0 || axis >= static_cast<int64_t>(dims.size()))
    return op->emitError() << "'" << op->getName() << "': axis " << axis
                           << " is out of range";
  dims[axis] = DimInfo{1, {}};
  pb::Instruction *instr = nullptr;
  if (failed(ctx_.emitSimple(op, kernel, ValueRange{x}, dims, &instr)))
    return failure();
  addIntsAttr(instr, "axes", {axis});
  addIntAttr(instr, "keepdims", 1);
  return success();
}

LogicalResult DenseOpEmitter::emitCast(Operation *op) {
  Value x = op->getOperand(0);
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  std::string to = castDTypeName(resultType.getElementType());
  if (to.empty())
    return op->emitError() << "'" << op->getName() << "': the plan has no "
                           << "dtype for " << resultType.getElementType();
  // The runtime's float -> integer cast truncates toward zero and its
  // integer -> wider integer cast sign-extends, as these arith ops do; an
  // unsigned conversion from a non-bool integer would differ.
  auto inElement = cast<RankedTensorType>(x.getType()).getElementType();
  if (isa<arith::ExtUIOp, arith::UIToFPOp>(op) && !inElement.isInteger(1))
    return op->emitError() << "'" << op->getName()
                           << "' from a non-bool integer is not supported by "
                              "the plan emitter (the cast kernel is signed)";
  if (isa<arith::FPToUIOp>(op))
    return op->emitError("'arith.fptoui' is not supported by the plan "
                         "emitter (the cast kernel is signed)");
  pb::Instruction *instr = nullptr;
  if (failed(ctx_.emitSimple(op, kn::kCast, ValueRange{x}, dimsOf(x), &instr)))
    return failure();
  addStringAttr(instr, "to", to);
  return success();
}

/// The values of a tosa.const_shape.
bool constShapeValues(Value v, SmallVectorImpl<int64_t> &out) {
  auto c = v.getDefiningOp<tosa::ConstShapeOp>();
  if (!c)
    return false;
  for (const APInt &i : c.getValues().getValues<APInt>())
    out.push_back(i.getSExtValue());
  return true;
}

/// A splat of zero (or false) built by tensor.splat.
bool isZeroSplat(Value v) {
  auto splat = v.getDefiningOp<tensor::SplatOp>();
  if (!splat)
    return false;
  Attribute value;
  if (!matchPattern(splat.getInput(), m_Constant(&value)))
    return false;
  if (auto f = dyn_cast<FloatAttr>(value))
    return f.getValue().isZero() && !f.getValue().isNegative();
  if (auto i = dyn_cast<IntegerAttr>(value))
    return i.getValue().isZero();
  return false;
}

FailureOr<DimList> DenseOpEmitter::splatDims(Operation *op,
                                             tensor::SplatOp splat) {
  auto type = cast<RankedTensorType>(splat.getType());
  DimList dims;
  unsigned dynamicIndex = 0;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    DimInfo target;
    if (!type.isDynamicDim(d)) {
      target.size = type.getDimSize(d);
    } else {
      Value size = splat.getDynamicSizes()[dynamicIndex++];
      FailureOr<ShapeExpr> e = ctx_.shapeScalar(size);
      if (failed(e) || (!e->exponents.empty() &&
                        (e->constant != 1 || e->exponents.size() != 1 ||
                         e->exponents.begin()->second != 1))) {
        op->emitError() << "'" << op->getName() << "': dim " << d
                        << " of the splat is not a constant or one input dim";
        return failure();
      }
      if (e->exponents.empty())
        target.size = e->constant;
      else
        target.symbol = e->exponents.begin()->first;
    }
    dims.push_back(target);
  }
  return dims;
}

static bool sameDims(const DimList &a, const DimList &b) {
  if (a.size() != b.size())
    return false;
  for (size_t d = 0; d < a.size(); ++d)
    if (a[d].symbol != b[d].symbol ||
        (!a[d].isSymbolic() && a[d].size != b[d].size))
      return false;
  return true;
}

LogicalResult DenseOpEmitter::emitSplat(tensor::SplatOp op) {
  bool onlyExpands =
      llvm::all_of(op->getUsers(),
                   [](Operation *user) {
                     return isa<tosa::AddOp, tosa::LogicalOrOp>(user);
                   }) &&
      isZeroSplat(op.getResult());
  if (onlyExpands)
    return success(); // read by emitExpandIdiom
  FailureOr<DimList> dims = splatDims(op, op);
  if (failed(dims))
    return failure();
  // A value with exactly these dims, named by one of the sizes.
  Value like;
  for (Value size : op.getDynamicSizes()) {
    Value v = size;
    while (auto cast = v.getDefiningOp<arith::IndexCastOp>())
      v = cast.getIn();
    auto dim = v.getDefiningOp<tensor::DimOp>();
    if (dim && builder().lookupDims(dim.getSource()) &&
        sameDims(dimsOf(dim.getSource()), *dims)) {
      like = dim.getSource();
      break;
    }
  }
  Attribute value;
  if (!matchPattern(op.getInput(), m_Constant(&value)))
    return op.emitError("'tensor.splat' of a non-constant is not supported "
                        "by the plan emitter");
  double number = 0;
  if (auto f = dyn_cast<FloatAttr>(value))
    number = f.getValueAsDouble();
  else if (auto i = dyn_cast<IntegerAttr>(value))
    number = static_cast<double>(i.getValue().getSExtValue());
  if (auto i = dyn_cast<IntegerAttr>(value); i && i.getType().isInteger(1))
    number = i.getValue().isZero() ? 0 : 1;
  std::string dtype = castDTypeName(op.getType().getElementType());
  if (dtype.empty())
    return op.emitError("'tensor.splat' of ")
           << op.getType().getElementType() << " cannot be held by a plan slot";
  FailureOr<int> shape = failure();
  if (like) {
    // The shape of a value with exactly these dims.
    FailureOr<int> likeSlot = ctx_.operandSlot(op, like);
    shape = failed(likeSlot)
                ? FailureOr<int>(failure())
                : tempSlot(op, IntegerType::get(op.getContext(), 64),
                           DimList{DimInfo{
                               static_cast<int64_t>(dims->size()), {}}},
                           ".shape");
    if (failed(shape))
      return failure();
    pb::Instruction *shapeInstr =
        builder().addInstruction(kn::kShape, name(op));
    shapeInstr->add_inputs(*likeSlot);
    shapeInstr->add_outputs(*shape);
  } else {
    // No such value (`new_ones(B, 3)` next to an [B, 6] input): the shape
    // from the symbols' holders.
    SmallVector<ShapeExpr> exprs;
    for (const DimInfo &d : *dims) {
      ShapeExpr e;
      if (d.isSymbolic())
        e.exponents[d.symbol] = 1;
      else
        e.constant = d.size;
      exprs.push_back(e);
    }
    shape = ctx_.shapeTensor(op, exprs);
    if (failed(shape))
      return failure();
  }
  FailureOr<pb::Instruction *> fill =
      emitOnSlots(op, kn::kConstantOfShape, {*shape}, *dims);
  if (failed(fill))
    return failure();
  pb::Attribute *v = (*fill)->add_attrs();
  v->set_name("value");
  v->set_f(number);
  addStringAttr(*fill, "dtype", dtype);
  return success();
}

namespace {

/// Dim `d` of `x` is run-time size `size`: `x` is a slice of that size, or
/// an elementwise op's result of the same type as such an operand.
bool hasRunTimeSize(Value x, int64_t d, Value size, int depth = 0) {
  if (auto slice = x.getDefiningOp<tensor::ExtractSliceOp>())
    return dyn_cast<Value>(slice.getMixedSizes()[d]) == size;
  Operation *def = x.getDefiningOp();
  if (!def || depth > 8 ||
      !isa<tosa::AddOp, tosa::SubOp, tosa::MulOp, tosa::MaximumOp,
           tosa::MinimumOp, tosa::ClampOp, tosa::SigmoidOp, tosa::TanhOp,
           tosa::ExpOp, tosa::LogOp, tosa::AbsOp, tosa::NegateOp,
           tosa::ReciprocalOp, tosa::RsqrtOp, tosa::CastOp, tosa::SelectOp,
           tosa::PowOp>(def))
    return false;
  // Elementwise: the operand of x's type sets dim d when every other
  // operand of x's rank is 1 there (broadcast).
  auto type = cast<RankedTensorType>(x.getType());
  Value via;
  for (Value operand : def->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(operand.getType());
    if (!t || t.getRank() != type.getRank())
      continue; // tosa.mul's shift
    if (t == type && !via)
      via = operand;
    else if (t != type && t.getDimSize(d) != 1)
      return false;
  }
  return via && hasRunTimeSize(via, d, size, depth + 1);
}

} // namespace

LogicalResult DenseOpEmitter::emitExpandIdiom(Operation *op) {
  Value x = op->getOperand(0), zeros = op->getOperand(1);
  if (isZeroSplat(x))
    std::swap(x, zeros);
  auto splat = zeros.getDefiningOp<tensor::SplatOp>();
  auto xType = cast<RankedTensorType>(x.getType());
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  if (xType.getRank() != outType.getRank())
    return op->emitError() << "'" << op->getName()
                           << "': an expand must keep the rank";
  // The target's dims: static sizes, or the dims the splat's sizes name.
  DimList xDims = dimsOf(x);
  SmallVector<DimInfo> outDims(outType.getRank());
  SmallVector<int64_t> shape;
  unsigned dynamicIndex = 0;
  bool identity = true;
  for (int64_t d = 0; d < outType.getRank(); ++d) {
    DimInfo target;
    if (!outType.isDynamicDim(d)) {
      target.size = outType.getDimSize(d);
    } else {
      Value size = splat.getDynamicSizes()[dynamicIndex++];
      if (hasRunTimeSize(x, d, size)) { // zeros of x's own run-time size
        shape.push_back(1);
        outDims[d] = xDims[d];
        continue;
      }
      FailureOr<ShapeExpr> e = ctx_.shapeScalar(size);
      if (failed(e) || (!e->exponents.empty() &&
                        (e->constant != 1 || e->exponents.size() != 1 ||
                         e->exponents.begin()->second != 1)))
        return op->emitError()
               << "'" << op->getName() << "' (an expand): dim " << d
               << " of the target is not a constant or one input dim";
      if (e->exponents.empty())
        target.size = e->constant;
      else
        target.symbol = e->exponents.begin()->first;
    }
    const DimInfo &in = xDims[d];
    bool same = target.isSymbolic()
                    ? in.symbol == target.symbol
                    : !in.isSymbolic() && in.size == target.size;
    if (same) {
      shape.push_back(1); // broadcast(x, 1) keeps x's dim
    } else if (!target.isSymbolic() && !in.isSymbolic() && in.size == 1) {
      shape.push_back(target.size);
      identity = false;
    } else {
      return op->emitError()
             << "'" << op->getName() << "' (an expand): dim " << d
             << " grows from a size-1 dim to a run-time size, which the plan "
                "emitter cannot express";
    }
    outDims[d] = target;
  }
  if (identity) {
    if (failed(ctx_.emitSimple(op, kn::kIdentity, ValueRange{x}, outDims)))
      return failure();
    return success();
  }
  pb::Instruction *instr = nullptr;
  if (failed(ctx_.emitSimple(op, kn::kExpand, ValueRange{x}, outDims, &instr)))
    return failure();
  addIntsAttr(instr, "shape", shape);
  return success();
}

LogicalResult DenseOpEmitter::emitTile(tosa::TileOp op) {
  // Tiling unit dims is an expand; other tiles are not supported.
  SmallVector<int64_t> multiples;
  if (failed(op.getConstantMultiples(multiples)))
    return op.emitError("'tosa.tile' needs constant multiples");
  DimList dims = dimsOf(op.getInput1());
  SmallVector<int64_t> shape;
  for (size_t d = 0; d < multiples.size(); ++d) {
    if (multiples[d] != 1 && (dims[d].isSymbolic() || dims[d].size != 1))
      return op.emitError("'tosa.tile' is supported only where it repeats "
                          "size-1 dims (an expand)");
    shape.push_back(multiples[d] == 1 ? 1 : multiples[d]);
    if (multiples[d] != 1)
      dims[d].size = multiples[d];
  }
  pb::Instruction *instr = nullptr;
  if (failed(ctx_.emitSimple(op, kn::kExpand, ValueRange{op.getInput1()}, dims,
                             &instr)))
    return failure();
  addIntsAttr(instr, "shape", shape);
  return success();
}

bool DenseOpEmitter::isFullDim(Value source, int64_t d, OpFoldResult s) {
  DimInfo in = ctx_.dimOf(source, d);
  if (std::optional<int64_t> c = getConstantIntValue(s))
    return !in.isSymbolic() && in.size == *c;
  FailureOr<ShapeExpr> e = ctx_.shapeScalar(cast<Value>(s));
  if (failed(e))
    return false;
  if (e->exponents.empty())
    return !in.isSymbolic() && in.size == e->constant;
  return in.isSymbolic() && e->constant == 1 && e->exponents.size() == 1 &&
         e->exponents.begin()->first == in.symbol &&
         e->exponents.begin()->second == 1;
}

namespace {

/// `v` is `tensor.dim` of dim `d` of `source` (through index casts).
bool isDimOf(Value v, Value source, int64_t d) {
  while (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  auto dim = v.getDefiningOp<tensor::DimOp>();
  return dim && dim.getSource() == source &&
         getConstantIntValue(dim.getIndex()) == std::optional<int64_t>(d);
}

/// A slice bound as the ONNX importer writes one on a run-time dim: a
/// constant, `min(dim, c)` (c >= 0; the slice kernel clamps c to the dim
/// itself), or the dim (INT64_MAX: to the end).
std::optional<int64_t> clampedBound(OpFoldResult bound, Value source,
                                    int64_t d) {
  if (std::optional<int64_t> c = getConstantIntValue(bound))
    return c;
  auto v = dyn_cast<Value>(bound);
  if (!v)
    return std::nullopt;
  if (isDimOf(v, source, d))
    return std::numeric_limits<int64_t>::max();
  if (auto min = v.getDefiningOp<arith::MinSIOp>())
    for (auto [x, y] : {std::pair(min.getLhs(), min.getRhs()),
                        std::pair(min.getRhs(), min.getLhs())})
      if (isDimOf(x, source, d))
        if (std::optional<int64_t> c = getConstantIntValue(y); c && *c >= 0)
          return c;
  return std::nullopt;
}

/// The end of a unit-stride slice of run-time size `max(end - offset, 0)`
/// (what the importer writes for `x[s:e]` on a run-time dim), or nullopt.
std::optional<int64_t> clampedEnd(OpFoldResult size, OpFoldResult offset,
                                  Value source, int64_t d) {
  auto v = dyn_cast<Value>(size);
  auto max = v ? v.getDefiningOp<arith::MaxSIOp>() : arith::MaxSIOp();
  if (!max)
    return std::nullopt;
  for (auto [x, y] : {std::pair(max.getLhs(), max.getRhs()),
                      std::pair(max.getRhs(), max.getLhs())}) {
    auto sub = x.getDefiningOp<arith::SubIOp>();
    if (!sub || getConstantIntValue(y) != std::optional<int64_t>(0))
      continue;
    std::optional<int64_t> start = clampedBound(offset, source, d);
    std::optional<int64_t> subStart =
        clampedBound(OpFoldResult(sub.getRhs()), source, d);
    if (!start || start != subStart)
      continue;
    return clampedBound(OpFoldResult(sub.getLhs()), source, d);
  }
  return std::nullopt;
}

} // namespace

LogicalResult DenseOpEmitter::emitSlice(Operation *op, Value source,
                                        Value result,
                                        ArrayRef<OpFoldResult> offsets,
                                        ArrayRef<OpFoldResult> sizes,
                                        ArrayRef<OpFoldResult> strides) {
  auto srcType = cast<RankedTensorType>(source.getType());
  auto outType = cast<RankedTensorType>(result.getType());
  if (srcType.getRank() != outType.getRank())
    return op->emitError() << "'" << op->getName()
                           << "': rank-reducing slices are not supported by "
                              "the plan emitter";
  SmallVector<int64_t> starts, ends, axes, steps;
  SmallVector<DimInfo> dims(outType.getRank());
  for (int64_t d = 0; d < srcType.getRank(); ++d) {
    std::optional<int64_t> offset = clampedBound(offsets[d], source, d);
    std::optional<int64_t> size = getConstantIntValue(sizes[d]);
    std::optional<int64_t> stride = getConstantIntValue(strides[d]);
    if (!offset || !stride || *stride < 1)
      return op->emitError() << "'" << op->getName() << "': dim " << d
                             << " needs a constant offset and a positive "
                                "constant stride";
    if (*offset == 0 && *stride == 1 &&
        ((size && *size == kToEnd) || isFullDim(source, d, sizes[d]))) {
      dims[d] = ctx_.dimOf(source, d);
      continue; // all of the dim
    }
    // x[s:e] on a run-time dim: the kernel clamps s and e to the dim, and
    // the result's size is known at run time only.
    if (!size && *stride == 1)
      if (std::optional<int64_t> end =
              clampedEnd(sizes[d], offsets[d], source, d)) {
        starts.push_back(*offset);
        ends.push_back(*end);
        axes.push_back(d);
        steps.push_back(1);
        dims[d] = DimInfo{};
        continue;
      }
    if (!size)
      return op->emitError()
             << "'" << op->getName() << "': dim " << d
             << " has a run-time size that is not the whole dim (not "
                "supported by the plan emitter)";
    if (*size == kToEnd && *stride == 1) { // from the offset to the end
      starts.push_back(*offset);
      ends.push_back(kToEnd);
      axes.push_back(d);
      steps.push_back(1);
      dims[d] = DimInfo{};
      continue;
    }
    starts.push_back(*offset);
    ends.push_back(*size == 0 ? *offset : *offset + (*size - 1) * *stride + 1);
    axes.push_back(d);
    steps.push_back(*stride);
    dims[d] = DimInfo{*size, {}};
  }
  if (axes.empty())
    return ctx_.emitSimple(op, kn::kIdentity, ValueRange{source}, dims);
  pb::Instruction *instr = nullptr;
  if (failed(ctx_.emitSimple(op, kn::kSlice, ValueRange{source}, dims, &instr)))
    return failure();
  addIntsAttr(instr, "starts", starts);
  addIntsAttr(instr, "ends", ends);
  addIntsAttr(instr, "axes", axes);
  addIntsAttr(instr, "steps", steps);
  return success();
}

/// A strided box write: `scatter_nd` with constant indices enumerating the
/// box over the leading dims up to the last partial one (which must be
/// static), source as the updates.
LogicalResult DenseOpEmitter::emitStridedInsert(tensor::InsertSliceOp op) {
  Value dest = op.getDest(), source = op.getSource();
  DimList destDims = dimsOf(dest);
  int64_t rank = destDims.size(), depth = 0;
  SmallVector<int64_t> offsets, sizes, strides;
  for (int64_t d = 0; d < rank; ++d) {
    std::optional<int64_t> o = getConstantIntValue(op.getMixedOffsets()[d]);
    std::optional<int64_t> s = getConstantIntValue(op.getMixedSizes()[d]);
    std::optional<int64_t> t = getConstantIntValue(op.getMixedStrides()[d]);
    bool full = o == std::optional<int64_t>(0) &&
                t == std::optional<int64_t>(1) &&
                isFullDim(dest, d, op.getMixedSizes()[d]);
    if (!full)
      depth = d + 1;
    offsets.push_back(o.value_or(-1));
    sizes.push_back(s.value_or(-1));
    strides.push_back(t.value_or(0));
  }
  SmallVector<int64_t> box;
  for (int64_t d = 0; d < depth; ++d) {
    if (offsets[d] < 0 || sizes[d] < 0 || strides[d] < 1 ||
        destDims[d].isSymbolic() ||
        offsets[d] + (sizes[d] - 1) * strides[d] >= destDims[d].size)
      return op.emitError()
             << "'tensor.insert_slice' with strides needs constant, in-range "
                "offsets, sizes and strides and static dims up to the last "
                "written dim (dim "
             << d << " is not)";
    box.push_back(sizes[d]);
  }
  int64_t count = 1;
  for (int64_t s : box)
    count *= s;
  std::vector<int64_t> coords;
  SmallVector<int64_t> index(depth, 0);
  for (int64_t n = 0; n < count; ++n) {
    for (int64_t d = 0; d < depth; ++d)
      coords.push_back(offsets[d] + index[d] * strides[d]);
    for (int64_t d = depth - 1; d >= 0; --d) {
      if (++index[d] < box[d])
        break;
      index[d] = 0;
    }
  }
  SmallVector<int64_t> indexShape(box);
  indexShape.push_back(depth);
  auto indexType =
      RankedTensorType::get(indexShape, IntegerType::get(op.getContext(), 64));
  int indices = builder().materializeConstant(
      DenseElementsAttr::get(indexType, ArrayRef<int64_t>(coords)),
      name(op) + ".indices");
  FailureOr<int> destSlot = ctx_.operandSlot(op, dest);
  FailureOr<int> sourceSlot = ctx_.operandSlot(op, source);
  if (indices < 0 || failed(destSlot) || failed(sourceSlot))
    return op.emitError("'tensor.insert_slice': cannot write its operands");
  return success(succeeded(emitOnSlots(
      op, kn::kScatterNd, {*destSlot, indices, *sourceSlot}, destDims)));
}

/// dest with a box replaced by source, as slices of dest and concats: along
/// the first partial axis a, concat(dest[.., :o], inner, dest[.., o+s:]),
/// where inner is source, or (when more axes are partial) the same
/// construction on dest[.., o:o+s] for the remaining axes.
LogicalResult DenseOpEmitter::emitInsertSlice(tensor::InsertSliceOp op) {
  Value dest = op.getDest(), source = op.getSource();
  auto destType = op.getDestType();
  if (op.getSourceType().getRank() != destType.getRank())
    return op.emitError("'tensor.insert_slice': a rank-reducing insert is "
                        "not supported by the plan emitter");
  struct Partial {
    int64_t axis, offset, size;
  };
  SmallVector<Partial> partial;
  DimList destDims = dimsOf(dest);
  bool unitStrides = llvm::all_of(op.getMixedStrides(), [](OpFoldResult s) {
    return getConstantIntValue(s) == std::optional<int64_t>(1);
  });
  if (!unitStrides)
    return emitStridedInsert(op);
  for (int64_t d = 0; d < destType.getRank(); ++d) {
    std::optional<int64_t> offset =
        getConstantIntValue(op.getMixedOffsets()[d]);
    OpFoldResult sizeOfr = op.getMixedSizes()[d];
    if (!offset)
      return op.emitError() << "'tensor.insert_slice': dim " << d
                            << " needs a constant offset";
    if (*offset == 0 && isFullDim(dest, d, sizeOfr))
      continue;
    std::optional<int64_t> size = getConstantIntValue(sizeOfr);
    if (!size || destDims[d].isSymbolic())
      return op.emitError()
             << "'tensor.insert_slice': dim " << d
             << " is written in part over a run-time size (not supported "
                "by the plan emitter)";
    if (*offset < 0 || *offset + *size > destDims[d].size)
      return op.emitError()
             << "'tensor.insert_slice': dim " << d << " writes [" << *offset
             << ", " << *offset + *size << ") of a dim of " << destDims[d].size;
    if (*size > 0)
      partial.push_back({d, *offset, *size});
  }
  FailureOr<int> destSlot = ctx_.operandSlot(op, dest);
  FailureOr<int> sourceSlot = ctx_.operandSlot(op, source);
  if (failed(destSlot) || failed(sourceSlot))
    return failure();
  Type element = destType.getElementType();
  std::string base = name(op);
  int counter = 0;
  auto slice = [&](int slot, const DimList &dims, int64_t axis, int64_t lo,
                   int64_t hi) -> FailureOr<std::pair<int, DimList>> {
    DimList out = dims;
    out[axis] = DimInfo{hi - lo, {}};
    FailureOr<int> s =
        tempSlot(op, element, out, ".part" + std::to_string(counter++));
    if (failed(s))
      return failure();
    pb::Instruction *instr = builder().addInstruction(kn::kSlice, base);
    instr->add_inputs(slot);
    instr->add_outputs(*s);
    addIntsAttr(instr, "starts", {lo});
    addIntsAttr(instr, "ends", {hi});
    addIntsAttr(instr, "axes", {axis});
    return std::make_pair(*s, out);
  };
  // Build from the innermost partial axis out: level k works on the box of
  // axes [0, k) of dest.
  std::function<FailureOr<int>(size_t, int, const DimList &, int)> build =
      [&](size_t k, int region, const DimList &regionDims,
          int outSlot) -> FailureOr<int> {
    if (k == partial.size())
      return *sourceSlot;
    const Partial &p = partial[k];
    int64_t n = regionDims[p.axis].size;
    SmallVector<int> pieces;
    if (p.offset > 0) {
      auto head = slice(region, regionDims, p.axis, 0, p.offset);
      if (failed(head))
        return failure();
      pieces.push_back(head->first);
    }
    FailureOr<int> inner = *sourceSlot;
    if (k + 1 < partial.size()) {
      auto mid = slice(region, regionDims, p.axis, p.offset, p.offset + p.size);
      if (failed(mid))
        return failure();
      DimList innerDims = mid->second;
      FailureOr<int> innerOut =
          tempSlot(op, element, innerDims, ".part" + std::to_string(counter++));
      if (failed(innerOut))
        return failure();
      inner = build(k + 1, mid->first, innerDims, *innerOut);
      if (failed(inner))
        return failure();
    }
    pieces.push_back(*inner);
    if (p.offset + p.size < n) {
      auto tail = slice(region, regionDims, p.axis, p.offset + p.size, n);
      if (failed(tail))
        return failure();
      pieces.push_back(tail->first);
    }
    pb::Instruction *instr = builder().addInstruction(
        pieces.size() == 1 ? kn::kIdentity : kn::kConcat, base);
    for (int s : pieces)
      instr->add_inputs(s);
    instr->add_outputs(outSlot);
    if (pieces.size() > 1)
      addIntAttr(instr, "axis", p.axis);
    return outSlot;
  };
  if (partial.empty()) // the source covers all of dest
    return ctx_.emitSimple(op, kn::kIdentity, ValueRange{source}, destDims);
  FailureOr<int> result = ctx_.defineResult(op, op.getResult(), destDims);
  if (failed(result))
    return failure();
  return success(succeeded(build(0, *destSlot, destDims, *result)));
}

/// tosa.gather values [N, K, C], indices [N, W] -> [N, W, C].
///  - N = 1: the `gather` kernel on axis 1 with the indices as [W]
///    (flattened at compile time when constant, else by a `reshape`).
///  - otherwise: `gather_elements` on axis 1 with the indices reshaped to
///    [N, W, 1] and (when C > 1) expanded to [N, W, C].
LogicalResult DenseOpEmitter::emitGather(tosa::GatherOp op) {
  Value values = op.getValues(), indices = op.getIndices();
  auto indicesType = cast<RankedTensorType>(indices.getType());
  Type indexElement = indicesType.getElementType();
  DimList vDims = dimsOf(values), iDims = dimsOf(indices);
  FailureOr<int> valuesSlot = ctx_.operandSlot(op, values);
  if (failed(valuesSlot))
    return failure();
  std::string base = name(op);
  SmallVector<DimInfo> outDims = {vDims[0], iDims[1], vDims[2]};
  bool batchOne = !vDims[0].isSymbolic() && vDims[0].size == 1;
  if (batchOne) {
    int indexSlot = -1;
    auto constant =
        dyn_cast_or_null<DenseElementsAttr>(builder().constantAttr(indices));
    if (constant && indicesType.hasStaticShape()) {
      int64_t w = indicesType.getDimSize(1);
      DenseElementsAttr flat =
          constant.reshape(RankedTensorType::get({w}, indexElement));
      indexSlot = builder().materializeConstant(flat, base + ".indices");
      if (indexSlot < 0)
        return op.emitError("'tosa.gather': cannot write the indices");
    } else {
      FailureOr<int> in = ctx_.operandSlot(op, indices);
      FailureOr<int> flat =
          failed(in)
              ? FailureOr<int>(failure())
              : tempSlot(op, indexElement, DimList{iDims[1]}, ".indices");
      if (failed(flat))
        return failure();
      pb::Instruction *reshape = builder().addInstruction(kn::kReshape, base);
      reshape->add_inputs(*in);
      reshape->add_outputs(*flat);
      addIntsAttr(reshape, "shape", {-1});
      indexSlot = *flat;
    }
    FailureOr<pb::Instruction *> instr =
        emitOnSlots(op, kn::kGather, {*valuesSlot, indexSlot}, outDims);
    if (failed(instr))
      return failure();
    addIntAttr(*instr, "axis", 1);
    return success();
  }
  FailureOr<int> in = ctx_.operandSlot(op, indices);
  if (failed(in))
    return failure();
  DimList idx3 = {iDims[0], iDims[1], DimInfo{1, {}}};
  FailureOr<int> column = tempSlot(op, indexElement, idx3, ".indices");
  if (failed(column))
    return failure();
  pb::Instruction *reshape = builder().addInstruction(kn::kReshape, base);
  reshape->add_inputs(*in);
  reshape->add_outputs(*column);
  addIntsAttr(reshape, "shape", {0, 0, 1});
  int indexSlot = *column;
  bool unitC = !vDims[2].isSymbolic() && vDims[2].size == 1;
  if (!unitC) {
    if (vDims[2].isSymbolic())
      return op.emitError("'tosa.gather' with N != 1 needs a static C (the "
                          "expand of the indices takes static sizes)");
    DimList expanded = {iDims[0], iDims[1], vDims[2]};
    FailureOr<int> wide = tempSlot(op, indexElement, expanded, ".indices_c");
    if (failed(wide))
      return failure();
    pb::Instruction *expand = builder().addInstruction(kn::kExpand, base);
    expand->add_inputs(*column);
    expand->add_outputs(*wide);
    addIntsAttr(expand, "shape", {1, 1, vDims[2].size});
    indexSlot = *wide;
  }
  FailureOr<pb::Instruction *> instr =
      emitOnSlots(op, kn::kGatherElements, {*valuesSlot, indexSlot}, outDims);
  if (failed(instr))
    return failure();
  addIntAttr(*instr, "axis", 1);
  return success();
}

LogicalResult DenseOpEmitter::emitTosaSlice(tosa::SliceOp s) {
  SmallVector<int64_t> start, size;
  if (!constShapeValues(s.getStart(), start) ||
      !constShapeValues(s.getSize(), size))
    return s.emitError("'tosa.slice' needs constant start and size");
  Builder b(s.getContext());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (size_t d = 0; d < start.size(); ++d) {
    offsets.push_back(b.getIndexAttr(start[d]));
    // -1: the rest of the dim (kToEnd where the dim is only known at run
    // time; the slice kernel clamps the end to the dim).
    DimInfo in = ctx_.dimOf(s.getInput1(), d);
    sizes.push_back(b.getIndexAttr(size[d] >= 0   ? size[d]
                                   : in.size > 0 ? in.size - start[d]
                                                 : kToEnd));
    strides.push_back(b.getIndexAttr(1));
  }
  return emitSlice(s, s.getInput1(), s.getResult(), offsets, sizes, strides);
}

/// arith.trunci of a constant tensor (the i64 -> i32 index constants of
/// tosa.gather) becomes a constant; of a computed tensor, a cast.
LogicalResult DenseOpEmitter::emitTruncI(arith::TruncIOp op) {
  auto dense =
      dyn_cast_or_null<DenseElementsAttr>(builder().constantAttr(op.getIn()));
  if (!dense)
    return emitCast(op);
  auto type = cast<RankedTensorType>(op.getType());
  if (!type.hasStaticShape())
    return op.emitError("'arith.trunci' of a constant needs a static shape");
  SmallVector<APInt> values;
  for (const APInt &v : dense.getValues<APInt>())
    values.push_back(v.trunc(type.getElementTypeBitWidth()));
  if (!builder().addPendingConstant(op.getResult(),
                                    DenseElementsAttr::get(type, values)))
    return op.emitError("'arith.trunci': cannot record the constant");
  return success();
}

/// tosa.add(x, splat 0) or tosa.logical_or(x, splat false).
bool isExpandIdiom(Operation *op) {
  return isZeroSplat(op->getOperand(0)) || isZeroSplat(op->getOperand(1));
}

/// arith.cmpf/cmpi `x != 0`: the importer's Cast to bool.
template <typename CmpOp, auto NotEqual> bool isNonZeroTest(Operation *op) {
  auto cmp = cast<CmpOp>(op);
  return cmp.getPredicate() == NotEqual && isZeroConstant(cmp.getRhs());
}

ArrayRef<OpLowering<DenseOpEmitter::Lower>> DenseOpEmitter::lowerings() {
  using E = DenseOpEmitter;
  static const OpLowering<Lower> table[] = {
      {tosa::AddOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitExpandIdiom(op); },
       isExpandIdiom},
      {tosa::LogicalOrOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitExpandIdiom(op); },
       isExpandIdiom},
      {tosa::MulOp::getOperationName(),
       [](E &e, Operation *op) -> LogicalResult {
         auto m = cast<tosa::MulOp>(op);
         if (!isZeroConstant(m.getShift()))
           return m.emitError("'tosa.mul' with a non-zero shift is not "
                              "supported by the plan emitter");
         return e.emitBroadcasting(op, kn::kMul,
                                   ValueRange{m.getInput1(), m.getInput2()});
       }},
      {tosa::MaximumOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitBroadcasting(op, kn::kMax, op->getOperands());
       }},
      {tosa::MinimumOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitBroadcasting(op, kn::kMin, op->getOperands());
       }},
      {tosa::EqualOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitBroadcasting(op, kn::kEqual, op->getOperands());
       }},
      {tosa::GreaterOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitBroadcasting(op, kn::kGreater, op->getOperands());
       }},
      {tosa::GreaterEqualOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitBroadcasting(op, kn::kGreaterEqual, op->getOperands());
       }},
      {tosa::SelectOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitBroadcasting(op, kn::kWhere, op->getOperands());
       }},
      {tosa::ExpOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitUnaryMath(op, kn::kExp); }},
      {tosa::LogOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitUnaryMath(op, kn::kLog); }},
      {tosa::AbsOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitUnaryMath(op, kn::kAbs); }},
      {tosa::NegateOp::getOperationName(),
       [](E &e, Operation *op) -> LogicalResult {
         auto n = cast<tosa::NegateOp>(op);
         if (!isZeroConstant(n.getInput1Zp()) ||
             !isZeroConstant(n.getOutputZp()))
           return n.emitError("'tosa.negate' with non-zero zero points is "
                              "not supported by the plan emitter");
         return e.emitUnaryMath(op, kn::kNeg);
       }},
      {tosa::ReciprocalOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitReciprocal(op, false); }},
      {tosa::RsqrtOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitReciprocal(op, true); }},
      {tosa::ReduceSumOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitReduce(op, kn::kReduceSum,
                             cast<tosa::ReduceSumOp>(op).getAxis());
       }},
      {tosa::ReduceMaxOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitReduce(op, kn::kReduceMax,
                             cast<tosa::ReduceMaxOp>(op).getAxis());
       }},
      {tosa::TileOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitTile(cast<tosa::TileOp>(op)); }},
      {tosa::GatherOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitGather(cast<tosa::GatherOp>(op));
       }},
      {tosa::SliceOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitTosaSlice(cast<tosa::SliceOp>(op));
       }},
      {tensor::ExtractSliceOp::getOperationName(),
       [](E &e, Operation *op) {
         auto s = cast<tensor::ExtractSliceOp>(op);
         return e.emitSlice(op, s.getSource(), s.getResult(),
                            s.getMixedOffsets(), s.getMixedSizes(),
                            s.getMixedStrides());
       }},
      {tensor::InsertSliceOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitInsertSlice(cast<tensor::InsertSliceOp>(op));
       }},
      {tensor::SplatOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitSplat(cast<tensor::SplatOp>(op));
       }},
      {arith::ExtSIOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitCast(op); }},
      {arith::ExtUIOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitCast(op); }},
      {arith::SIToFPOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitCast(op); }},
      {arith::UIToFPOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitCast(op); }},
      {arith::FPToSIOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitCast(op); }},
      {arith::FPToUIOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitCast(op); }},
      {arith::ExtFOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitCast(op); }},
      {arith::TruncFOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitCast(op); }},
      {arith::TruncIOp::getOperationName(),
       [](E &e, Operation *op) {
         return e.emitTruncI(cast<arith::TruncIOp>(op));
       }},
      {arith::CmpFOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitCast(op); },
       isNonZeroTest<arith::CmpFOp, arith::CmpFPredicate::UNE>},
      {arith::CmpIOp::getOperationName(),
       [](E &e, Operation *op) { return e.emitCast(op); },
       isNonZeroTest<arith::CmpIOp, arith::CmpIPredicate::ne>},
  };
  return table;
}

/// The row lowering `op`: ops with one ranked tensor result only (scalar
/// index arithmetic is read by the shape evaluation).
const OpLowering<DenseOpEmitter::Lower> *denseLowering(Operation *op) {
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return nullptr;
  return findLowering(DenseOpEmitter::lowerings(), op);
}

} // namespace

bool isDenseOp(Operation *op) { return denseLowering(op); }

LogicalResult emitDenseOp(EmitterContext &ctx, Operation *op) {
  const OpLowering<DenseOpEmitter::Lower> *row = denseLowering(op);
  if (!row)
    return op->emitError("'") << op->getName() << "' is not a dense op";
  DenseOpEmitter emitter(ctx);
  return row->lower(emitter, op);
}

} // namespace mlir::ember::plan_emitter
