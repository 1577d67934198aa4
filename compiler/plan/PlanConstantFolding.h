//===- PlanConstantFolding.h - Folding ops on weights -----------*- C++ -*-===//
//
// The importer writes nn.Linear as a transpose and reshapes of the weight
// constant; the plan emitter folds those at compile time so that the plan
// holds the weight once, in the layout its kernel reads.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANCONSTANTFOLDING_H
#define EMBER_COMPILER_PLAN_PLANCONSTANTFOLDING_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::ember::plan_emitter {

/// `attr` (static shape) with its dims permuted: result dim k is input dim
/// perm[k]. Null when `perm` does not fit or the data is not byte-sized.
DenseElementsAttr transposeConstant(DenseElementsAttr attr,
                                    ArrayRef<int32_t> perm);

/// `attr` viewed with `type` (same element type and element count), or null.
DenseElementsAttr reshapeConstant(DenseElementsAttr attr,
                                  RankedTensorType type);

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANCONSTANTFOLDING_H
