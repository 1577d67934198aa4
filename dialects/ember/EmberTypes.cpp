//===- EmberTypes.cpp - Ember types ---------------------------------------===//
#include "ember/EmberTypes.h"
#include "ember/EmberDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ember;

#define GET_TYPEDEF_CLASSES
#include "ember/EmberTypes.cpp.inc"

void EmberDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "ember/EmberTypes.cpp.inc"
      >();
}
