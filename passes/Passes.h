//===- Passes.h - Ember compiler passes -------------------------*- C++ -*-===//
//
// Declarations (create functions, options) and registration of every pass in
// passes/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_PASSES_PASSES_H
#define EMBER_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace ember {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Registers every Ember pass with the global pass registry (for ember-opt
/// and the pipeline's textual pass lists).
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace ember
} // namespace mlir

#endif // EMBER_PASSES_PASSES_H
