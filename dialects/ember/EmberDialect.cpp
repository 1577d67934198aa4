//===- EmberDialect.cpp - The Ember dialect -------------------------------===//
#include "ember/EmberDialect.h"
#include "ember/EmberAttrs.h"
#include "ember/EmberOps.h"
#include "ember/EmberTypes.h"

using namespace mlir;
using namespace mlir::ember;

#include "ember/EmberOpsDialect.cpp.inc"

void EmberDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ember/EmberOps.cpp.inc"
      >();
  registerTypes();
  registerAttributes();
}
