//===- EmberOps.cpp - Ember operations ------------------------------------===//
#include "ember/EmberOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::ember;

#define GET_OP_CLASSES
#include "ember/EmberOps.cpp.inc"
