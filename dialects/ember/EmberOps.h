//===- EmberOps.h - Ember operations ----------------------------*- C++ -*-===//
#ifndef EMBER_EMBEROPS_H
#define EMBER_EMBEROPS_H

#include "dialects/ember/EmberAttrs.h"
#include "dialects/ember/EmberDialect.h"
#include "dialects/ember/EmberTypes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace ember {

/// Custom assembly for one pooling mode: the bare keyword `sum`.
ParseResult parsePoolingMode(OpAsmParser &parser, PoolingModeAttr &pooling);
void printPoolingMode(OpAsmPrinter &printer, Operation *op,
                      PoolingModeAttr pooling);

/// Custom assembly for a list of pooling modes: `[sum, mean]`.
ParseResult parsePoolingList(OpAsmParser &parser, ArrayAttr &pooling);
void printPoolingList(OpAsmPrinter &printer, Operation *op, ArrayAttr pooling);

} // namespace ember
} // namespace mlir

#define GET_OP_CLASSES
#include "dialects/ember/EmberOps.h.inc"

#endif // EMBER_EMBEROPS_H
