//===- EmberDialect.h - The Ember dialect -----------------------*- C++ -*-===//
#ifndef EMBER_EMBERDIALECT_H
#define EMBER_EMBERDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/ember/EmberOpsDialect.h.inc"

#endif // EMBER_EMBERDIALECT_H
