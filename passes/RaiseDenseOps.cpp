//===- RaiseDenseOps.cpp - tosa decompositions -> Ember dense ops ---------===//
//
// The ONNX importer writes Gemm (nn.Linear) as expand/matmul/collapse, and
// decomposes Softmax and LayerNormalization into tosa reductions and
// elementwise ops; torch exports DCN-v2 cross layers as Linear + mul + add
// and the DLRM interaction as bmm + transposes/reshapes + a constant-index
// gather + concat. This pass finds those patterns and puts one
// ember.linear, ember.softmax, ember.layer_norm, ember.dcn_cross or
// ember.dot_interaction (EmberDenseOps.td) in place of each; anything that
// does not match exactly stays as it is. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dialects/ember/EmberOps.h"
#include "passes/LabelInterpreter.h"
#include "passes/Passes.h"
#include "passes/TosaMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <variant>

namespace mlir::ember {
#define GEN_PASS_DEF_EMBERRAISEDENSEOPS
#include "passes/Passes.h.inc"
} // namespace mlir::ember

using namespace mlir;
using namespace mlir::ember;

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

/// True when `v` has a static shape holding exactly `n` elements.
bool holdsElements(Value v, int64_t n) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getNumElements() == n;
}

//===----------------------------------------------------------------------===//
// nn.Linear: collapse_shape(tosa.matmul(expand_shape(x), W)) [+ bias] [-> act]
// with W a transpose/reshape of a constant.
//===----------------------------------------------------------------------===//

/// One nn.Linear: act(x · W + bias), x [M, K], W the matmul's constant
/// [1, K, N] operand, bias (optional) a constant of N elements.
struct LinearChain {
  tosa::MatMulOp matmul;
  Value x, bias;
  std::string activation = "none"; // "relu", "sigmoid" or "tanh"
};

struct LinearChains {
  /// The last op of each chain (whose result the ember.linear replaces).
  llvm::DenseMap<Operation *, LinearChain> anchors;
  /// The other ops of the chains.
  llvm::DenseSet<Operation *> fusedOps;
};

