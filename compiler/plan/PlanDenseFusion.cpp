//===- PlanDenseFusion.cpp - softmax, layer_norm, DLRM dot interaction ----===//
//
// The ONNX importer decomposes Softmax and LayerNormalization into tosa
// reductions and elementwise ops, and torch exports the DLRM interaction as
// bmm + transposes/reshapes + a constant-index gather + concat. These
// patterns become one `softmax`, `layer_norm` or `dot_interaction`
// instruction (docs/kernels-dense.md); anything that does not match exactly
// is emitted op by op (PlanDenseOps.cpp), which computes the same values.
//
//===----------------------------------------------------------------------===//
#include "plan/PlanConstantFolding.h"
#include "plan/PlanEmitterContext.h"
#include "plan/PlanLinearFusion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

#include "kernel_contract/kernel_contract.h"
#include <cmath>
#include <numeric>

namespace kn = ::ember::contract::kernel_names;

namespace mlir::ember::plan_emitter {
namespace {

/// The float value of a splat constant (possibly reshaped), or nullopt.
std::optional<double> splatValue(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<tosa::ReshapeOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
            def)) {
      v = def->getOperand(0);
      continue;
    }
    break;
  }
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// The constant (after the emitter folded reshapes of it) behind `v` as a
/// 1-D constant of `n` elements, or null.
DenseElementsAttr asVector(EmitterContext &ctx, Value v, int64_t n) {
  auto attr =
      dyn_cast_or_null<DenseElementsAttr>(ctx.builder().constantAttr(v));
  if (!attr || attr.getNumElements() != n)
    return {};
  return reshapeConstant(
      attr, RankedTensorType::get({n}, attr.getType().getElementType()));
}

/// Marks as fused the ops of `pattern` whose results are read only by the
/// anchor or by other fused ops; an op that something outside reads (CSE
/// may share a reduction between a softmax and the model) is still emitted.
void claim(Operation *anchor, ArrayRef<Operation *> pattern,
           DenseFusions &out) {
  llvm::DenseSet<Operation *> fused;
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation *op : pattern) {
      if (op == anchor || fused.count(op))
        continue;
      bool inside = llvm::all_of(op->getUsers(), [&](Operation *user) {
        return user == anchor || fused.count(user);
      });
      if (inside) {
        fused.insert(op);
        changed = true;
      }
    }
  }
  out.fusedOps.insert(fused.begin(), fused.end());
}

/// The plan dims of `x` (for results of its shape).
SmallVector<DimInfo> dimsLike(EmitterContext &ctx, Value x) {
  SmallVector<DimInfo> dims;
  for (int64_t d = 0; d < cast<RankedTensorType>(x.getType()).getRank(); ++d)
    dims.push_back(ctx.dimOf(x, d));
  return dims;
}

//===----------------------------------------------------------------------===//
// softmax: mul(e, reciprocal(reduce_sum(e, a))), e = exp(sub(x, reduce_max(x,
// a)))
//===----------------------------------------------------------------------===//

void findSoftmax(Operation *op, DenseFusions &out) {
  auto mul = dyn_cast<tosa::MulOp>(op);
  if (!mul || !isZeroConstant(mul.getShift()))
    return;
  for (int flip = 0; flip < 2; ++flip) {
    Value e = flip ? mul.getInput2() : mul.getInput1();
    Value inv = flip ? mul.getInput1() : mul.getInput2();
    auto recip = inv.getDefiningOp<tosa::ReciprocalOp>();
    auto exp = e.getDefiningOp<tosa::ExpOp>();
    if (!recip || !exp)
      continue;
    auto sum = recip.getInput1().getDefiningOp<tosa::ReduceSumOp>();
    auto sub = exp.getInput1().getDefiningOp<tosa::SubOp>();
    if (!sum || sum.getInput() != e || !sub)
      continue;
    auto max = sub.getInput2().getDefiningOp<tosa::ReduceMaxOp>();
    Value x = sub.getInput1();
    if (!max || max.getInput() != x || max.getAxis() != sum.getAxis() ||
        x.getType() != e.getType() || mul.getType() != e.getType())
      continue;
    int64_t axis = sum.getAxis();
    claim(op,
          {max.getOperation(), sub.getOperation(), exp.getOperation(),
           sum.getOperation(), recip.getOperation()},
          out);
    out.anchors[op] = [op, x, axis](EmitterContext &ctx) -> LogicalResult {
      pb::Instruction *instr = nullptr;
      if (failed(ctx.emitSimple(op, kn::kSoftmax, ValueRange{x},
                                dimsLike(ctx, x), &instr)))
        return failure();
      addIntAttr(instr, "axis", axis);
      return success();
    };
    return;
  }
}

