//===- EmberTypes.h - Ember types -------------------------------*- C++ -*-===//
#ifndef EMBER_EMBERTYPES_H
#define EMBER_EMBERTYPES_H

#include "dialects/ember/EmberAttrs.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"
#include <optional>
#include <string>

#define GET_TYPEDEF_CLASSES
#include "dialects/ember/EmberTypes.h.inc"

#endif // EMBER_EMBERTYPES_H