/// Finds the chains among the ops of `block`. Intermediate values must have
/// one use each (so nothing else needs them).
LinearChains findLinearChains(Block &block) {
  LinearChains result;
  for (Operation &op : block) {
    auto matmul = dyn_cast<tosa::MatMulOp>(&op);
    if (!matmul || !isZeroConstant(matmul.getAZp()) ||
        !isZeroConstant(matmul.getBZp()) || !matmul->hasOneUse())
      continue;
    auto collapse = dyn_cast<tensor::CollapseShapeOp>(*matmul->user_begin());
    auto expand = matmul.getA().getDefiningOp<tensor::ExpandShapeOp>();
    if (!collapse || !expand || !isConstantLike(matmul.getB()))
      continue;
    auto xType = dyn_cast<RankedTensorType>(expand.getSrc().getType());
    auto aType = cast<RankedTensorType>(matmul.getA().getType());
    auto bType = cast<RankedTensorType>(matmul.getB().getType());
    auto outType = cast<RankedTensorType>(collapse.getResult().getType());
    if (!xType || xType.getRank() != 2 || aType.getRank() != 3 ||
        aType.getDimSize(0) != 1 || !bType.hasStaticShape() ||
        bType.getDimSize(0) != 1 || outType.getRank() != 2 ||
        !outType.getElementType().isF32() || !xType.getElementType().isF32() ||
        !bType.getElementType().isF32())
      continue;
    LinearChain chain;
    chain.matmul = matmul;
    chain.x = expand.getSrc();
    SmallVector<Operation *> fused = {matmul, collapse};
    if (expand->hasOneUse())
      fused.push_back(expand);
    Operation *anchor = collapse;
    // + bias: [N] or [1, N], a constant.
    if (anchor->hasOneUse()) {
      if (auto add = dyn_cast<tosa::AddOp>(*anchor->user_begin())) {
        Value other = add.getInput1() == anchor->getResult(0) ? add.getInput2()
                                                              : add.getInput1();
        auto biasType = dyn_cast<RankedTensorType>(other.getType());
        if (other != anchor->getResult(0) && isConstantLike(other) &&
            biasType && biasType.hasStaticShape() &&
            biasType.getNumElements() == outType.getDimSize(1) &&
            biasType.getDimSize(biasType.getRank() - 1) ==
                outType.getDimSize(1) &&
            add.getType() == outType) {
          chain.bias = other;
          fused.push_back(add);
          anchor = add;
        }
      }
    }
    if (anchor->hasOneUse()) {
      Operation *user = *anchor->user_begin();
      if (user->getNumResults() == 1 &&
          user->getResult(0).getType() == outType) {
        if (isReluClamp(user))
          chain.activation = "relu";
        else if (isa<tosa::SigmoidOp>(user))
          chain.activation = "sigmoid";
        else if (isa<tosa::TanhOp>(user))
          chain.activation = "tanh";
        if (chain.activation != "none") {
          fused.push_back(user);
          anchor = user;
        }
      }
    }
    for (Operation *f : fused)
      if (f != anchor)
        result.fusedOps.insert(f);
    result.anchors[anchor] = chain;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// The other patterns, found last op first; each records what its op needs.
//===----------------------------------------------------------------------===//

struct SoftmaxMatch {
  Value x;
  int64_t axis;
};

struct LayerNormMatch {
  Value x, gamma, beta;
  int64_t axis;
  double epsilon;
};

struct CrossMatch {
  Value x0, xl, bias;
  SmallVector<Value> weights; // matmul B operands: [W] or [V, U]
};

/// What a dim of a value inside the interaction is: a static size, or the
/// batch (kBatch).
constexpr int64_t kBatch = -1;

struct InteractionMatch {
  Value x;
  SmallVector<Value> sparse;
  int64_t f = 0, d = 0;
  tosa::MatMulOp matmul;
  tosa::TransposeOp transpose;
  Operation *view = nullptr, *cat = nullptr;
  /// Z's data movement, from the matmul's user to the op before the anchor.
  SmallVector<Operation *> chain;
  /// Verified: the kernel's pair order and self interaction, and the dims
  /// (static or kBatch) of the values from the concat to the anchor.
  std::string order;
  bool self = false;
  llvm::DenseMap<Value, SmallVector<int64_t>> dims;
};

using DenseMatch =
    std::variant<SoftmaxMatch, LayerNormMatch, CrossMatch, InteractionMatch>;

struct DenseFusions {
  llvm::DenseMap<Operation *, DenseMatch> anchors;
  llvm::DenseSet<Operation *> fusedOps;
};

/// Marks as fused the ops of `pattern` whose results are read only by the
/// anchor or by other fused ops; an op that something outside reads (CSE
/// may share a reduction between a softmax and the model) stays.
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

/// op as a plain tosa.mul (zero shift), or null.
tosa::MulOp asMul(Operation *op) {
  auto mul = dyn_cast_or_null<tosa::MulOp>(op);
  return mul && isZeroConstant(mul.getShift()) ? mul : tosa::MulOp();
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
        x.getType() != e.getType() || mul.getType() != e.getType() ||
        !cast<RankedTensorType>(x.getType()).getElementType().isF32())
      continue;
    claim(op,
          {max.getOperation(), sub.getOperation(), exp.getOperation(),
           sum.getOperation(), recip.getOperation()},
          out);
    out.anchors[op] = SoftmaxMatch{x, sum.getAxis()};
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
  // The scale and shift hold one value per normalized element (a constant
  // broadcast from fewer stays a tosa op); the result has x's type.
  if ((gamma && !holdsElements(gamma, count)) ||
      (beta && !holdsElements(beta, count)) ||
      op->getResult(0).getType() != type)
    return;
  claim(op, ops, out);
  out.anchors[op] = LayerNormMatch{x, gamma, beta, axis, epsilon};
}

//===----------------------------------------------------------------------===//
// DLRM dot interaction:
//   T = reshape(concat(x, e1..eF) axis 1) [B, F+1, D]
//   Z = matmul(T, transpose(T, [0, 2, 1]))
//   R = (reshapes / transposes / constant gathers of Z) [B, P]
//   anchor = concat(x, R) axis 1
// The pairs R picks are found by running the data movement (and the shape
// and index arithmetic it reads) on labels at two batch sizes; they must be
// a whole triangle in the "dlrm" or "torchrec" order of the kernel, every
// dim on the way the batch or a constant, the gather indices constants.
//===----------------------------------------------------------------------===//

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

/// One run of the interaction's data movement at `samples` samples.
struct InteractionRun {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  /// The shapes of the concat, T, its transpose, Z and the chain's values.
  llvm::DenseMap<Value, SmallVector<int64_t>> shapes;
  /// The indices of the chain's gathers.
  SmallVector<std::vector<int64_t>> indices;
};

FailureOr<InteractionRun> runInteraction(const InteractionMatch &m, Value r,
                                         int64_t samples) {
  SmallVector<Value> batchInputs = {m.x};
  batchInputs.append(m.sparse.begin(), m.sparse.end());
  tosa::MatMulOp matmul = m.matmul;
  tosa::TransposeOp transpose = m.transpose;
  LabelInterpreter in(samples, batchInputs, matmul.getResult());
  int64_t n = m.f + 1;
  FailureOr<LabelTensor> t = in.eval(matmul.getA());
  if (failed(t) || t->shape != SmallVector<int64_t>({samples, n, m.d}))
    return failure();
  FailureOr<LabelTensor> labels = in.eval(r);
  if (failed(labels) || !labels->data || labels->shape.size() != 2 ||
      labels->shape[0] != samples)
    return failure();
  InteractionRun run;
  int64_t p = labels->shape[1];
  for (int64_t b = 0; b < samples; ++b)
    for (int64_t c = 0; c < p; ++c) {
      int64_t label = (*labels->data)[b * p + c];
      int64_t i = (label % (n * n)) / n, j = label % n;
      if (label / (n * n) != b)
        return failure(); // a column mixes samples
      if (b == 0)
        run.pairs.push_back({i, j});
      else if (run.pairs[c] != std::make_pair(i, j))
        return failure();
    }
  SmallVector<Value> values = {m.cat->getResult(0), m.view->getResult(0),
                               transpose.getResult(), matmul.getResult()};
  for (Operation *c : m.chain)
    values.push_back(c->getResult(0));
  for (Value v : values) {
    FailureOr<LabelTensor> c = in.eval(v);
    if (failed(c))
      return failure();
    run.shapes[v] = c->shape;
  }
  for (Operation *c : m.chain)
    if (auto g = dyn_cast<tosa::GatherOp>(c)) {
      FailureOr<LabelTensor> idx = in.eval(g.getIndices());
      if (failed(idx) || !idx->data)
        return failure();
      run.indices.push_back(*idx->data);
    }
  return run;
}

/// Runs the data movement at two batch sizes (one when the batch is
/// static): fills the match's pair order and dims, or fails.
LogicalResult verifyInteraction(InteractionMatch &m, Value r) {
  auto xType = cast<RankedTensorType>(m.x.getType());
  SmallVector<int64_t> sizes;
  if (xType.isDynamicDim(0))
    sizes = {3, 5};
  else if (xType.getDimSize(0) > 0)
    sizes = {xType.getDimSize(0)};
  else
    return failure();
  SmallVector<InteractionRun> runs;
  for (int64_t samples : sizes) {
    FailureOr<InteractionRun> run = runInteraction(m, r, samples);
    if (failed(run))
      return failure();
    runs.push_back(std::move(*run));
  }
  const InteractionRun &first = runs.front();
  for (const InteractionRun &run : runs)
    if (run.pairs != first.pairs || run.indices != first.indices)
      return failure(); // the pairs or indices depend on the batch
  std::tie(m.order, m.self) = pairOrder(first.pairs, m.f);
  if (m.order.empty())
    return failure();
  // Every dim on the way is the batch or a constant.
  for (const auto &entry : first.shapes) {
    Value v = entry.first;
    SmallVector<int64_t> dims;
    for (size_t k = 0; k < entry.second.size(); ++k) {
      bool isStatic = true, isBatch = sizes.size() > 1;
      for (size_t run = 0; run < runs.size(); ++run) {
        auto it = runs[run].shapes.find(v);
        if (it == runs[run].shapes.end() ||
            it->second.size() != entry.second.size())
          return failure();
        const SmallVector<int64_t> &shape = it->second;
        isStatic &= shape[k] == entry.second[k];
        isBatch &= shape[k] == sizes[run];
      }
      if (isBatch)
        dims.push_back(kBatch);
      else if (isStatic)
        dims.push_back(entry.second[k]);
      else
        return failure();
    }
    m.dims[v] = std::move(dims);
  }
  return success();
}

/// The structure of the DLRM interaction ending at `op` (a concat(x, R)):
/// R reached from Z = matmul(T, transpose(T, [0, 2, 1])) through
/// single-use data movement, T a reshape of concat(x, e1..eF) axis 1; then
/// verified on labels.
void findDotInteraction(Operation *op, DenseFusions &out,
                        const llvm::DenseSet<Operation *> &taken) {
  auto anchor = dyn_cast<tosa::ConcatOp>(op);
  if (!anchor || anchor.getAxis() != 1 || anchor.getInput1().size() != 2)
    return;
  InteractionMatch m;
  m.x = anchor.getInput1()[0];
  Value r = anchor.getInput1()[1];
  auto xType = cast<RankedTensorType>(m.x.getType());
  if (xType.getRank() != 2 || xType.isDynamicDim(1) ||
      !xType.getElementType().isF32() ||
      !cast<RankedTensorType>(anchor.getType()).getElementType().isF32())
    return;
  m.d = xType.getDimSize(1);
  if (m.d <= 0)
    return;
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
  if (failed(verifyInteraction(m, r)))
    return;
  out.anchors[op] = std::move(m);
}

//===----------------------------------------------------------------------===//
// DCN-v2 cross layer: add(mul(x0, L), xl) with L = W xl + b (a linear
// chain without activation) or L = U (V xl) + b (the importer's two
// matmuls, the first one still 3-D).
//===----------------------------------------------------------------------===//

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

/// A matmul B operand the kernel can take as an [out, in] weight: a
/// constant [1, K, N].
bool isWeight(Value b) {
  auto type = cast<RankedTensorType>(b.getType());
  return type.getRank() == 3 && type.hasStaticShape() &&
         type.getDimSize(0) == 1 && type.getElementType().isF32();
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
      // The bias holds one value per column (a constant broadcast from
      // fewer is not the kernel's).
      if (bias && !holdsElements(bias, type.getDimSize(1)))
        continue;
      CrossMatch m{x0, xl, bias, {}};
      SmallVector<Operation *> ops = {mul, matmul,
                                      matmul->getUsers().begin() ==
                                              matmul->getUsers().end()
                                          ? nullptr
                                          : *matmul->getUsers().begin(),
                                      l.getDefiningOp()};
      if (expandedFrom(matmul.getA()) == xl && isWeight(matmul.getB())) {
        m.weights = {matmul.getB()}; // full rank
        ops.push_back(matmul.getA().getDefiningOp());
      } else if (auto first = matmul.getA().getDefiningOp<tosa::MatMulOp>();
                 first && isZeroConstant(first.getAZp()) &&
                 isZeroConstant(first.getBZp()) &&
                 isConstantLike(first.getB()) &&
                 expandedFrom(first.getA()) == xl && isWeight(first.getB()) &&
                 isWeight(matmul.getB())) {
        m.weights = {first.getB(), matmul.getB()}; // low rank: V, then U
        ops.push_back(first);
        ops.push_back(first.getA().getDefiningOp());
      } else {
        continue;
      }
      llvm::erase(ops, nullptr);
      claim(op, ops, out);
      out.anchors[op] = std::move(m);
      return;
    }
  }
}

