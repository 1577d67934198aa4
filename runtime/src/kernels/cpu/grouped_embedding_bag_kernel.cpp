//===- grouped_embedding_bag_kernel.cpp - grouped_embedding_bag -----------===//
//
// The table-batched lookup (FBGEMM's TBE idea): every feature of a KJT is
// looked up in its table in one parallel pass, each pooled row written
// straight into its columns of the [B, output_width] output.
//
// inputs: 0 values [N], 1 lengths [F*B] (key-major), 2 optional weights [N],
//         3 .. 3+T-1 the T tables
// attrs:  feature_tables (F), pooling (F strings), table_formats (T strings),
//         table_dims (T), output_offsets (F), output_width,
//         feature_names (optional, F strings)
// output: [B, output_width] float32; columns no feature covers are zero.
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

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace ember::embedding {

namespace {

constexpr int kFirstTable = kFirstGroupedTable;

Status validate(const Attributes &attrs, int numInputs, int numOutputs) {
  return readGroupedAttrs(attrs, numInputs - kFirstTable).status();
}

Status run(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(GroupedEmbeddingBagInputs in,
                         checkGroupedEmbeddingBagInputs(ctx));
  const GroupedAttrs &a = in.attrs;
  const std::vector<TableView> &tables = in.tables;
  const Tensor &values = ctx.input(0);
  const Tensor &lengths = ctx.input(1);
  const Tensor &weights = ctx.input(2);
  const int64_t F = in.numFeatures, B = in.batch;

  EMBER_ASSIGN_OR_RETURN(void *scratch,
                         ctx.scratch((lengths.numel() + 1) * sizeof(int64_t)));
  int64_t *offsets = static_cast<int64_t *>(scratch);
  EMBER_RETURN_IF_ERROR(
      jagged::lengthsToOffsets(lengths, offsets, "lengths", where));
  if (offsets[lengths.numel()] != values.numel())
    return jagged::errorAt(
        StatusCode::kInvalidArgument, where,
        "lengths sum to " + std::to_string(offsets[lengths.numel()]) +
            " but there are " + std::to_string(values.numel()) + " values");

  const int64_t W = a.outputWidth;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, DType::kFloat32, {B, W}));
  float *outData = out->data<float>();
  if (B == 0)
    return Status::ok();

  // Zero the columns no feature writes.
  std::vector<char> covered(W, 0);
  for (int64_t f = 0; f < F; ++f) {
    int64_t begin = a.outputOffsets[f];
    std::fill(covered.begin() + begin,
              covered.begin() + begin + tables[a.featureTables[f]].dim, 1);
  }
  std::vector<std::pair<int64_t, int64_t>> gaps;
  for (int64_t c = 0; c < W;) {
    if (covered[c]) {
      ++c;
      continue;
    }
    int64_t e = c;
    while (e < W && !covered[e])
      ++e;
    gaps.emplace_back(c, e);
    c = e;
  }
  for (int64_t b = 0; b < B && !gaps.empty(); ++b)
    for (auto [begin, end] : gaps)
      std::memset(outData + b * W + begin, 0, (end - begin) * sizeof(float));

  const BoundsCheckMode mode = ctx.boundsCheck();
  const QuantizedSums sums = ctx.quantizedSums();
  const int64_t numBags = F * B;
  int64_t maxDim = 1;
  for (auto &t : tables)
    maxDim = std::max(maxDim, t.dim);
  LookupOutcome outcome;
  // Bags in key-major order: a chunk is a contiguous run of values (about
  // equal numbers of ids per chunk, whatever the bag lengths), split into one
  // job per feature it touches.
  parallelForBagsByIds(
      ctx.threadPool(), offsets, numBags, maxDim,
      [&](int64_t begin, int64_t end) {
        for (int64_t f = begin / B; f * B < end; ++f) {
          int64_t first = std::max(begin, f * B),
                  last = std::min(end, (f + 1) * B);
          const TableView &table = tables[a.featureTables[f]];
          PoolJob job;
          job.table = table;
          job.ids = values.data();
          job.idsAre64 = values.dtype() == DType::kInt64;
          job.weights = weights.defined() ? weights.data<float>() : nullptr;
          job.offsets = offsets + first;
          job.numBags = last - first;
          job.out = outData + (first - f * B) * W + a.outputOffsets[f];
          job.outStride = W;
          job.pooling = a.pooling[f];
          job.checkBounds = mode != BoundsCheckMode::kIgnore;
          job.stopAtInvalid = mode == BoundsCheckMode::kFatal;
          job.quantizedSums = sums;
          outcome.merge(poolBags(job), f);
        }
      });
  if (outcome.stopped()) {
    int64_t f = outcome.firstTag(), pos = outcome.firstPos();
    int64_t bag =
        std::upper_bound(offsets, offsets + numBags + 1, pos) - offsets - 1;
    int64_t t = a.featureTables[f];
    return jagged::errorAt(
        StatusCode::kOutOfRange, where,
        "id " + std::to_string(outcome.firstId()) + " of " + a.featureLabel(f) +
            " at position " + std::to_string(pos) + " of the values (sample " +
            std::to_string(bag - f * B) + ") is out of range for table " +
            std::to_string(t) + " of " + std::to_string(tables[t].rows) +
            " rows");
  }
  if (outcome.invalidIds() > 0)
    ctx.reportInvalidIds(outcome.invalidIds());
  return Status::ok();
}

} // namespace

KernelEntry groupedEmbeddingBagKernelEntry() {
  return {"grouped_embedding_bag", run, validate,
          "table-batched pooled lookup of every feature of a KJT into "
          "one [B, output_width] output"};
}

} // namespace ember::embedding