//===----------------------------------------------------------------------===//
// layer_norm (the importer's LayerNormalization):
//   mean = mul(reduce_sum*(x), 1/N); c = sub(x, mean)
//   var = mul(reduce_sum*(mul(c, c)), 1/N); inv = rsqrt(add(var, eps))
//   y = mul(c, inv) [then mul by gamma] [then add beta]
// (canonicalization drops a gamma of ones and a beta of zeros).
//===----------------------------------------------------------------------===//

/// reduce_sum over the trailing axes [axis, rank) of `x` (one op per axis,
/// in order) ending at `v`; returns the axis and the ops, or failure.
FailureOr<int64_t> matchTrailingSum(Value v, Value x,
                                    SmallVectorImpl<Operation *> &ops) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  int64_t expected = rank - 1;
  while (true) {
    auto sum = v.getDefiningOp<tosa::ReduceSumOp>();
    if (!sum || sum.getAxis() != expected)
      return failure();
    ops.push_back(sum);
    if (sum.getInput() == x)
      return expected;
    v = sum.getInput();
    --expected;
  }
}

/// op as a plain tosa.mul (zero shift), or null.
tosa::MulOp asMul(Operation *op) {
  auto mul = dyn_cast_or_null<tosa::MulOp>(op);
  return mul && isZeroConstant(mul.getShift()) ? mul : tosa::MulOp();
}

/// The normalization core mul(c, rsqrt(...)) ending at `normalized`: fills
/// x, the axis, epsilon and the pattern's ops; false when it is not one.
bool matchNormalized(tosa::MulOp normalized, Value &x, int64_t &axis,
                     double &epsilon, SmallVectorImpl<Operation *> &ops) {
  auto rsqrt = normalized.getInput2().getDefiningOp<tosa::RsqrtOp>();
  Value centered = normalized.getInput1();
  auto sub = centered.getDefiningOp<tosa::SubOp>();
  if (!rsqrt || !sub)
    return false;
  auto shift = rsqrt.getInput1().getDefiningOp<tosa::AddOp>();
  if (!shift)
    return false;
  std::optional<double> eps = splatValue(shift.getInput2());
  auto varMul = asMul(shift.getInput1().getDefiningOp());
  if (!eps || !varMul)
    return false;
  x = sub.getInput1();
  auto type = cast<RankedTensorType>(x.getType());
  if (!type.getElementType().isF32() || normalized.getType() != type)
    return false;
  // var = mul(sum*(mul(c, c)), 1/N)
  Operation *def = varMul.getInput1().getDefiningOp();
  while (auto sum = dyn_cast_or_null<tosa::ReduceSumOp>(def))
    def = sum.getInput().getDefiningOp();
  tosa::MulOp sq = asMul(def);
  if (!sq || sq.getInput1() != centered || sq.getInput2() != centered)
    return false;
  FailureOr<int64_t> varAxis =
      matchTrailingSum(varMul.getInput1(), sq.getResult(), ops);
  std::optional<double> invN = splatValue(varMul.getInput2());
  auto meanMul = asMul(sub.getInput2().getDefiningOp());
  if (failed(varAxis) || !invN || !meanMul)
    return false;
  FailureOr<int64_t> meanAxis = matchTrailingSum(meanMul.getInput1(), x, ops);
  std::optional<double> invN2 = splatValue(meanMul.getInput2());
  if (failed(meanAxis) || *meanAxis != *varAxis || !invN2)
    return false;
  int64_t count = 1;
  for (int64_t d = *varAxis; d < type.getRank(); ++d) {
    if (type.isDynamicDim(d))
      return false;
    count *= type.getDimSize(d);
  }
  double expected = 1.0 / static_cast<double>(count);
  if (std::fabs(*invN - expected) > 1e-6 * expected ||
      std::fabs(*invN2 - expected) > 1e-6 * expected)
    return false;
  axis = *varAxis;
  epsilon = *eps;
  ops.append({normalized.getOperation(), rsqrt.getOperation(),
              shift.getOperation(), varMul.getOperation(), sub.getOperation(),
              sq.getOperation(), meanMul.getOperation()});
  return true;
}