/// The fused patterns of `block` other than the linear chains, found last
/// op first: an anchor found later in the block claims its pattern before
/// a pattern that would end inside it. Ops of `linear` chains are left to
/// them, except where a DCN cross layer takes a chain over (it is then in
/// fusedOps). An op of a pattern that something outside the pattern reads
/// stays.
DenseFusions findDenseFusions(Block &block, const LinearChains &linear) {
  DenseFusions out;
  // Ops of linear chains, except those a DCN cross layer may take over.
  llvm::DenseSet<Operation *> taken(linear.fusedOps.begin(),
                                    linear.fusedOps.end());
  for (auto &entry : linear.anchors)
    taken.insert(entry.first);
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

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// `v` as a 1-D tensor (the kernels' bias, scale and shift).
Value flatten(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 1)
    return v;
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1}, type.getElementType()), v,
        ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return tensor::CollapseShapeOp::create(b, loc, v,
                                         ArrayRef<ReassociationIndices>{all});
}

/// A matmul's [1, K, N] B operand as [K, N].
Value weightKN(OpBuilder &b, Location loc, Value w) {
  return tensor::CollapseShapeOp::create(
      b, loc, w, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
}

/// A matmul's [1, K, N] B operand as [N, K] (the [out, in] of dcn_cross).
Value weightNK(OpBuilder &b, Location loc, Value w) {
  Value kn = weightKN(b, loc, w);
  auto type = cast<RankedTensorType>(kn.getType());
  return tosa::TransposeOp::create(
      b, loc,
      RankedTensorType::get({type.getDimSize(1), type.getDimSize(0)},
                            type.getElementType()),
      kn, ArrayRef<int32_t>{1, 0});
}

/// Builds the op of a dense pattern at `anchor` (before it).
Value buildDense(OpBuilder &b, Operation *anchor, const DenseMatch &match) {
  Location loc = anchor->getLoc();
  Type type = anchor->getResult(0).getType();
  if (auto *m = std::get_if<SoftmaxMatch>(&match))
    return SoftmaxOp::create(b, loc, type, m->x, m->axis);
  if (auto *m = std::get_if<LayerNormMatch>(&match)) {
    Value gamma = m->gamma ? flatten(b, loc, m->gamma) : Value();
    Value beta = m->beta ? flatten(b, loc, m->beta) : Value();
    return LayerNormOp::create(
        b, loc, type, m->x, gamma, beta, b.getI64IntegerAttr(m->axis),
        b.getF32FloatAttr(static_cast<float>(m->epsilon)));
  }
  if (auto *m = std::get_if<CrossMatch>(&match)) {
    SmallVector<Value> weights;
    for (Value w : m->weights)
      weights.push_back(weightNK(b, loc, w));
    Value bias = m->bias ? flatten(b, loc, m->bias) : Value();
    return DcnCrossOp::create(b, loc, type, m->x0, m->xl, weights, bias);
  }
  const auto &m = std::get<InteractionMatch>(match);
  Value sparse = m.sparse.size() == 1
                     ? m.sparse.front()
                     : tosa::ConcatOp::create(b, loc, m.sparse, 1).getResult();
  return DotInteractionOp::create(
      b, loc, type, m.x, sparse, b.getI64IntegerAttr(m.f),
      b.getBoolAttr(m.self), b.getStringAttr(m.order));
}

/// tensor.dim of the values inside a raised interaction: a constant or the
/// dim 0 of x (the batch), so that the values can go. Returns the
/// replaced dims.
SmallVector<Operation *> resolveInteractionDims(const InteractionMatch &m) {
  SmallVector<Operation *> replaced;
  for (const auto &[v, dims] : m.dims)
    for (Operation *user : llvm::make_early_inc_range(v.getUsers())) {
      auto dim = dyn_cast<tensor::DimOp>(user);
      std::optional<int64_t> index =
          dim ? dim.getConstantIndex() : std::nullopt;
      if (!index || *index < 0 || *index >= static_cast<int64_t>(dims.size()))
        continue;
      OpBuilder b(dim);
      Value size =
          dims[*index] == kBatch
              ? tensor::DimOp::create(b, dim.getLoc(), m.x, 0).getResult()
              : arith::ConstantIndexOp::create(b, dim.getLoc(), dims[*index])
                    .getResult();
      dim.getResult().replaceAllUsesWith(size);
      replaced.push_back(dim);
    }
  return replaced;
}

/// Erases the ops of `worklist` that nothing reads any more, and the
/// producers that become unread with them.
void eraseDead(SmallVector<Operation *> worklist) {
  llvm::DenseSet<Operation *> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.count(op) || !isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    erased.insert(op);
    op->erase();
  }
}

