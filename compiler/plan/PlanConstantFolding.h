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

#include <map>
#include <utility>
#include <vector>

namespace mlir::ember::plan_emitter {

/// `attr` (static shape) with its dims permuted: result dim k is input dim
/// perm[k]. Null when `perm` does not fit or the data is not byte-sized.
/// While a FoldedConstantCache lives on this thread, a transpose already
/// folded is not done again.
DenseElementsAttr transposeConstant(DenseElementsAttr attr,
                                    ArrayRef<int32_t> perm);

/// Remembers, while it lives, the transposes folded on this thread: every
/// rank of a plan folds the same replicated weights (512 ranks of a
/// DCN-v2's 64 MB of dense weights were 32 GB of copying and hashing, 40 of
/// the 42 s of emitting the plan). The plan emitter holds one per plan.
class FoldedConstantCache {
public:
  FoldedConstantCache();
  ~FoldedConstantCache();
  FoldedConstantCache(const FoldedConstantCache &) = delete;
  FoldedConstantCache &operator=(const FoldedConstantCache &) = delete;

  DenseElementsAttr lookup(DenseElementsAttr attr, ArrayRef<int32_t> perm) const;
  void insert(DenseElementsAttr attr, ArrayRef<int32_t> perm,
              DenseElementsAttr folded);
  /// The innermost cache alive on this thread, or null.
  static FoldedConstantCache *active();

private:
  std::map<std::pair<const void *, std::vector<int32_t>>, DenseElementsAttr>
      folded_;
  FoldedConstantCache *outer_;
};

/// `attr` viewed with `type` (same element type and element count), or null.
DenseElementsAttr reshapeConstant(DenseElementsAttr attr,
                                  RankedTensorType type);

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANCONSTANTFOLDING_H