void findLayerNorm(Operation *op, DenseFusions &out) {
  // Anchor forms: add(mul(n, gamma), beta), mul(n, gamma), or n itself,
  // with n = mul(c, rsqrt(...)); the longest form that matches wins (the
  // walk visits later ops first).
  Value gamma, beta;
  tosa::MulOp normalized;
  SmallVector<Operation *> ops;
  auto asCore = [&](Value v) {
    tosa::MulOp m = asMul(v.getDefiningOp());
    return m && m.getInput2().getDefiningOp<tosa::RsqrtOp>() ? m
                                                             : tosa::MulOp();
  };
  auto asScaled = [&](Value v, Value &g) -> tosa::MulOp {
    tosa::MulOp m = asMul(v.getDefiningOp());
    if (!m)
      return {};
    for (int flip = 0; flip < 2; ++flip) {
      Value core = flip ? m.getInput2() : m.getInput1();
      Value other = flip ? m.getInput1() : m.getInput2();
      if (tosa::MulOp n = asCore(core); n && isConstantLike(other)) {
        g = other;
        return n;
      }
    }
    return {};
  };
  if (auto add = dyn_cast<tosa::AddOp>(op)) {
    for (int flip = 0; flip < 2 && !normalized; ++flip) {
      Value scaled = flip ? add.getInput2() : add.getInput1();
      Value other = flip ? add.getInput1() : add.getInput2();
      if (!isConstantLike(other))
        continue;
      Value g;
      if (tosa::MulOp n = asScaled(scaled, g)) {
        normalized = n;
        gamma = g;
        beta = other;
        ops.push_back(scaled.getDefiningOp());
      } else if (tosa::MulOp n = asCore(scaled)) {
        normalized = n;
        beta = other;
      }
    }
  } else if (tosa::MulOp n = asScaled(op->getResult(0), gamma)) {
    normalized = n;
  } else {
    normalized = asCore(op->getResult(0));
  }
  if (!normalized)
    return;
  Value x;
  int64_t axis = 0;
  double epsilon = 0;
  if (!matchNormalized(normalized, x, axis, epsilon, ops))
    return;
  int64_t count = 1;
  auto type = cast<RankedTensorType>(x.getType());
  for (int64_t d = axis; d < type.getRank(); ++d)
    count *= type.getDimSize(d);
  claim(op, ops, out);
  out.anchors[op] = [op, x, gamma, beta, axis, count,
                     epsilon](EmitterContext &ctx) -> LogicalResult {
    DenseElementsAttr g = gamma ? asVector(ctx, gamma, count) : nullptr;
    DenseElementsAttr b = beta ? asVector(ctx, beta, count) : nullptr;
    if ((gamma && !g) || (beta && !b))
      return op->emitError("layer_norm: the scale and bias must be "
                           "constants the plan emitter can fold");
    std::string name = ctx.locationOf(op->getLoc());
    FailureOr<int> xs = ctx.operandSlot(op, x);
    int gs = g ? ctx.builder().materializeConstant(g, name + ".gamma") : -1;
    int bs = b ? ctx.builder().materializeConstant(b, name + ".beta") : -1;
    if (failed(xs) || (g && gs < 0) || (b && bs < 0))
      return op->emitError("layer_norm: cannot write its operands");
    FailureOr<int> result =
        ctx.defineResult(op, op->getResult(0), dimsLike(ctx, x));
    if (failed(result))
      return failure();
    pb::Instruction *instr = ctx.builder().addInstruction(kn::kLayerNorm, name);
    instr->add_inputs(*xs);
    instr->add_inputs(gs); // -1 leaves an input out
    instr->add_inputs(bs);
    instr->add_outputs(*result);
    addIntAttr(instr, "axis", axis);
    pb::Attribute *eps = instr->add_attrs();
    eps->set_name("epsilon");
    eps->set_f(epsilon);
    return success();
  };
}

//===----------------------------------------------------------------------===//
// DLRM dot interaction:
//   T = reshape(concat(x, e1..eF) axis 1) [B, F+1, D]
//   Z = matmul(T, transpose(T, [0, 2, 1]))
//   R = (reshapes / transposes / constant gathers of Z) [B, P]
//   anchor = concat(x, R) axis 1
// The pairs R picks are found by running the data-movement chain on labels
// (two samples); they must be a whole triangle in the "dlrm" or "torchrec"
// order of the dot_interaction kernel.
//===----------------------------------------------------------------------===//

