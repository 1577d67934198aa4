//===- ImportContext.h - State shared by the op converters ------*- C++ -*-===//
//
// What a converter sees while the graph walk imports one node: the builder,
// the ONNX value name -> MLIR value scope, the values known at import time
// (constants and shape dims, needed for ONNX's shape-like inputs), attribute
// accessors and diagnostics located at the node.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_FRONTENDS_ONNX_IMPORTCONTEXT_H
#define EMBER_FRONTENDS_ONNX_IMPORTCONTEXT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>
#include <optional>

namespace mlir {
namespace ember {
namespace onnx_importer {

/// One entry of a shape-like value (a 1-D int64 tensor such as the result of
/// `Shape`) known at import time: a constant, or dim `dim` of `source`.
struct DimEntry {
  int64_t constant = 0;
  Value source;
  int64_t dim = -1;
  bool isConstant() const { return !source; }
  bool operator==(const DimEntry &other) const {
    return constant == other.constant && source == other.source &&
           dim == other.dim;
  }
};
using ShapeInfo = llvm::SmallVector<DimEntry, 4>;

class ImportContext {
public:
  ImportContext(OpBuilder &builder, Location fileLoc, int64_t opset)
      : builder(builder), fileLoc(fileLoc), opset(opset) {}

  OpBuilder &builder;
  Location fileLoc;
  /// Version of the default ("" / "ai.onnx") domain the model imports.
  int64_t opset;

  MLIRContext *getContext() { return builder.getContext(); }

  // --- The node being imported -------------------------------------------
  void setCurrentNode(const ::onnx::NodeProto *node, std::string name);
  const ::onnx::NodeProto &node() const { return *currentNode; }
  llvm::StringRef nodeName() const { return currentName; }
  /// `NameLoc(node name, model file)`.
  Location loc() const { return currentLoc; }
  Location nodeLocation(llvm::StringRef name) const;
  /// An error at the node, starting "node '<name>' (<OpType>): ".
  InFlightDiagnostic emitError();
  /// A possibly negative `axis` of a tensor of `rank` in [0, rank), or an
  /// error naming both.
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

  // --- Values --------------------------------------------------------------
  /// Opens a nested scope (Loop bodies); names of outer scopes stay visible.
  void pushScope();
  void popScope();
  void define(llvm::StringRef name, Value value);
  Value lookup(llvm::StringRef name) const;

  bool hasInput(int i) const;
  /// The value of input `i`; null (with an error) if it is absent.
  Value input(int i);
  /// Defines output `i` (a no-op for an unused optional output).
  void setOutput(int i, Value value);
  /// Errors unless every output from `count` on is absent (unused).
  LogicalResult checkNoOutputsFrom(int count);

  // --- Values known at import time -----------------------------------------
  void setConstant(Value value, DenseElementsAttr attr);
  DenseElementsAttr getConstant(Value value) const;
  void setShapeInfo(Value value, ShapeInfo info);
  std::optional<ShapeInfo> getShapeInfo(Value value) const;
  /// The entries of input `i` if they are known at import time (constant
  /// integers, or tracked shape dims). Null optional when unknown.
  std::optional<ShapeInfo> knownInts(int i);
  /// Input `i` as constant integers; errors (naming `what`) otherwise.
  FailureOr<llvm::SmallVector<int64_t>> constantInts(int i,
                                                     llvm::StringRef what);

  // --- Attributes ----------------------------------------------------------
  const ::onnx::AttributeProto *attr(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t defaultValue) const;
  float floatAttr(llvm::StringRef name, float defaultValue) const;
  std::string stringAttr(llvm::StringRef name,
                         llvm::StringRef defaultValue) const;
  std::optional<llvm::SmallVector<int64_t>>
  intsAttr(llvm::StringRef name) const;

private:
  const ::onnx::NodeProto *currentNode = nullptr;
  std::string currentName;
  Location currentLoc = fileLoc;
  llvm::SmallVector<llvm::StringMap<Value>, 2> scopes{1};
  llvm::DenseMap<Value, DenseElementsAttr> constants;
  llvm::DenseMap<Value, ShapeInfo> shapeInfos;
};

} // namespace onnx_importer
} // namespace ember
} // namespace mlir

#endif // EMBER_FRONTENDS_ONNX_IMPORTCONTEXT_H
