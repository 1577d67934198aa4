//===- embedding_input_checks.cpp - Host checks of the lookups ------------===//
#include "kernels/shared/embedding_input_checks.h"

#include "kernels/shared/jagged_index.h"

namespace ember::embedding {

namespace {

Status runTableCheck(const TableViewCheck &check, const TableView &view,
                     const std::string &what, const std::string &where) {
  return check ? check(view, what, where) : Status::ok();
}

} // namespace

Result<EmbeddingBagInputs>
checkEmbeddingBagInputs(KernelContext &ctx, const TableViewCheck &tableCheck) {
  const std::string where = ctx.location();
  auto attrsOr = readBagAttrs(ctx.attrs());
  if (!attrsOr.isOk())
    return attrsOr.status().withContext(where);
  EmbeddingBagInputs in;
  in.attrs = *attrsOr;
  const BagAttrs &a = in.attrs;
  const Tensor &indices = ctx.input(1);
  const Tensor &offsets = ctx.input(2);
  const Tensor noWeights;
  const Tensor &weights = ctx.numInputs() > 3 ? ctx.input(3) : noWeights;
  EMBER_RETURN_IF_ERROR(
      jagged::checkIndexVector(indices, "input 1 (indices)", where));
  EMBER_RETURN_IF_ERROR(
      jagged::checkIndexVector(offsets, "input 2 (offsets)", where));
  EMBER_RETURN_IF_ERROR(jagged::checkWeights(
      weights, indices.numel(), "input 3 (per_sample_weights)", where));
  if (weights.defined() && a.pooling != Pooling::kSum)
    return jagged::errorAt(StatusCode::kInvalidArgument, where,
                           "per_sample_weights are only supported with "
                           "pooling 'sum' (as in PyTorch), got '" +
                               std::string(poolingName(a.pooling)) + "'");
  EMBER_ASSIGN_OR_RETURN(in.table, makeTableView(ctx.input(0), a.format, a.dim,
                                                 "input 0 (table)", where));
  EMBER_RETURN_IF_ERROR(
      runTableCheck(tableCheck, in.table, "input 0 (table)", where));
  if (a.paddingIdx >= in.table.rows)
    return jagged::errorAt(StatusCode::kOutOfRange, where,
                           "padding_idx " + std::to_string(a.paddingIdx) +
                               " is past the table's " +
                               std::to_string(in.table.rows) + " rows");
  in.numBags = jagged::numBagsOf(offsets, a.includeLastOffset);
  if (in.numBags < 0)
    return jagged::errorAt(StatusCode::kInvalidArgument, where,
                           "offsets is empty: with include_last_offset=1 it "
                           "needs B + 1 entries");
  return in;
}

Result<GroupedEmbeddingBagInputs>
checkGroupedEmbeddingBagInputs(KernelContext &ctx,
                               const TableViewCheck &tableCheck) {
  const std::string where = ctx.location();
  const int numTables = ctx.numInputs() - kFirstGroupedTable;
  auto attrsOr = readGroupedAttrs(ctx.attrs(), numTables);
  if (!attrsOr.isOk())
    return attrsOr.status().withContext(where);
  GroupedEmbeddingBagInputs in;
  in.attrs = *attrsOr;
  const GroupedAttrs &a = in.attrs;
  const Tensor &values = ctx.input(0);
  const Tensor &lengths = ctx.input(1);
  const Tensor &weights = ctx.input(2);
  EMBER_RETURN_IF_ERROR(
      jagged::checkIndexVector(values, "input 0 (values)", where));
  EMBER_RETURN_IF_ERROR(
      jagged::checkIndexVector(lengths, "input 1 (lengths)", where));
  EMBER_RETURN_IF_ERROR(jagged::checkWeights(weights, values.numel(),
                                             "input 2 (weights)", where));
  const int64_t F = in.numFeatures = a.numFeatures();
  if (lengths.numel() % F != 0)
    return jagged::errorAt(StatusCode::kInvalidArgument, where,
                           "lengths has " + std::to_string(lengths.numel()) +
                               " entries, not a multiple of the " +
                               std::to_string(F) + " features");
  in.batch = lengths.numel() / F;
  if (weights.defined())
    for (int64_t f = 0; f < F; ++f)
      if (a.pooling[f] != Pooling::kSum)
        return jagged::errorAt(
            StatusCode::kInvalidArgument, where,
            "weights are only supported with sum pooling, but " +
                a.featureLabel(f) + " uses '" +
                std::string(poolingName(a.pooling[f])) + "'");
  for (int t = 0; t < numTables; ++t) {
    std::string what = "input " + std::to_string(kFirstGroupedTable + t) +
                       " (table " + std::to_string(t) + ")";
    EMBER_ASSIGN_OR_RETURN(TableView view,
                           makeTableView(ctx.input(kFirstGroupedTable + t),
                                         a.tableFormats[t], a.tableDims[t],
                                         what, where));
    EMBER_RETURN_IF_ERROR(runTableCheck(tableCheck, view, what, where));
    in.tables.push_back(view);
  }
  return in;
}

Result<EmbeddingSequenceInputs>
checkEmbeddingSequenceInputs(KernelContext &ctx,
                             const TableViewCheck &tableCheck) {
  const std::string where = ctx.location();
  auto attrsOr = readSequenceAttrs(ctx.attrs());
  if (!attrsOr.isOk())
    return attrsOr.status().withContext(where);
  EmbeddingSequenceInputs in;
  in.attrs = *attrsOr;
  const SequenceAttrs &a = in.attrs;
  const Tensor &indices = ctx.input(1);
  EMBER_RETURN_IF_ERROR(
      jagged::checkIndexVector(indices, "input 1 (indices)", where));
  EMBER_ASSIGN_OR_RETURN(in.table, makeTableView(ctx.input(0), a.format, a.dim,
                                                 "input 0 (table)", where));
  EMBER_RETURN_IF_ERROR(
      runTableCheck(tableCheck, in.table, "input 0 (table)", where));
  return in;
}

} // namespace ember::embedding
