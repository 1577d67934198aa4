//===- ConstantFolding.cpp - Fold integer shape arithmetic ----------------===//

#include "frontends/onnx/ConstantFolding.h"

#include "frontends/onnx/IRBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include <cstdint>

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {

struct IntTensor {
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<int64_t> values;
  Type elementType;
};

std::optional<IntTensor> constantInput(ImportContext &ctx, int i) {
  if (!ctx.hasInput(i))
    return std::nullopt;
  Value v = ctx.lookup(ctx.node().input(i));
  if (!v)
    return std::nullopt;
  DenseElementsAttr attr = ctx.getConstant(v);
  if (!attr || !attr.getElementType().isSignlessInteger() ||
      attr.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  IntTensor t;
  auto type = cast<RankedTensorType>(attr.getType());
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  t.elementType = type.getElementType();
  bool isBool = t.elementType.isInteger(1);
  for (const APInt &x : attr.getValues<APInt>())
    t.values.push_back(isBool ? x.getZExtValue() : x.getSExtValue());
  return t;
}

/// Numpy broadcast of static shapes; nullopt if they do not broadcast.
std::optional<llvm::SmallVector<int64_t>>
broadcast(llvm::ArrayRef<llvm::SmallVector<int64_t>> shapes) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  llvm::SmallVector<int64_t> result(rank, 1);
  for (const auto &s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &r = result[rank - s.size() + i];
      if (s[i] == r || s[i] == 1)
        continue;
      if (r != 1)
        return std::nullopt;
      r = s[i];
    }
  }
  return result;
}

/// Element of `t` at the flat position `index` of the broadcast `shape`.
int64_t at(const IntTensor &t, llvm::ArrayRef<int64_t> shape, int64_t index) {
  int64_t offset = 0, stride = 1;
  size_t rank = shape.size(), tRank = t.shape.size();
  for (size_t d = rank; d-- > 0;) {
    int64_t coord = index % shape[d];
    index /= shape[d];
    if (d + tRank < rank)
      continue;
    int64_t size = t.shape[d - (rank - tRank)];
    if (size != 1)
      offset += coord * stride;
    stride *= size;
  }
  return t.values[offset];
}

} // namespace

bool tryFoldIntegerOp(ImportContext &ctx, FoldKind kind) {
  int arity = kind == FoldKind::Where ? 3 : 2;
  llvm::SmallVector<IntTensor, 3> inputs;
  for (int i = 0; i < arity; ++i) {
    std::optional<IntTensor> t = constantInput(ctx, i);
    if (!t)
      return false;
    inputs.push_back(std::move(*t));
  }
  // Arithmetic needs one integer type (bool only as Where's condition).
  const IntTensor &data = kind == FoldKind::Where ? inputs[1] : inputs[0];
  if (data.elementType.isInteger(1))
    return false;
  if (kind == FoldKind::Where && !inputs[0].elementType.isInteger(1))
    return false;
  llvm::SmallVector<llvm::SmallVector<int64_t>, 3> shapes;
  for (const IntTensor &t : inputs)
    shapes.push_back(t.shape);
  std::optional<llvm::SmallVector<int64_t>> shape = broadcast(shapes);
  if (!shape)
    return false;
  int64_t count = 1;
  for (int64_t s : *shape)
    count *= s;
  if (count > kMaxFoldElements)
    return false;
  llvm::SmallVector<int64_t> result;
  for (int64_t i = 0; i < count; ++i) {
    int64_t a = at(inputs[0], *shape, i), b = at(inputs[1], *shape, i);
    // Integer arithmetic wraps (two's complement), as at run time; in
    // unsigned so that overflow is not undefined here.
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    switch (kind) {
    case FoldKind::Add:
      result.push_back(static_cast<int64_t>(ua + ub));
      break;
    case FoldKind::Sub:
      result.push_back(static_cast<int64_t>(ua - ub));
      break;
    case FoldKind::Mul:
      result.push_back(static_cast<int64_t>(ua * ub));
      break;
    case FoldKind::Div:
      if (b == 0 || (a == INT64_MIN && b == -1))
        return false; // leave division by zero and overflow to run time
      result.push_back(a / b);
      break;
    case FoldKind::Equal:
      result.push_back(a == b);
      break;
    case FoldKind::Where:
      result.push_back(a ? b : at(inputs[2], *shape, i));
      break;
    }
  }
  Type elementType = kind == FoldKind::Equal ? Type(ctx.builder.getI1Type())
                                             : data.elementType;
  auto type = RankedTensorType::get(*shape, elementType);
  llvm::SmallVector<APInt> bits;
  unsigned width = elementType.getIntOrFloatBitWidth();
  for (int64_t v : result)
    bits.push_back(APInt(width, static_cast<uint64_t>(v), /*isSigned=*/true,
                         /*implicitTrunc=*/true));
  auto attr = DenseElementsAttr::get(type, bits);
  Value value = arith::ConstantOp::create(ctx.builder, ctx.loc(), attr);
  ctx.setConstant(value, attr);
  ctx.setOutput(0, value);
  return true;
}

void propagateConstant(ImportContext &ctx, Value result) {
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type || !type.hasStaticShape() ||
      !type.getElementType().isSignlessInteger() ||
      type.getNumElements() > kMaxFoldElements || ctx.getConstant(result))
    return;
  llvm::StringRef op = ctx.node().op_type();
  if (op == "Reshape" || op == "Flatten" || op == "Unsqueeze" ||
      op == "Squeeze" || op == "Identity") {
    std::optional<IntTensor> input = constantInput(ctx, 0);
    if (input &&
        static_cast<int64_t>(input->values.size()) == type.getNumElements())
      ctx.setConstant(result,
                      cast<DenseElementsAttr>(
                          ctx.getConstant(ctx.lookup(ctx.node().input(0))))
                          .reshape(type));
    return;
  }
  llvm::SmallVector<int64_t> values;
  if (op == "Expand") {
    std::optional<IntTensor> input = constantInput(ctx, 0);
    if (!input)
      return;
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      values.push_back(at(*input, type.getShape(), i));
  } else if (op == "Concat") {
    llvm::SmallVector<IntTensor> inputs;
    for (int i = 0; i < ctx.node().input_size(); ++i) {
      std::optional<IntTensor> t = constantInput(ctx, i);
      if (!t)
        return;
      inputs.push_back(std::move(*t));
    }
    int64_t rank = type.getRank();
    int64_t axis = ctx.intAttr("axis", 0);
    if (axis < 0)
      axis += rank;
    // outer x (sum of axis sizes x inner), input by input.
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= type.getDimSize(d);
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= type.getDimSize(d);
    for (int64_t o = 0; o < outer; ++o)
      for (const IntTensor &t : inputs) {
        int64_t chunk = t.shape[axis] * inner;
        for (int64_t k = 0; k < chunk; ++k)
          values.push_back(t.values[o * chunk + k]);
      }
  } else {
    return;
  }
  if (static_cast<int64_t>(values.size()) != type.getNumElements())
    return;
  llvm::SmallVector<APInt> bits;
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  for (int64_t v : values)
    bits.push_back(APInt(width, static_cast<uint64_t>(v), /*isSigned=*/true,
                         /*implicitTrunc=*/true));
  ctx.setConstant(result, DenseElementsAttr::get(type, bits));
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
