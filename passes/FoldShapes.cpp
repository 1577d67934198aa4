//===- FoldShapes.cpp - resolve tensor.dim of Ember results ---------------===//
//
// Rewrites tensor.dim of the results of Ember lookups and keyed tensors into
// the input they come from (the batch size of a pooled lookup is that of its
// offsets or KJT), and runs the upstream tensor.dim resolution and folding
// on the shape computations. Dynamic dims stay symbolic. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberOps.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "passes/Passes.h"

namespace mlir {
namespace ember {
#define GEN_PASS_DEF_EMBERFOLDSHAPES
#include "passes/Passes.h.inc"
} // namespace ember
} // namespace mlir

using namespace mlir;
using namespace mlir::ember;

namespace {

/// The batch size (rows) of keyed tensor `keyed`, as an index value built
/// with `rewriter` at its insertion point, or null when unknown.
Value batchOfKeyedTensor(PatternRewriter &rewriter, Location loc, Value keyed) {
  Operation *def = keyed.getDefiningOp();
  if (!def)
    return {};
  if (auto collection = dyn_cast<EmbeddingBagCollectionOp>(def))
    return KJTStrideOp::create(rewriter, loc, rewriter.getIndexType(),
                               collection.getFeatures());
  if (auto grouped = dyn_cast<GroupedLookupOp>(def))
    return KJTStrideOp::create(rewriter, loc, rewriter.getIndexType(),
                               grouped.getFeatures());
  if (auto create = dyn_cast<KeyedTensorCreateOp>(def))
    return tensor::DimOp::create(rewriter, loc, create.getValues(), 0);
  // All inputs of a regroup share the batch size.
  if (auto regroup = dyn_cast<KeyedTensorRegroupOp>(def))
    return batchOfKeyedTensor(rewriter, loc, regroup.getInputs().front());
  return {};
}

/// tensor.dim %r, 0 of a pooled lookup result or of a keyed tensor's
/// columns -> the batch size of the input it comes from.
struct ResolveBatchDim : OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::DimOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getConstantIndex() != 0)
      return rewriter.notifyMatchFailure(op, "not the batch dim");
    auto sourceType = cast<RankedTensorType>(op.getSource().getType());
    if (!sourceType.isDynamicDim(0))
      return rewriter.notifyMatchFailure(op, "static; upstream folds it");
    Operation *def = op.getSource().getDefiningOp();
    if (!def)
      return rewriter.notifyMatchFailure(op, "block argument");
    Location loc = op.getLoc();
    if (auto bag = dyn_cast<EmbeddingBagOp>(def)) {
      // B = |offsets| (include_last_offset: |offsets| - 1).
      Value bags = tensor::DimOp::create(rewriter, loc, bag.getOffsets(), 0);
      if (bag.getIncludeLastOffset())
        bags = arith::SubIOp::create(
            rewriter, loc, bags,
            arith::ConstantIndexOp::create(rewriter, loc, 1));
      rewriter.replaceOp(op, bags);
      return success();
    }
    Value keyed;
    if (auto get = dyn_cast<KeyedTensorGetOp>(def))
      keyed = get.getInput();
    else if (auto values = dyn_cast<KeyedTensorValuesOp>(def))
      keyed = values.getInput();
    if (!keyed)
      return rewriter.notifyMatchFailure(op, "not an Ember pooled result");
    Value batch = batchOfKeyedTensor(rewriter, loc, keyed);
    if (!batch)
      return rewriter.notifyMatchFailure(op, "batch of keyed tensor unknown");
    rewriter.replaceOp(op, batch);
    return success();
  }
};

/// True for ops that compute shapes: tensor.dim and index arithmetic.
bool isShapeComputation(Operation *op) {
  if (isa<tensor::DimOp>(op))
    return true;
  return op->getDialect() && isa<arith::ArithDialect>(op->getDialect()) &&
         op->getNumResults() == 1 && op->getResult(0).getType().isIndex();
}

struct FoldShapesPass
    : public mlir::ember::impl::EmberFoldShapesBase<FoldShapesPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<ResolveBatchDim>(context);
    // Upstream: tensor.dim of ops that reify their result shapes
    // (tensor.empty, slices, casts, ...) and the tensor.dim
    // canonicalizations.
    memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
    memref::populateResolveShapedTypeResultDimsPatterns(patterns);
    tensor::DimOp::getCanonicalizationPatterns(patterns, context);
    FrozenRewritePatternSet frozen(std::move(patterns));

    SmallVector<Operation *> shapeOps;
    getOperation()->walk([&](Operation *op) {
      if (isShapeComputation(op))
        shapeOps.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(shapeOps, frozen, config))) {
      getOperation()->emitError(
          "ember-fold-shapes did not converge (patterns keep rewriting)");
      return signalPassFailure();
    }
  }
};

} // namespace