/// A small int64 tensor for simulating the data-movement chain.
struct Labels {
  SmallVector<int64_t> shape;
  std::vector<int64_t> data;
};

/// The concrete shape of `v` in a simulation where the batch symbol stands
/// for `samples`: from the plan's dims; failure for other run-time dims.
FailureOr<SmallVector<int64_t>> simulatedShape(EmitterContext &ctx, Value v,
                                               const std::string &batch,
                                               int64_t samples) {
  SmallVector<int64_t> shape;
  auto type = cast<RankedTensorType>(v.getType());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    DimInfo info = ctx.dimOf(v, d);
    if (info.isSymbolic()) {
      if (info.symbol != batch)
        return failure();
      shape.push_back(samples);
    } else if (info.size > 0 || !type.isDynamicDim(d)) {
      shape.push_back(info.size > 0 ? info.size : type.getDimSize(d));
    } else {
      return failure();
    }
  }
  return shape;
}

FailureOr<Labels> transposeLabels(const Labels &in, ArrayRef<int32_t> perm) {
  size_t rank = in.shape.size();
  if (perm.size() != rank)
    return failure();
  Labels out;
  for (int32_t p : perm)
    out.shape.push_back(in.shape[p]);
  out.data.resize(in.data.size());
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = static_cast<int64_t>(rank) - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * in.shape[d + 1];
  SmallVector<int64_t> index(rank, 0);
  for (size_t flat = 0; flat < out.data.size(); ++flat) {
    int64_t src = 0;
    for (size_t k = 0; k < rank; ++k)
      src += index[k] * inStrides[perm[k]];
    out.data[flat] = in.data[src];
    for (int64_t k = static_cast<int64_t>(rank) - 1; k >= 0; --k) {
      if (++index[k] < out.shape[k])
        break;
      index[k] = 0;
    }
  }
  return out;
}

/// Runs `op` (one data-movement op whose first operand holds `in`) on the
/// labels, with result shapes from the plan; failure for anything else.
FailureOr<Labels> simulate(EmitterContext &ctx, Operation *op, const Labels &in,
                           const std::string &batch, int64_t samples) {
  if (auto t = dyn_cast<tosa::TransposeOp>(op))
    return transposeLabels(in, t.getPerms());
  FailureOr<SmallVector<int64_t>> shape =
      simulatedShape(ctx, op->getResult(0), batch, samples);
  if (failed(shape))
    return failure();
  if (isa<tosa::ReshapeOp, tensor::ReshapeOp, tensor::ExpandShapeOp,
          tensor::CollapseShapeOp, tensor::CastOp>(op)) {
    int64_t n = 1;
    for (int64_t d : *shape)
      n *= d;
    if (n != static_cast<int64_t>(in.data.size()))
      return failure();
    return Labels{*shape, in.data};
  }
  if (auto g = dyn_cast<tosa::GatherOp>(op)) {
    auto idx = dyn_cast_or_null<DenseElementsAttr>(
        ctx.builder().constantAttr(g.getIndices()));
    if (!idx || in.shape.size() != 3 || shape->size() != 3)
      return failure();
    int64_t n = in.shape[0], k = in.shape[1], c = in.shape[2];
    int64_t w = (*shape)[1];
    if (idx.getNumElements() != n * w && idx.getNumElements() != w)
      return failure();
    std::vector<int64_t> values;
    for (const APInt &i : idx.getValues<APInt>())
      values.push_back(i.getSExtValue());
    Labels out{{n, w, c}, std::vector<int64_t>(n * w * c)};
    for (int64_t b = 0; b < n; ++b)
      for (int64_t j = 0; j < w; ++j) {
        int64_t row =
            values[values.size() == static_cast<size_t>(w) ? j : b * w + j];
        if (row < 0 || row >= k)
          return failure();
        for (int64_t e = 0; e < c; ++e)
          out.data[(b * w + j) * c + e] = in.data[(b * k + row) * c + e];
      }
    return out;
  }
  return failure();
}

