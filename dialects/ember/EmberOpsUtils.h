//===- EmberOpsUtils.h - helpers shared by the op verifiers -----*- C++ -*-===//
#ifndef EMBER_EMBEROPSUTILS_H
#define EMBER_EMBEROPSUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

namespace mlir {
namespace ember {

/// True when two (possibly dynamic) sizes can be equal.
inline bool sizesCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Prints a size, `?` when dynamic.
inline std::string sizeToString(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

} // namespace ember
} // namespace mlir

#endif // EMBER_EMBEROPSUTILS_H
