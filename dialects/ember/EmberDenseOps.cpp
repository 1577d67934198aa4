//===- EmberDenseOps.cpp - dense computations of one kernel each ----------===//
#include "EmberOpsUtils.h"
#include "dialects/ember/EmberOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ember;

/// `axis` in [-rank, rank) of a `rank`-D input, as a dim in [0, rank).
static FailureOr<int64_t> normalizedAxis(Operation *op, int64_t axis,
                                         int64_t rank) {
  if (axis < -rank || axis >= rank) {
    op->emitOpError("axis ")
        << axis << " is out of range for an input of rank " << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

LogicalResult SoftmaxOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  if (type.getRank() == 0)
    return emitOpError("needs an input of rank 1 or more");
  return normalizedAxis(*this, getAxis(), type.getRank());
}

LogicalResult LayerNormOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  if (type.getRank() == 0)
    return emitOpError("needs an input of rank 1 or more");
  FailureOr<int64_t> axis = normalizedAxis(*this, getAxis(), type.getRank());
  if (failed(axis))
    return failure();
  if (getEpsilon().convertToDouble() < 0 ||
      std::isnan(getEpsilon().convertToDouble()))
    return emitOpError("epsilon must be at least 0, got ")
           << getEpsilon().convertToDouble();
  ArrayRef<int64_t> normalized = type.getShape().drop_front(*axis);
  bool staticCount = llvm::none_of(normalized, ShapedType::isDynamic);
  int64_t count = 1;
  for (int64_t d : normalized)
    count *= staticCount ? d : 1;
  for (auto [name, v] : {std::pair<StringRef, Value>{"scale", getScale()},
                         std::pair<StringRef, Value>{"bias", getBias()}}) {
    if (!v)
      continue;
    auto t = cast<RankedTensorType>(v.getType());
    bool oneD = t.getRank() == 1;
    bool sameShape = t.getRank() == static_cast<int64_t>(normalized.size());
    for (int64_t i = 0; sameShape && i < t.getRank(); ++i)
      sameShape = sizesCompatible(t.getDimSize(i), normalized[i]);
    if (!oneD && !sameShape)
      return emitOpError() << name << " " << t
                           << " is neither 1-D nor of the normalized shape "
                           << "(the input's dims from axis " << *axis << ")";
    if (oneD && staticCount && !t.isDynamicDim(0) && t.getDimSize(0) != count)
      return emitOpError() << name << " has " << t.getDimSize(0)
                           << " elements but the normalized dims hold "
                           << count;
  }
  return success();
}