/// The pair order of `pairs` ((i, j) per output column) for F features:
/// "dlrm" or "torchrec", with or without self interaction; "" otherwise.
std::pair<std::string, bool>
pairOrder(const std::vector<std::pair<int64_t, int64_t>> &pairs, int64_t f) {
  for (int self = 0; self < 2; ++self) {
    std::vector<std::pair<int64_t, int64_t>> lower, upper;
    for (int64_t i = 0; i <= f; ++i)
      for (int64_t j = 0; j < i + self; ++j)
        lower.push_back({i, j});
    for (int64_t i = 0; i <= f; ++i)
      for (int64_t j = i + 1 - self; j <= f; ++j)
        upper.push_back({i, j});
    if (pairs == lower)
      return {"dlrm", self != 0};
    if (pairs == upper)
      return {"torchrec", self != 0};
  }
  return {"", false};
}

/// What the structural match found; verified and emitted at the anchor.
struct InteractionMatch {
  Operation *anchor;
  Value x;
  SmallVector<Value> sparse;
  int64_t f, d;
  tosa::MatMulOp matmul;
  tosa::TransposeOp transpose;
  Operation *view, *cat;
  /// Z's data movement, from the matmul's user to the op before the anchor.
  SmallVector<Operation *> chain;
};

/// At the anchor: the chain is run on labels with the plan's shapes and
/// constants; when it picks a whole triangle of Z in a known order, the
/// instructions of the matmul, the chain (and of T and the concat when
/// nothing else reads them) are retracted and concat(e..) +
/// dot_interaction take their place. Otherwise the anchor is emitted as is.
LogicalResult emitInteraction(EmitterContext &ctx, InteractionMatch m) {
  Operation *op = m.anchor;
  DimInfo batch = ctx.dimOf(m.x, 0);
  int64_t samples = batch.isSymbolic() ? 3 : batch.size;
  int64_t n = m.f + 1;
  std::string order;
  bool self = false;
  bool ok = samples > 0;
  FailureOr<SmallVector<int64_t>> tShape =
      simulatedShape(ctx, m.matmul.getA(), batch.symbol, samples);
  ok = ok && succeeded(tShape) &&
       *tShape == SmallVector<int64_t>({samples, n, m.d});
  if (ok) {
    Labels labels{{samples, n, n}, std::vector<int64_t>(samples * n * n)};
    std::iota(labels.data.begin(), labels.data.end(), 0);
    for (Operation *c : m.chain) {
      FailureOr<Labels> next = simulate(ctx, c, labels, batch.symbol, samples);
      if (failed(next)) {
        ok = false;
        break;
      }
      labels = std::move(*next);
    }
    ok = ok && labels.shape.size() == 2 && labels.shape[0] == samples;
    std::vector<std::pair<int64_t, int64_t>> pairs;
    int64_t p = ok ? labels.shape[1] : 0;
    for (int64_t b = 0; ok && b < samples; ++b)
      for (int64_t c = 0; ok && c < p; ++c) {
        int64_t label = labels.data[b * p + c];
        int64_t i = (label % (n * n)) / n, j = label % n;
        if (label / (n * n) != b)
          ok = false; // a column mixes samples
        else if (b == 0)
          pairs.push_back({i, j});
        else if (pairs[c] != std::make_pair(i, j))
          ok = false;
      }
    if (ok)
      std::tie(order, self) = pairOrder(pairs, m.f);
  }
  if (!ok || order.empty())
    return ctx.emitOpNow(op);

  ctx.retract(m.matmul);
  ctx.retract(m.transpose);
  for (Operation *c : m.chain)
    ctx.retract(c);
  auto onlyReadBy = [](Operation *producer, ArrayRef<Operation *> readers) {
    return llvm::all_of(producer->getUsers(), [&](Operation *u) {
      return isa<tensor::DimOp>(u) || llvm::is_contained(readers, u);
    });
  };
  if (onlyReadBy(m.view,
                 {m.matmul.getOperation(), m.transpose.getOperation()})) {
    ctx.retract(m.view);
    if (onlyReadBy(m.cat, {m.view}))
      ctx.retract(m.cat);
  }
  std::string name = ctx.locationOf(op->getLoc());
  FailureOr<int> xs = ctx.operandSlot(op, m.x);
  if (failed(xs))
    return failure();
  int sparseSlot;
  if (m.sparse.size() == 1) {
    FailureOr<int> s = ctx.operandSlot(op, m.sparse[0]);
    if (failed(s))
      return failure();
    sparseSlot = *s;
  } else {
    SmallVector<int> parts;
    for (Value e : m.sparse) {
      FailureOr<int> s = ctx.operandSlot(op, e);
      if (failed(s))
        return failure();
      parts.push_back(*s);
    }
    sparseSlot = ctx.builder().defineTypedSlot(
        Float32Type::get(op->getContext()),
        DimList{batch, DimInfo{m.f * m.d, {}}}, name + ".sparse");
    if (sparseSlot < 0)
      return op->emitError("dot interaction: cannot define its slots");
    pb::Instruction *concat = ctx.builder().addInstruction(kn::kConcat, name);
    for (int s : parts)
      concat->add_inputs(s);
    concat->add_outputs(sparseSlot);
    addIntAttr(concat, "axis", 1);
  }
  FailureOr<int> result =
      ctx.defineResult(op, op->getResult(0), {batch, DimInfo()});
  if (failed(result))
    return failure();
  pb::Instruction *instr =
      ctx.builder().addInstruction(kn::kDotInteraction, name);
  instr->add_inputs(*xs);
  instr->add_inputs(sparseSlot);
  instr->add_outputs(*result);
  addIntAttr(instr, "num_features", m.f);
  addIntAttr(instr, "self_interaction", self ? 1 : 0);
  addStringAttr(instr, "pair_order", order);
  return success();
}

