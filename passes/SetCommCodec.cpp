//===- SetCommCodec.cpp - The wire format of collective payloads ----------===//
//
// Sets (or, with codec=none, removes) the `codec` of the collectives that
// carry float32 embeddings or partial sums between ranks: pooled all-to-all,
// reduce-scatter and all-reduce. The plan emitter lowers it to the
// instruction's comm_dtype. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberOps.h"
#include "passes/Passes.h"

namespace mlir {
namespace ember {
#define GEN_PASS_DEF_EMBERSETCOMMCODEC
#include "passes/Passes.h.inc"
} // namespace ember
} // namespace mlir

using namespace mlir;
using namespace mlir::ember;

namespace {

/// Sets or clears `op`'s codec when its payload is f32 and its group has
/// more than one rank (a group of one sends nothing).
template <class Op> void setCodec(Op op, std::optional<CommCodec> codec) {
  auto payload = dyn_cast<RankedTensorType>(op.getInput().getType());
  if (!payload || !payload.getElementType().isF32() ||
      op.getGroup().getSize() < 2)
    return;
  if (codec)
    op.setCodecAttr(CommCodecAttr::get(op.getContext(), *codec));
  else
    op->removeAttr(op.getCodecAttrName());
}

struct SetCommCodec : ember::impl::EmberSetCommCodecBase<SetCommCodec> {
  using EmberSetCommCodecBase::EmberSetCommCodecBase;

  void runOnOperation() override {
    std::optional<CommCodec> wanted;
    if (codec == "fp16")
      wanted = CommCodec::fp16;
    else if (codec == "bf16")
      wanted = CommCodec::bf16;
    else if (codec != "none") {
      getOperation().emitError()
          << "ember-set-comm-codec: codec must be none, fp16 or bf16, not '"
          << codec << "'";
      return signalPassFailure();
    }
    getOperation().walk([&](Operation *op) {
      if (auto pooled = dyn_cast<PooledAllToAllOp>(op))
        setCodec(pooled, wanted);
      else if (auto scatter = dyn_cast<ReduceScatterOp>(op))
        setCodec(scatter, wanted);
      else if (auto reduce = dyn_cast<AllReduceOp>(op))
        setCodec(reduce, wanted);
    });
  }
};

} // namespace
