//===- EmberOps.h - Ember operations ----------------------------*- C++ -*-===//
#ifndef EMBER_EMBEROPS_H
#define EMBER_EMBEROPS_H

#include "ember/EmberAttrs.h"
#include "ember/EmberDialect.h"
#include "ember/EmberTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "ember/EmberOps.h.inc"

#endif // EMBER_EMBEROPS_H