/// The structure of the DLRM interaction ending at `op` (a concat(x, R)):
/// R reached from Z = matmul(T, transpose(T, [0, 2, 1])) through
/// single-use data movement, T a reshape of concat(x, e1..eF) axis 1.
void findDotInteraction(Operation *op, DenseFusions &out,
                        const llvm::DenseSet<Operation *> &taken) {
  auto anchor = dyn_cast<tosa::ConcatOp>(op);
  if (!anchor || anchor.getAxis() != 1 || anchor.getInput1().size() != 2)
    return;
  InteractionMatch m;
  m.anchor = op;
  m.x = anchor.getInput1()[0];
  Value r = anchor.getInput1()[1];
  auto xType = cast<RankedTensorType>(m.x.getType());
  if (xType.getRank() != 2 || xType.isDynamicDim(1) ||
      !xType.getElementType().isF32())
    return;
  m.d = xType.getDimSize(1);
  // One reader besides tensor.dim (shape arithmetic reads dims only).
  auto oneUse = [](Value v) {
    int readers = 0;
    for (Operation *u : v.getUsers())
      readers += !isa<tensor::DimOp>(u);
    return readers == 1;
  };
  Value v = r;
  while (Operation *def = v.getDefiningOp()) {
    if (!oneUse(v) || taken.count(def))
      return;
    if ((m.matmul = dyn_cast<tosa::MatMulOp>(def)))
      break;
    if (!isa<tosa::ReshapeOp, tensor::ReshapeOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp, tensor::CastOp, tosa::TransposeOp,
             tosa::GatherOp>(def))
      return;
    m.chain.insert(m.chain.begin(), def);
    v = def->getOperand(0);
  }
  if (!m.matmul || !isZeroConstant(m.matmul.getAZp()) ||
      !isZeroConstant(m.matmul.getBZp()))
    return;
  Value t = m.matmul.getA();
  m.transpose = m.matmul.getB().getDefiningOp<tosa::TransposeOp>();
  if (!m.transpose || m.transpose.getInput1() != t ||
      !oneUse(m.transpose.getResult()) ||
      m.transpose.getPerms() != ArrayRef<int32_t>({0, 2, 1}))
    return;
  m.view = t.getDefiningOp();
  if (!m.view ||
      !isa<tosa::ReshapeOp, tensor::ReshapeOp, tensor::ExpandShapeOp>(m.view))
    return;
  auto cat = m.view->getOperand(0).getDefiningOp<tosa::ConcatOp>();
  if (!cat || cat.getAxis() != 1 || cat.getInput1().size() < 2 ||
      cat.getInput1()[0] != m.x)
    return;
  m.cat = cat;
  // The sparse operands: [B, k * D] each (one pooled embedding, or several
  // side by side).
  int64_t width = 0;
  for (Value e : cat.getInput1().drop_front()) {
    auto eType = cast<RankedTensorType>(e.getType());
    if (eType.getRank() != 2 || eType.isDynamicDim(1) ||
        eType.getShape()[1] % m.d != 0 || !eType.getElementType().isF32())
      return;
    width += eType.getShape()[1];
    m.sparse.push_back(e);
  }
  m.f = width / m.d;
  out.anchors[op] = [m](EmitterContext &ctx) mutable {
    return emitInteraction(ctx, m);
  };
}

