//===- AssignStreams.cpp - Collectives on the communication stream --------===//
//
// Marks the collectives that move data between ranks with `ember.stream`,
// the stream their communication runs on; the plan emitter reads it. See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberOps.h"
#include "passes/Passes.h"

namespace mlir {
namespace ember {
#define GEN_PASS_DEF_EMBERASSIGNSTREAMS
#include "passes/Passes.h.inc"
} // namespace ember
} // namespace mlir

using namespace mlir;
using namespace mlir::ember;

namespace {

constexpr llvm::StringLiteral kStreamAttr = "ember.stream";

struct AssignStreams : ember::impl::EmberAssignStreamsBase<AssignStreams> {
  using EmberAssignStreamsBase::EmberAssignStreamsBase;

  void runOnOperation() override {
    if (stream != 0 && stream != 1) {
      getOperation().emitError()
          << "ember-assign-streams: stream must be 0 or 1, not "
          << static_cast<int>(stream);
      return signalPassFailure();
    }
    Builder b(&getContext());
    getOperation().walk([&](Operation *op) {
      if (!isa<KJTAllToAllTensorsOp, PooledAllToAllOp, SequenceAllToAllOp,
               ReduceScatterOp, AllGatherOp, AllReduceOp>(op))
        return;
      if (stream == 0)
        op->removeAttr(kStreamAttr);
      else
        op->setAttr(kStreamAttr, b.getI32IntegerAttr(stream));
    });
  }
};

} // namespace
