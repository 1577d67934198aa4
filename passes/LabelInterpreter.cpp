//===- LabelInterpreter.cpp - Data movement run on element labels -------===//
#include "passes/LabelInterpreter.h"
#include "passes/TosaMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

namespace mlir::ember {
namespace {

/// At most this many elements are computed (labels, indices, shapes); a
/// larger tensor fails the evaluation, and so does a shape of more than
/// kMaxShapeElements elements.
constexpr int64_t kMaxElements = int64_t(1) << 24;
constexpr int64_t kMaxShapeElements = int64_t(1) << 48;

/// The element count of `shape`, or nullopt when a dim is negative or the
/// count is above `limit`.
std::optional<int64_t> boundedCount(ArrayRef<int64_t> shape, int64_t limit) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || (d > 0 && n > limit / d) || (n *= d) > limit)
      return std::nullopt;
  return n;
}

/// The result is of a bounded size and agrees with v's static type.
bool consistent(Value v, const LabelTensor &c) {
  std::optional<int64_t> n =
      boundedCount(c.shape, c.data ? kMaxElements : kMaxShapeElements);
  if (!n || (c.data && static_cast<int64_t>(c.data->size()) != *n))
    return false;
  if (auto shape = dyn_cast<tosa::shapeType>(v.getType()))
    return c.shape.size() == 1 && c.shape[0] == shape.getRank();
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return c.shape.empty() && v.getType().isIntOrIndex();
  if (type.getRank() != static_cast<int64_t>(c.shape.size()))
    return false;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (c.shape[d] < 0 ||
        (!type.isDynamicDim(d) && type.getDimSize(d) != c.shape[d]))
      return false;
  return true;
}

/// The contents of an integer constant (of at most kMaxElements
/// elements), or only the shape of another.
LabelTensor fromAttr(DenseElementsAttr attr) {
  LabelTensor c;
  auto type = cast<ShapedType>(attr.getType());
  c.shape.assign(type.getShape().begin(), type.getShape().end());
  if (attr.getElementType().isIntOrIndex() &&
      attr.getNumElements() <= kMaxElements) {
    std::vector<int64_t> data;
    for (const APInt &i : attr.getValues<APInt>())
      data.push_back(attr.getElementType().isUnsignedInteger()
                         ? static_cast<int64_t>(i.getZExtValue())
                         : i.getSExtValue());
    c.data = std::move(data);
  }
  return c;
}

/// Reads `data` (row-major over `shape`) at `index`, broadcasting dims
/// of 1.
int64_t at(const LabelTensor &c, ArrayRef<int64_t> index) {
  int64_t flat = 0;
  for (size_t k = 0; k < c.shape.size(); ++k)
    flat = flat * c.shape[k] + (c.shape[k] == 1 ? 0 : index[k]);
  return (*c.data)[flat];
}

/// Elementwise integer tosa.add/sub/mul of equal-rank operands.
FailureOr<LabelTensor> binary(const LabelTensor &a, const LabelTensor &b,
                              function_ref<int64_t(int64_t, int64_t)> f) {
  if (!a.data || !b.data || a.shape.size() != b.shape.size())
    return failure();
  LabelTensor out;
  for (size_t k = 0; k < a.shape.size(); ++k) {
    if (a.shape[k] != b.shape[k] && a.shape[k] != 1 && b.shape[k] != 1)
      return failure();
    out.shape.push_back(std::max(a.shape[k], b.shape[k]));
  }
  if (!boundedCount(out.shape, kMaxElements))
    return failure();
  std::vector<int64_t> data(out.numElements());
  SmallVector<int64_t> index(out.shape.size(), 0);
  for (size_t flat = 0; flat < data.size(); ++flat) {
    data[flat] = f(at(a, index), at(b, index));
    for (int64_t k = static_cast<int64_t>(index.size()) - 1; k >= 0; --k) {
      if (++index[k] < out.shape[k])
        break;
      index[k] = 0;
    }
  }
  out.data = std::move(data);
  return out;
}