//===----------------------------------------------------------------------===//
// DCN-v2 cross layer: add(mul(x0, L), xl) with L = W xl + b (a linear
// chain without activation) or L = U (V xl) + b (the importer's two
// matmuls, the first one still 3-D); one `dcn_cross` instruction.
//===----------------------------------------------------------------------===//

/// The constant behind a matmul's B operand ([1, K, N]) as [N, K] (the
/// dcn_cross kernel's [out, in]), or null.
DenseElementsAttr outInWeight(EmitterContext &ctx, Value b) {
  auto attr =
      dyn_cast_or_null<DenseElementsAttr>(ctx.builder().constantAttr(b));
  auto type = cast<RankedTensorType>(b.getType());
  if (!attr || type.getRank() != 3 || !type.hasStaticShape())
    return {};
  DenseElementsAttr kn = reshapeConstant(
      attr, RankedTensorType::get({type.getDimSize(1), type.getDimSize(2)},
                                  type.getElementType()));
  return kn ? transposeConstant(kn, {1, 0}) : DenseElementsAttr();
}

struct CrossMatch {
  Operation *anchor;
  Value x0, xl, bias;
  SmallVector<Value> weights; // matmul B operands: [W] or [V, U]
};

LogicalResult emitCross(EmitterContext &ctx, const CrossMatch &m) {
  Operation *op = m.anchor;
  std::string name = ctx.locationOf(op->getLoc());
  SmallVector<int> inputs;
  for (Value v : {m.x0, m.xl}) {
    FailureOr<int> s = ctx.operandSlot(op, v);
    if (failed(s))
      return failure();
    inputs.push_back(*s);
  }
  const char *names[] = {".weight", ".v", ".w"};
  for (auto [i, w] : llvm::enumerate(m.weights)) {
    DenseElementsAttr attr = outInWeight(ctx, w);
    int slot = attr ? ctx.builder().materializeConstant(
                          attr, name + names[m.weights.size() == 1 ? 0 : i + 1])
                    : -1;
    if (slot < 0)
      return op->emitError("DCN cross layer: the weights must be constants "
                           "the plan emitter can fold");
    inputs.push_back(slot);
  }
  int biasSlot = -1;
  if (m.bias) {
    auto d = cast<RankedTensorType>(m.xl.getType()).getDimSize(1);
    DenseElementsAttr b = asVector(ctx, m.bias, d);
    biasSlot = b ? ctx.builder().materializeConstant(b, name + ".bias") : -1;
    if (biasSlot < 0)
      return op->emitError("DCN cross layer: the bias must be a constant the "
                           "plan emitter can fold");
  }
  inputs.push_back(biasSlot);
  FailureOr<int> result =
      ctx.defineResult(op, op->getResult(0), dimsLike(ctx, m.xl));
  if (failed(result))
    return failure();
  pb::Instruction *instr = ctx.builder().addInstruction(kn::kDcnCross, name);
  for (int s : inputs)
    instr->add_inputs(s);
  instr->add_outputs(*result);
  addIntAttr(instr, "low_rank", m.weights.size() == 2 ? 1 : 0);
  return success();
}

/// bias + collapse(matmul(A, B)) as built by the importer: the matmul and
/// the bias (null when there is none), or failure.
FailureOr<std::pair<tosa::MatMulOp, Value>> matchBiasedMatMul(Value v) {
  Value bias;
  Operation *def = v.getDefiningOp();
  if (auto add = dyn_cast_or_null<tosa::AddOp>(def)) {
    for (int flip = 0; flip < 2; ++flip) {
      Value other = flip ? add.getInput1() : add.getInput2();
      Value inner = flip ? add.getInput2() : add.getInput1();
      if (isConstantLike(other) &&
          inner.getDefiningOp<tensor::CollapseShapeOp>()) {
        bias = other;
        def = inner.getDefiningOp();
        break;
      }
    }
  }
  auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(def);
  auto matmul = collapse ? collapse.getSrc().getDefiningOp<tosa::MatMulOp>()
                         : tosa::MatMulOp();
  if (!matmul || !isZeroConstant(matmul.getAZp()) ||
      !isZeroConstant(matmul.getBZp()) || !isConstantLike(matmul.getB()))
    return failure();
  return std::make_pair(matmul, bias);
}

