//===- ConstantFolding.h - Fold integer shape arithmetic ---------*- C++
//-*-===//
//
// torch.onnx.export computes shapes and index tensors with small integer
// graphs (ConstantOfShape -> Mul -> Equal -> Where -> Expand, Range, ...).
// When every input of such an op is a known constant integer tensor of at
// most kMaxFoldElements elements, the importer folds it at import time so
// that the ops consuming it (Expand, Reshape, ScatterND, ...) see constants.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_FRONTENDS_ONNX_CONSTANTFOLDING_H
#define EMBER_FRONTENDS_ONNX_CONSTANTFOLDING_H

#include "frontends/onnx/ImportContext.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

inline constexpr int64_t kMaxFoldElements = 1 << 16;

enum class FoldKind { Add, Sub, Mul, Div, Equal, Where };

/// Folds the current node's op over its constant integer inputs (Where:
/// an i1 condition and integer branches). Defines output 0 as an
/// arith.constant and returns true when it folded; false when an input is
/// not a small constant integer tensor (the caller then emits IR).
bool tryFoldIntegerOp(ImportContext &ctx, FoldKind kind);

/// After a node that only moves data (Reshape, Flatten, (Un)Squeeze,
/// Identity, Expand, Concat) produced `result` from constant integer inputs,
/// records the constant value of `result` so later ops can fold it.
void propagateConstant(ImportContext &ctx, Value result);

} // namespace onnx_importer
} // namespace ember
} // namespace mlir

#endif // EMBER_FRONTENDS_ONNX_CONSTANTFOLDING_H
