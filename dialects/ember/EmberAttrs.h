//===- EmberAttrs.h - Ember attributes and enums ----------------*- C++ -*-===//
#ifndef EMBER_EMBERATTRS_H
#define EMBER_EMBERATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "dialects/ember/EmberEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/ember/EmberAttrs.h.inc"

#endif // EMBER_EMBERATTRS_H