/// `in` viewed with `shape` (-1 once: inferred); the same data.
FailureOr<LabelTensor> reshaped(const LabelTensor &in,
                                SmallVector<int64_t> shape) {
  int64_t known = 1, inferred = -1;
  for (auto [k, d] : llvm::enumerate(shape)) {
    if (d == -1 && inferred < 0)
      inferred = k;
    else if (d < 0)
      return failure();
    else
      known *= d;
  }
  if (inferred >= 0) {
    if (known == 0 || in.numElements() % known != 0)
      return failure();
    shape[inferred] = in.numElements() / known;
    known *= shape[inferred];
  }
  if (known != in.numElements())
    return failure();
  return LabelTensor{std::move(shape), in.data};
}

/// `in` with its dims permuted: result dim k is input dim perm[k].
FailureOr<LabelTensor> transposed(const LabelTensor &in,
                                  ArrayRef<int32_t> perm) {
  size_t rank = in.shape.size();
  if (perm.size() != rank)
    return failure();
  LabelTensor out;
  for (int32_t p : perm) {
    if (p < 0 || static_cast<size_t>(p) >= rank)
      return failure();
    out.shape.push_back(in.shape[p]);
  }
  if (!in.data)
    return out;
  std::vector<int64_t> data(in.data->size());
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = static_cast<int64_t>(rank) - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * in.shape[d + 1];
  SmallVector<int64_t> index(rank, 0);
  for (size_t flat = 0; flat < data.size(); ++flat) {
    int64_t src = 0;
    for (size_t k = 0; k < rank; ++k)
      src += index[k] * inStrides[perm[k]];
    data[flat] = (*in.data)[src];
    for (int64_t k = static_cast<int64_t>(rank) - 1; k >= 0; --k) {
      if (++index[k] < out.shape[k])
        break;
      index[k] = 0;
    }
  }
  out.data = std::move(data);
  return out;
}

} // namespace

int64_t LabelTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

FailureOr<LabelTensor> LabelInterpreter::eval(Value v, int depth) {
  auto it = cache_.find(v);
  if (it != cache_.end())
    return it->second;
  if (depth > 256)
    return failure();
  FailureOr<LabelTensor> c = compute(v, depth + 1);
  if (failed(c) || !consistent(v, *c))
    return failure();
  cache_[v] = *c;
  return c;
}

FailureOr<int64_t> LabelInterpreter::scalar(Value v, int depth) {
  FailureOr<LabelTensor> c = eval(v, depth);
  if (failed(c) || !c->data || c->data->size() != 1)
    return failure();
  return (*c->data)[0];
}