/// reduce_sum over dim 1 of jagged.to_padded with zero padding read by
/// nothing else (a sequence model's `to_padded_dense(L).sum(1)` or
/// `.mean(1)`) -> ember.jagged.sum, reshaped to the reduction's [B, 1, D...].
void raiseJaggedSums(Block &block) {
  SmallVector<tosa::ReduceSumOp> sums;
  for (Operation &op : block)
    if (auto sum = dyn_cast<tosa::ReduceSumOp>(op))
      sums.push_back(sum);
  for (tosa::ReduceSumOp sum : sums) {
    auto padded = sum.getInput().getDefiningOp<JaggedToPaddedOp>();
    auto zero = padded ? dyn_cast<FloatAttr>(padded.getPadding()) : FloatAttr();
    if (!padded || sum.getAxis() != 1 || !padded->hasOneUse() || !zero ||
        !zero.getValue().isZero() ||
        !padded.getInput().getType().getElementType().isF32())
      continue;
    auto resultType = cast<RankedTensorType>(sum.getType());
    SmallVector<int64_t> shape = {resultType.getDimSize(0)};
    SmallVector<int64_t> target = {-1, 1};
    for (int64_t d = 2; d < resultType.getRank(); ++d) {
      shape.push_back(resultType.getDimSize(d));
      target.push_back(resultType.getDimSize(d));
    }
    if (llvm::any_of(ArrayRef<int64_t>(shape).drop_front(),
                     ShapedType::isDynamic))
      continue;
    OpBuilder b(sum);
    Location loc = sum.getLoc();
    Value pooled = JaggedSumOp::create(
        b, loc, RankedTensorType::get(shape, resultType.getElementType()),
        padded.getInput(), padded.getMaxLengthAttr());
    auto shapeType = tosa::shapeType::get(b.getContext(), target.size());
    Value targetShape = tosa::ConstShapeOp::create(
        b, loc, shapeType,
        DenseIntElementsAttr::get(
            RankedTensorType::get({static_cast<int64_t>(target.size())},
                                  b.getIndexType()),
            target));
    Value reshaped =
        tosa::ReshapeOp::create(b, loc, resultType, pooled, targetShape);
    sum.getResult().replaceAllUsesWith(reshaped);
    sum.erase();
    padded.erase();
  }
}

