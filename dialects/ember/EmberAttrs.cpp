//===- EmberAttrs.cpp - Ember attributes and enums ------------------------===//
#include "dialects/ember/EmberAttrs.h"
#include "dialects/ember/EmberDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ember;

#include "dialects/ember/EmberEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/ember/EmberAttrs.cpp.inc"

void EmberDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/ember/EmberAttrs.cpp.inc"
      >();
}
