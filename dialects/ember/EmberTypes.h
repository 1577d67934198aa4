//===- EmberTypes.h - Ember types -------------------------------*- C++ -*-===//
#ifndef EMBER_EMBERTYPES_H
#define EMBER_EMBERTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "ember/EmberTypes.h.inc"

#endif // EMBER_EMBERTYPES_H