void raiseBlock(Block &block) {
  raiseJaggedSums(block);
  LinearChains linear = findLinearChains(block);
  DenseFusions dense = findDenseFusions(block, linear);
  // A chain whose last op a cross layer took is part of that layer.
  SmallVector<Operation *> anchors;
  for (auto &entry : dense.anchors)
    anchors.push_back(entry.first);
  for (auto &entry : linear.anchors)
    if (!dense.fusedOps.count(entry.first))
      anchors.push_back(entry.first);
  // Last anchors first: an op built at an anchor reads values defined
  // before it, and an earlier anchor replaced later updates that read.
  llvm::sort(anchors,
             [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
  SmallVector<Operation *> dead;
  for (Operation *anchor : anchors) {
    OpBuilder b(anchor);
    Value result;
    auto dm = dense.anchors.find(anchor);
    if (dm != dense.anchors.end()) {
      result = buildDense(b, anchor, dm->second);
      if (auto *m = std::get_if<InteractionMatch>(&dm->second))
        llvm::append_range(dead, resolveInteractionDims(*m));
    } else {
      LinearChain chain = linear.anchors.find(anchor)->second;
      // Named after the Gemm (its matmul), as the plan's instruction.
      Location loc = b.getFusedLoc({chain.matmul.getLoc(), anchor->getLoc()});
      Value weight = weightKN(b, chain.matmul.getLoc(), chain.matmul.getB());
      Value bias = chain.bias ? flatten(b, loc, chain.bias) : Value();
      result = LinearOp::create(b, loc, anchor->getResult(0).getType(), chain.x,
                                weight, bias, b.getBoolAttr(false),
                                b.getStringAttr(chain.activation));
    }
    anchor->getResult(0).replaceAllUsesWith(result);
    dead.push_back(anchor);
  }
  eraseDead(std::move(dead));
}

struct RaiseDenseOpsPass
    : public mlir::ember::impl::EmberRaiseDenseOpsBase<RaiseDenseOpsPass> {
  void runOnOperation() override {
    getOperation()->walk([](func::FuncOp func) {
      for (Block &block : func.getBody())
        raiseBlock(block);
    });
  }
};

} // namespace
