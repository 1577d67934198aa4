//===- EmberShardingAttrs.cpp ------------------------------------------------------===//
#include "ember/EmberOps.h"

using namespace mlir;
using namespace mlir::ember;
