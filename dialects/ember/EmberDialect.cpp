//===- EmberDialect.cpp - The Ember dialect -------------------------------===//
#include "dialects/ember/EmberDialect.h"
#include "dialects/ember/EmberAttrs.h"
#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberTypes.h"

using namespace mlir;
using namespace mlir::ember;

#include "dialects/ember/EmberOpsDialect.cpp.inc"

void EmberDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/ember/EmberOps.cpp.inc"
      >();
  registerTypes();
  registerAttributes();
}