FailureOr<LabelTensor> LabelInterpreter::compute(Value v, int depth) {
  if (batchInputs_.count(v)) {
    auto type = cast<RankedTensorType>(v.getType());
    LabelTensor c;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        c.shape.push_back(type.getDimSize(d));
      else if (d == 0)
        c.shape.push_back(samples_);
      else
        return failure();
    }
    return c;
  }
  Operation *op = v.getDefiningOp();
  if (!op)
    return failure();
  if (auto mm = dyn_cast<tosa::MatMulOp>(op)) {
    FailureOr<LabelTensor> a = eval(mm.getA(), depth);
    FailureOr<LabelTensor> b = eval(mm.getB(), depth);
    if (failed(a) || failed(b) || a->shape.size() != 3 ||
        b->shape.size() != 3 || a->shape[0] != b->shape[0] ||
        a->shape[2] != b->shape[1])
      return failure();
    LabelTensor c{{a->shape[0], a->shape[1], b->shape[2]}, std::nullopt};
    if (v == seed_) { // Z: each element labelled with its own index
      if (!boundedCount(c.shape, kMaxElements))
        return failure();
      std::vector<int64_t> labels(c.numElements());
      std::iota(labels.begin(), labels.end(), 0);
      c.data = std::move(labels);
    }
    return c;
  }
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    if (auto i = dyn_cast<IntegerAttr>(cst.getValue()))
      return LabelTensor{{}, std::vector<int64_t>{i.getInt()}};
    if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue()))
      return fromAttr(dense);
    return failure();
  }
  if (auto cst = dyn_cast<tosa::ConstOp>(op)) {
    if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValues()))
      return fromAttr(dense);
    return failure();
  }
  if (auto shape = dyn_cast<tosa::ConstShapeOp>(op))
    return fromAttr(shape.getValues());
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    FailureOr<LabelTensor> src = eval(dim.getSource(), depth);
    FailureOr<int64_t> index = scalar(dim.getIndex(), depth);
    if (failed(src) || failed(index) || *index < 0 ||
        *index >= static_cast<int64_t>(src->shape.size()))
      return failure();
    return LabelTensor{{}, std::vector<int64_t>{src->shape[*index]}};
  }
  if (isa<arith::MulIOp, arith::AddIOp, arith::SubIOp, arith::DivUIOp,
          arith::DivSIOp>(op)) {
    FailureOr<int64_t> a = scalar(op->getOperand(0), depth);
    FailureOr<int64_t> b = scalar(op->getOperand(1), depth);
    if (failed(a) || failed(b))
      return failure();
    int64_t r = 0;
    bool overflow = false;
    if (isa<arith::MulIOp>(op))
      overflow = llvm::MulOverflow(*a, *b, r);
    else if (isa<arith::AddIOp>(op))
      overflow = llvm::AddOverflow(*a, *b, r);
    else if (isa<arith::SubIOp>(op))
      overflow = llvm::SubOverflow(*a, *b, r);
    else if (*b == 0 || *a < 0 || *b < 0)
      return failure(); // sizes are not negative
    else
      r = *a / *b;
    if (overflow)
      return failure();
    return LabelTensor{{}, std::vector<int64_t>{r}};
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::TruncIOp>(op)) {
    FailureOr<LabelTensor> in = eval(op->getOperand(0), depth);
    if (failed(in) || !in->data)
      return failure();
    Type elem = getElementTypeOrSelf(op->getResult(0).getType());
    unsigned width = elem.isIndex() ? 64 : elem.getIntOrFloatBitWidth();
    LabelTensor out = *in;
    for (int64_t &x : *out.data) {
      int64_t wrapped =
          width >= 64 ? x : llvm::SignExtend64(static_cast<uint64_t>(x), width);
      if (isa<arith::TruncIOp>(op))
        x = wrapped;
      else if (wrapped != x)
        return failure();
    }
    return out;
  }
  if (auto fromElements = dyn_cast<tensor::FromElementsOp>(op)) {
    std::vector<int64_t> data;
    for (Value e : fromElements.getElements()) {
      FailureOr<int64_t> s = scalar(e, depth);
      if (failed(s))
        return failure();
      data.push_back(*s);
    }
    auto type = fromElements.getType();
    return LabelTensor{SmallVector<int64_t>(type.getShape()), std::move(data)};
  }
  if (isa<tosa::AddOp, tosa::SubOp, tosa::MulOp>(op)) {
    if (!getElementTypeOrSelf(op->getResult(0).getType()).isInteger())
      return failure();
    if (auto mul = dyn_cast<tosa::MulOp>(op);
        mul && !isZeroConstant(mul.getShift()))
      return failure();
    FailureOr<LabelTensor> a = eval(op->getOperand(0), depth);
    FailureOr<LabelTensor> b = eval(op->getOperand(1), depth);
    if (failed(a) || failed(b))
      return failure();
    if (isa<tosa::AddOp>(op))
      return binary(*a, *b, [](int64_t x, int64_t y) {
        return static_cast<int64_t>(static_cast<uint64_t>(x) +
                                    static_cast<uint64_t>(y));
      });
    if (isa<tosa::SubOp>(op))
      return binary(*a, *b, [](int64_t x, int64_t y) {
        return static_cast<int64_t>(static_cast<uint64_t>(x) -
                                    static_cast<uint64_t>(y));
      });
    // Wrapping, as the int64 kernels: indices out of range fail later.
    return binary(*a, *b, [](int64_t x, int64_t y) {
      return static_cast<int64_t>(static_cast<uint64_t>(x) *
                                  static_cast<uint64_t>(y));
    });
  }
  if (isa<tosa::ReshapeOp, tensor::ReshapeOp, tensor::ExpandShapeOp,
          tensor::CollapseShapeOp, tensor::CastOp>(op)) {
    FailureOr<LabelTensor> in = eval(op->getOperand(0), depth);
    if (failed(in))
      return failure();
    SmallVector<int64_t> shape;
    if (isa<tosa::ReshapeOp, tensor::ReshapeOp>(op)) {
      FailureOr<LabelTensor> s = eval(op->getOperand(1), depth);
      if (failed(s) || !s->data)
        return failure();
      shape.assign(s->data->begin(), s->data->end());
    } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      for (OpFoldResult size : expand.getMixedOutputShape()) {
        if (std::optional<int64_t> c = getConstantIntValue(size)) {
          shape.push_back(*c);
          continue;
        }
        FailureOr<int64_t> s = scalar(cast<Value>(size), depth);
        if (failed(s))
          return failure();
        shape.push_back(*s);
      }
    } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
      for (const ReassociationIndices &group :
           collapse.getReassociationIndices()) {
        int64_t n = 1;
        for (int64_t k : group) {
          if (k >= static_cast<int64_t>(in->shape.size()))
            return failure();
          n *= in->shape[k];
        }
        shape.push_back(n);
      }
    } else {
      shape = in->shape; // tensor.cast
    }
    return reshaped(*in, shape);
  }
  if (auto t = dyn_cast<tosa::TransposeOp>(op)) {
    FailureOr<LabelTensor> in = eval(t.getInput1(), depth);
    if (failed(in))
      return failure();
    return transposed(*in, t.getPerms());
  }
  if (auto g = dyn_cast<tosa::GatherOp>(op)) {
    FailureOr<LabelTensor> in = eval(g.getValues(), depth);
    FailureOr<LabelTensor> idx = eval(g.getIndices(), depth);
    if (failed(in) || failed(idx) || !idx->data || in->shape.size() != 3 ||
        idx->shape.size() != 2 || idx->shape[0] != in->shape[0])
      return failure();
    int64_t n = in->shape[0], k = in->shape[1], c = in->shape[2];
    int64_t w = idx->shape[1];
    LabelTensor out{{n, w, c}, std::nullopt};
    for (int64_t i : *idx->data)
      if (i < 0 || i >= k)
        return failure();
    if (!in->data)
      return out;
    if (!boundedCount(out.shape, kMaxElements))
      return failure();
    std::vector<int64_t> data(n * w * c);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t j = 0; j < w; ++j) {
        int64_t row = (*idx->data)[b * w + j];
        for (int64_t e = 0; e < c; ++e)
          data[(b * w + j) * c + e] = (*in->data)[(b * k + row) * c + e];
      }
    out.data = std::move(data);
    return out;
  }
  if (auto concat = dyn_cast<tosa::ConcatOp>(op)) {
    int64_t axis = concat.getAxis();
    SmallVector<LabelTensor> parts;
    for (Value in : concat.getInput1()) {
      FailureOr<LabelTensor> c = eval(in, depth);
      if (failed(c) || axis < 0 ||
          axis >= static_cast<int64_t>(c->shape.size()))
        return failure();
      parts.push_back(*c);
    }
    LabelTensor out{parts.front().shape, std::nullopt};
    out.shape[axis] = 0;
    bool withData = true;
    for (const LabelTensor &p : parts) {
      if (p.shape.size() != out.shape.size())
        return failure();
      for (size_t k = 0; k < p.shape.size(); ++k)
        if (static_cast<int64_t>(k) != axis && p.shape[k] != out.shape[k])
          return failure();
      out.shape[axis] += p.shape[axis];
      withData &= p.data.has_value();
    }
    if (!withData || !boundedCount(out.shape, kMaxElements))
      return out;
    // Rows of the dims before the axis, each the parts' slices in turn.
    int64_t outer = 1;
    for (int64_t k = 0; k < axis; ++k)
      outer *= out.shape[k];
    std::vector<int64_t> data;
    for (int64_t o = 0; o < outer; ++o)
      for (const LabelTensor &p : parts) {
        int64_t chunk = p.numElements() / std::max<int64_t>(outer, 1);
        data.insert(data.end(), p.data->begin() + o * chunk,
                    p.data->begin() + (o + 1) * chunk);
      }
    out.data = std::move(data);
    return out;
  }
  return failure();
}

} // namespace mlir::ember