/// The 2-D value a [1, M, K] matmul operand was expanded from, or null.
Value expandedFrom(Value a) {
  auto expand = a.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand ||
      cast<RankedTensorType>(expand.getSrc().getType()).getRank() != 2)
    return {};
  return expand.getSrc();
}

void findCross(Operation *op, DenseFusions &out) {
  auto add = dyn_cast<tosa::AddOp>(op);
  if (!add)
    return;
  auto type = cast<RankedTensorType>(add.getType());
  if (type.getRank() != 2 || type.isDynamicDim(1) ||
      !type.getElementType().isF32())
    return;
  for (int flip = 0; flip < 2; ++flip) {
    Value prod = flip ? add.getInput2() : add.getInput1();
    Value xl = flip ? add.getInput1() : add.getInput2();
    tosa::MulOp mul = asMul(prod.getDefiningOp());
    if (!mul || xl.getType() != type || mul.getType() != type)
      continue;
    for (int side = 0; side < 2; ++side) {
      Value x0 = side ? mul.getInput2() : mul.getInput1();
      Value l = side ? mul.getInput1() : mul.getInput2();
      if (x0.getType() != type)
        continue;
      FailureOr<std::pair<tosa::MatMulOp, Value>> outer = matchBiasedMatMul(l);
      if (failed(outer))
        continue;
      auto [matmul, bias] = *outer;
      CrossMatch m{op, x0, xl, bias, {}};
      SmallVector<Operation *> ops = {mul, matmul,
                                      matmul->getUsers().begin() ==
                                              matmul->getUsers().end()
                                          ? nullptr
                                          : *matmul->getUsers().begin(),
                                      l.getDefiningOp()};
      if (expandedFrom(matmul.getA()) == xl) {
        m.weights = {matmul.getB()}; // full rank
        ops.push_back(matmul.getA().getDefiningOp());
      } else if (auto first = matmul.getA().getDefiningOp<tosa::MatMulOp>();
                 first && isZeroConstant(first.getAZp()) &&
                 isZeroConstant(first.getBZp()) &&
                 isConstantLike(first.getB()) &&
                 expandedFrom(first.getA()) == xl) {
        m.weights = {first.getB(), matmul.getB()}; // low rank: V, then U
        ops.push_back(first);
        ops.push_back(first.getA().getDefiningOp());
      } else {
        continue;
      }
      llvm::erase(ops, nullptr);
      claim(op, ops, out);
      out.anchors[op] = [m](EmitterContext &ctx) { return emitCross(ctx, m); };
      return;
    }
  }
}

} // namespace

DenseFusions findDenseFusions(Block &block, const LinearChains &linear) {
  DenseFusions out;
  // Ops of linear chains, except those a DCN cross layer may take over.
  llvm::DenseSet<Operation *> taken(linear.fusedOps.begin(),
                                    linear.fusedOps.end());
  for (auto &entry : linear.anchors)
    taken.insert(entry.first);
  // Last ops first: an anchor found later in the block claims its pattern
  // before a pattern that would end inside it.
  for (Operation &op : llvm::reverse(block)) {
    if (taken.count(&op) || out.fusedOps.count(&op) || out.anchors.count(&op) ||
        op.getNumResults() != 1 ||
        !isa<RankedTensorType>(op.getResult(0).getType()))
      continue;
    DenseFusions found;
    findCross(&op, found);
    if (!found.anchors.empty()) {
      // A cross layer absorbs the linear chains it is built from.
      bool clash = llvm::any_of(found.fusedOps, [&](Operation *o) {
        return out.fusedOps.count(o) || out.anchors.count(o);
      });
      if (!clash) {
        for (Operation *o : found.fusedOps) {
          out.fusedOps.insert(o);
          taken.erase(o);
        }
        for (auto &entry : found.anchors)
          out.anchors.insert(entry);
      }
      continue;
    }
    findDotInteraction(&op, found, taken);
    if (found.anchors.empty())
      findLayerNorm(&op, found);
    if (found.anchors.empty())
      findSoftmax(&op, found);
    if (found.anchors.empty())
      continue;
    bool clash = llvm::any_of(found.fusedOps, [&](Operation *o) {
      return taken.count(o) || out.fusedOps.count(o) || out.anchors.count(o);
    });
    if (clash)
      continue;
    out.fusedOps.insert(found.fusedOps.begin(), found.fusedOps.end());
    for (auto &entry : found.anchors)
      out.anchors.insert(entry);
  }
  return out;
}

} // namespace mlir::ember::plan_emitter
