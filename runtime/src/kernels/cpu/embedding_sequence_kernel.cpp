//===- embedding_sequence_kernel.cpp - embedding_sequence -----------------===//
//
// Unpooled lookup: one output row per id.
// inputs: 0 table, 1 indices [N]; attrs: format, dim, feature_names (optional)
// output: [N, dim] float32
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/embedding_kernel_defs.h"
#include "kernels/cpu/embedding_lookup_outcome.h"
#include "kernels/cpu/embedding_pool.h"
#include "kernels/kernel_context.h"
#include "kernels/shared/embedding_attrs.h"
#include "kernels/shared/embedding_input_checks.h"
#include "kernels/shared/embedding_table.h"
#include "kernels/shared/jagged_index.h"
#include "threading/thread_pool.h"

namespace ember::embedding {

namespace {

Status validate(const Attributes &attrs, int numInputs, int numOutputs) {
  return readSequenceAttrs(attrs).status();
}

Status run(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(EmbeddingSequenceInputs in,
                         checkEmbeddingSequenceInputs(ctx));
  const SequenceAttrs &a = in.attrs;
  const TableView &table = in.table;
  const Tensor &indices = ctx.input(1);
  const int64_t n = indices.numel();
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out, ctx.allocateOutput(0, DType::kFloat32, {n, table.dim}));
  const BoundsCheckMode mode = ctx.boundsCheck();
  const size_t idBytes = dtypeSize(indices.dtype());
  float *outData = out->data<float>();
  LookupOutcome outcome;
  ctx.threadPool().parallelFor(
      0, n, lookupGrain(n, n, table.dim), [&](int64_t begin, int64_t end) {
        PoolJob job;
        job.table = table;
        job.ids = indices.data<uint8_t>() + begin * idBytes;
        job.idsAre64 = indices.dtype() == DType::kInt64;
        job.numBags = end - begin;
        job.out = outData + begin * table.dim;
        job.outStride = table.dim;
        job.checkBounds = mode != BoundsCheckMode::kIgnore;
        job.stopAtInvalid = mode == BoundsCheckMode::kFatal;
        PoolResult r = gatherRows(job);
        if (r.firstInvalidPos >= 0)
          r.firstInvalidPos += begin;
        outcome.merge(r, 0);
      });
  if (outcome.stopped()) {
    std::string feature = a.featureName.empty()
                              ? std::string("the indices")
                              : "feature '" + a.featureName + "'";
    return jagged::errorAt(StatusCode::kOutOfRange, where,
                           "id " + std::to_string(outcome.firstId()) +
                               " at position " +
                               std::to_string(outcome.firstPos()) + " of " +
                               feature + " is out of range for a table of " +
                               std::to_string(table.rows) + " rows");
  }
  if (outcome.invalidIds() > 0)
    ctx.reportInvalidIds(outcome.invalidIds());
  return Status::ok();
}

} // namespace

KernelEntry embeddingSequenceKernelEntry() {
  return {"embedding_sequence", run, validate,
          "unpooled lookup: one float32 row per id"};
}

} // namespace ember::embedding
