//===- ImportContext.cpp - State shared by the op converters --------------===//

#include "frontends/onnx/ImportContext.h"

#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

void ImportContext::setCurrentNode(const ::onnx::NodeProto *node,
                                   std::string name) {
  currentNode = node;
  currentName = std::move(name);
  currentLoc = nodeLocation(currentName);
}

Location ImportContext::nodeLocation(llvm::StringRef name) const {
  return NameLoc::get(StringAttr::get(fileLoc.getContext(), name), fileLoc);
}

InFlightDiagnostic ImportContext::emitError() {
  InFlightDiagnostic diag = mlir::emitError(currentLoc);
  diag << "node '" << currentName << "' (" << currentNode->op_type() << "): ";
  return diag;
}

void ImportContext::pushScope() { scopes.emplace_back(); }
void ImportContext::popScope() { scopes.pop_back(); }

void ImportContext::define(llvm::StringRef name, Value value) {
  scopes.back()[name] = value;
}

Value ImportContext::lookup(llvm::StringRef name) const {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end())
      return found->second;
  }
  return {};
}

bool ImportContext::hasInput(int i) const {
  return i < currentNode->input_size() && !currentNode->input(i).empty();
}

Value ImportContext::input(int i) {
  if (!hasInput(i)) {
    emitError() << "input " << i << " is required";
    return {};
  }
  Value value = lookup(currentNode->input(i));
  if (!value)
    emitError() << "input '" << currentNode->input(i)
                << "' is not defined before the node (missing initializer, "
                   "or the graph is not topologically sorted)";
  return value;
}

void ImportContext::setOutput(int i, Value value) {
  if (i < currentNode->output_size() && !currentNode->output(i).empty())
    define(currentNode->output(i), value);
}

LogicalResult ImportContext::checkNoOutputsFrom(int count) {
  for (int i = count; i < currentNode->output_size(); ++i)
    if (!currentNode->output(i).empty())
      return emitError() << "output " << i << " ('" << currentNode->output(i)
                         << "') is not supported";
  return success();
}

void ImportContext::setConstant(Value value, DenseElementsAttr attr) {
  constants[value] = attr;
}

DenseElementsAttr ImportContext::getConstant(Value value) const {
  return constants.lookup(value);
}

void ImportContext::setShapeInfo(Value value, ShapeInfo info) {
  shapeInfos[value] = std::move(info);
}

std::optional<ShapeInfo> ImportContext::getShapeInfo(Value value) const {
  auto it = shapeInfos.find(value);
  if (it == shapeInfos.end())
    return std::nullopt;
  return it->second;
}

std::optional<ShapeInfo> ImportContext::knownInts(int i) {
  if (!hasInput(i))
    return std::nullopt;
  Value value = lookup(currentNode->input(i));
  if (!value)
    return std::nullopt;
  if (auto info = getShapeInfo(value))
    return info;
  DenseElementsAttr attr = getConstant(value);
  if (!attr || !attr.getElementType().isInteger())
    return std::nullopt;
  ShapeInfo info;
  for (const APInt &v : attr.getValues<APInt>())
    info.push_back(DimEntry{v.getSExtValue(), Value(), -1});
  return info;
}

FailureOr<llvm::SmallVector<int64_t>>
ImportContext::constantInts(int i, llvm::StringRef what) {
  std::optional<ShapeInfo> info = knownInts(i);
  llvm::SmallVector<int64_t> values;
  if (info) {
    for (const DimEntry &e : *info) {
      if (!e.isConstant()) {
        info.reset();
        break;
      }
      values.push_back(e.constant);
    }
  }
  if (!info)
    return emitError() << what << " (input " << i
                       << ") must be a constant known at import time";
  return values;
}

const ::onnx::AttributeProto *ImportContext::attr(llvm::StringRef name) const {
  for (const auto &a : currentNode->attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t ImportContext::intAttr(llvm::StringRef name,
                               int64_t defaultValue) const {
  const auto *a = attr(name);
  return a ? a->i() : defaultValue;
}

float ImportContext::floatAttr(llvm::StringRef name, float defaultValue) const {
  const auto *a = attr(name);
  return a ? a->f() : defaultValue;
}

std::string ImportContext::stringAttr(llvm::StringRef name,
                                      llvm::StringRef defaultValue) const {
  const auto *a = attr(name);
  return a ? a->s() : defaultValue.str();
}

std::optional<llvm::SmallVector<int64_t>>
ImportContext::intsAttr(llvm::StringRef name) const {
  const auto *a = attr(name);
  if (!a)
    return std::nullopt;
  return llvm::SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

FailureOr<int64_t> ImportContext::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return emitError() << "axis " << axis << " is out of range for rank "
                       << rank;
  return axis < 0 ? axis + rank : axis;
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