LogicalResult LinearOp::verify() {
  auto x = cast<RankedTensorType>(getInput().getType());
  auto w = cast<RankedTensorType>(getWeight().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  StringRef act = getActivation();
  if (act != "none" && act != "relu" && act != "sigmoid" && act != "tanh")
    return emitOpError("activation must be \"none\", \"relu\", \"sigmoid\" "
                       "or \"tanh\", got \"")
           << act << "\"";
  if (x.getRank() == 0)
    return emitOpError("needs an input of rank 1 or more ([..., K])");
  if (w.getRank() != 2)
    return emitOpError("weight must be 2-D, got ") << w;
  bool transposed = getTransposeWeight();
  int64_t k = w.getDimSize(transposed ? 1 : 0);
  int64_t n = w.getDimSize(transposed ? 0 : 1);
  if (!sizesCompatible(x.getDimSize(x.getRank() - 1), k))
    return emitOpError("input ")
           << x << " has K = " << sizeToString(x.getDimSize(x.getRank() - 1))
           << " but the weight " << w << " has K = " << sizeToString(k)
           << (transposed ? " ([N, K])" : " ([K, N])");
  if (Value bias = getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (b.getRank() != 1 || !sizesCompatible(b.getDimSize(0), n))
      return emitOpError("bias must be [N] with N = ")
             << sizeToString(n) << ", got " << b;
  }
  if (result.getRank() != x.getRank())
    return emitOpError("result ")
           << result << " must have the input's rank " << x.getRank();
  for (int64_t d = 0; d + 1 < x.getRank(); ++d)
    if (!sizesCompatible(result.getDimSize(d), x.getDimSize(d)))
      return emitOpError("result dim ")
             << d << " is " << sizeToString(result.getDimSize(d))
             << " but the input's is " << sizeToString(x.getDimSize(d));
  if (!sizesCompatible(result.getDimSize(x.getRank() - 1), n))
    return emitOpError("result ")
           << result << " must end in N = " << sizeToString(n);
  return success();
}

LogicalResult DotInteractionOp::verify() {
  auto dense = cast<RankedTensorType>(getDense().getType());
  auto sparse = cast<RankedTensorType>(getSparse().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (getPairOrder() != "dlrm" && getPairOrder() != "torchrec")
    return emitOpError("pair_order must be \"dlrm\" or \"torchrec\", got \"")
           << getPairOrder() << "\"";
  if (dense.getRank() != 2 || sparse.getRank() != 2 || result.getRank() != 2)
    return emitOpError("dense, sparse and result must be 2-D ([B, D], "
                       "[B, F*D], [B, D + P])");
  for (RankedTensorType t : {sparse, result})
    if (!sizesCompatible(t.getDimSize(0), dense.getDimSize(0)))
      return emitOpError("batch sizes differ: ") << dense << " and " << t;
  int64_t f = getNumFeatures();
  int64_t d = dense.getDimSize(1);
  if (ShapedType::isDynamic(d))
    return success();
  if (!sparse.isDynamicDim(1) && sparse.getDimSize(1) != f * d)
    return emitOpError("sparse ")
           << sparse << " must be [B, F*D] = [B, " << f * d << "] for " << f
           << " features of dim " << d;
  int64_t pairs =
      getSelfInteraction() ? (f + 1) * (f + 2) / 2 : (f + 1) * f / 2;
  if (!result.isDynamicDim(1) && result.getDimSize(1) != d + pairs)
    return emitOpError("result ")
           << result << " must be [B, D + P] = [B, " << d + pairs << "]";
  return success();
}

LogicalResult DcnCrossOp::verify() {
  auto type = cast<RankedTensorType>(getXl().getType());
  if (type.getRank() != 2)
    return emitOpError("x0 and xl must be 2-D ([B, D]), got ") << type;
  int64_t d = type.getDimSize(1);
  OperandRange weights = getWeights();
  if (weights.size() != 1 && weights.size() != 2)
    return emitOpError("takes one weight (full rank) or two (V, W: low "
                       "rank), got ")
           << weights.size();
  auto expect2d = [&](Value v, StringRef name, int64_t rows,
                      int64_t cols) -> LogicalResult {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 2 || !sizesCompatible(t.getDimSize(0), rows) ||
        !sizesCompatible(t.getDimSize(1), cols))
      return emitOpError() << name << " must be [" << sizeToString(rows) << ", "
                           << sizeToString(cols) << "] ([out, in]), got " << t;
    return success();
  };
  if (weights.size() == 1) {
    if (failed(expect2d(weights[0], "the weight", d, d)))
      return failure();
  } else {
    auto v = cast<RankedTensorType>(weights[0].getType());
    int64_t r = v.getRank() == 2 ? v.getDimSize(0) : ShapedType::kDynamic;
    if (failed(expect2d(weights[0], "V", r, d)) ||
        failed(expect2d(weights[1], "W", d, r)))
      return failure();
  }
  if (Value bias = getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    bool ok = (b.getRank() == 1 ||
               (b.getRank() == 2 && sizesCompatible(b.getDimSize(1), 1))) &&
              sizesCompatible(b.getDimSize(0), d);
    if (!ok)
      return emitOpError("bias must be [D] or [D, 1] with D = ")
             << sizeToString(d) << ", got " << b;
  }
  return success();
}
