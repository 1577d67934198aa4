//===- EmberAttrs.cpp - Ember attributes and enums ------------------------===//
#include "ember/EmberAttrs.h"
#include "ember/EmberDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ember;

#include "ember/EmberEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ember/EmberAttrs.cpp.inc"

void EmberDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ember/EmberAttrs.cpp.inc"
      >();
}
