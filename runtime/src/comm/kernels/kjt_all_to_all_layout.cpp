//===- kjt_all_to_all_layout.cpp - kjt_all_to_all's checks, layout --------===//
#include "comm/kernels/kjt_all_to_all_layout.h"

namespace ember::collective {

Result<std::vector<int64_t>> keySplits(const Attributes &attrs, int groupSize) {
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> s,
                         perMemberInts(attrs, "key_splits", groupSize));
  int64_t k = 0;
  for (int64_t v : s)
    k += v;
  if (s.empty() || k == 0)
    return invalidArgument("attribute 'key_splits' must give at least one key");
  return s;
}

Status negativeLength(const std::string &where, int64_t i, int64_t len) {
  return invalidArgument(where + ": lengths[" + std::to_string(i) +
                         "] is negative (" + std::to_string(len) + ")");
}

Status validateKeySplits(const Attributes &attrs, int, int) {
  return keySplits(attrs, -1).status();
}

Status validateKeySplitsForGroup(const Attributes &attrs, int groupSize) {
  return keySplits(attrs, groupSize).status();
}

Result<KjtAllToAllInput> checkKjtAllToAllInput(KernelContext &ctx,
                                               const Group &group) {
  const std::string &where = group.what;
  const int g = group.size();
  KjtAllToAllInput in;
  auto splitsOr = keySplits(ctx.attrs(), g);
  if (!splitsOr)
    return splitsOr.status().withContext(where);
  in.splits = std::move(*splitsOr);
  in.keyOff = prefixSums(in.splits);
  const int64_t numKeys = in.keyOff[g];

  const Tensor &lengths = ctx.input(0), &values = ctx.input(1);
  static const Tensor kAbsent;
  const Tensor &weights = ctx.numInputs() > 2 ? ctx.input(2) : kAbsent;
  auto isIndex = [](const Tensor &t) {
    return t.defined() && t.rank() == 1 &&
           (t.dtype() == DType::kInt32 || t.dtype() == DType::kInt64);
  };
  if (!isIndex(lengths) || !isIndex(values))
    return invalidArgument(
        where + ": lengths and values must be int32/int64 of rank 1");
  // Weights travel when the input has them and the plan asks for them.
  in.hasWeights = weights.defined() && ctx.numOutputs() == 3;
  if (in.hasWeights && (weights.dtype() != DType::kFloat32 ||
                        weights.rank() != 1 || weights.dim(0) != values.dim(0)))
    return invalidArgument(where + ": weights must be float32[" +
                           std::to_string(values.dim(0)) + "], not " +
                           weights.describe());
  if (ctx.numOutputs() == 3 && !weights.defined())
    return invalidArgument(where + ": the plan asks for output weights but "
                                   "the input has no weights");
  if (lengths.dim(0) % numKeys != 0)
    return invalidArgument(where + ": lengths has " +
                           std::to_string(lengths.dim(0)) +
                           " entries, not a multiple of the " +
                           std::to_string(numKeys) + " keys of key_splits");
  in.localBatch = lengths.dim(0) / numKeys;
  in.lengthsType = lengths.dtype();
  in.valuesType = values.dtype();
  return in;
}

Status checkLengthsMatchValues(const std::string &where, int64_t lengthsSum,
                               const Tensor &values) {
  if (lengthsSum != values.dim(0))
    return invalidArgument(where + ": lengths sum to " +
                           std::to_string(lengthsSum) + " but there are " +
                           std::to_string(values.dim(0)) + " values");
  return Status::ok();
}

Result<KjtAllToAllLayout>
exchangeKjtSizes(const Group &group, const KjtAllToAllInput &in,
                 const std::vector<int64_t> &valueOff) {
  const std::string &where = group.what;
  const int g = group.size(), me = group.position;
  const DType lt = in.lengthsType, vt = in.valuesType;
  std::vector<int64_t> mine(5 * g);
  for (int p = 0; p < g; ++p) {
    mine[5 * p] = in.localBatch;
    mine[5 * p + 1] = valueOff[p + 1] - valueOff[p];
    mine[5 * p + 2] = static_cast<int64_t>(lt);
    mine[5 * p + 3] = static_cast<int64_t>(vt);
    mine[5 * p + 4] = in.hasWeights;
  }
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> hdr,
      exchangeCounts(group.comm, group.ranks, me, mine, 5, where + " (sizes)"));
  KjtAllToAllLayout layout;
  layout.batches.resize(g);
  layout.counts.resize(g);
  for (int q = 0; q < g; ++q) {
    layout.batches[q] = hdr[5 * q];
    layout.counts[q] = hdr[5 * q + 1];
    if (hdr[5 * q + 2] != mine[2] || hdr[5 * q + 3] != mine[3] ||
        hdr[5 * q + 4] != mine[4])
      return invalidArgument(
          where + ": group position " + std::to_string(q) +
          " sends a KJT with other dtypes or weights than this rank's (" +
          std::string(dtypeName(lt)) + " lengths, " +
          std::string(dtypeName(vt)) + " values, " +
          (in.hasWeights ? "weights" : "no weights") + ")");
  }
  layout.batchOff = prefixSums(layout.batches);
  layout.countOff = prefixSums(layout.counts);
  layout.localKeys = in.splits[me];
  layout.totalBatch = layout.batchOff[g];
  layout.numValuesOut = layout.countOff[g];
  return layout;
}

Result<KjtAllToAllBuffers>
allocateKjtAllToAllBuffers(KernelContext &ctx, const KjtAllToAllInput &in,
                           const KjtAllToAllLayout &layout) {
  const DType lt = in.lengthsType, vt = in.valuesType;
  const int64_t bags = layout.localKeys * layout.totalBatch,
                nOut = layout.numValuesOut;
  const size_t les = dtypeSize(lt), ves = dtypeSize(vt);
  KjtAllToAllBuffers buf;
  EMBER_ASSIGN_OR_RETURN(buf.outLengths, ctx.allocateOutput(0, lt, {bags}));
  EMBER_ASSIGN_OR_RETURN(buf.outValues, ctx.allocateOutput(1, vt, {nOut}));
  if (in.hasWeights) {
    EMBER_ASSIGN_OR_RETURN(buf.outWeights,
                           ctx.allocateOutput(2, DType::kFloat32, {nOut}));
  }
  EMBER_ASSIGN_OR_RETURN(buf.rl, scratchBytes(ctx, bags * les));
  EMBER_ASSIGN_OR_RETURN(buf.rv, scratchBytes(ctx, nOut * ves));
  if (in.hasWeights) {
    EMBER_ASSIGN_OR_RETURN(buf.rw, scratchBytes(ctx, nOut * sizeof(float)));
  }
  return buf;
}

Status exchangeKjtBlocks(const BlockExchange &exchange, int groupSize,
                         const KjtAllToAllInput &in,
                         const KjtAllToAllLayout &layout,
                         const std::vector<int64_t> &valueOff,
                         const Tensor &lengths, const Tensor &values,
                         const Tensor &weights, char *rl, char *rv, char *rw) {
  const int g = groupSize;
  const int64_t bMe = in.localBatch, kMe = layout.localKeys;
  const std::vector<int64_t> &keyOff = in.keyOff, &batches = layout.batches,
                             &counts = layout.counts,
                             &batchOff = layout.batchOff,
                             &countOff = layout.countOff;
  const size_t les = dtypeSize(in.lengthsType), ves = dtypeSize(in.valuesType);
  std::vector<Communicator::Step> steps(in.hasWeights ? 3 : 2);
  for (Communicator::Step &step : steps) {
    step.sends.resize(g);
    step.recvs.resize(g);
  }
  steps[0].step = " (lengths)";
  steps[1].step = " (values)";
  auto sendRange = [&](const Tensor &t, int64_t begin, int64_t end) {
    size_t es = dtypeSize(t.dtype());
    return SendBuffer{static_cast<const char *>(t.data()) + begin * es,
                      static_cast<size_t>(end - begin) * es};
  };
  for (int q = 0; q < g; ++q) {
    steps[0].sends[q] =
        sendRange(lengths, keyOff[q] * bMe, keyOff[q + 1] * bMe);
    steps[0].recvs[q] = {rl + kMe * batchOff[q] * les,
                         static_cast<size_t>(kMe * batches[q]) * les};
    steps[1].sends[q] = sendRange(values, valueOff[q], valueOff[q + 1]);
    steps[1].recvs[q] = {rv + countOff[q] * ves,
                         static_cast<size_t>(counts[q]) * ves};
  }
  if (in.hasWeights) {
    steps[2].step = " (weights)";
    for (int q = 0; q < g; ++q) {
      steps[2].sends[q] = sendRange(weights, valueOff[q], valueOff[q + 1]);
      steps[2].recvs[q] = {rw + countOff[q] * sizeof(float),
                           static_cast<size_t>(counts[q]) * sizeof(float)};
    }
  }
  return exchange(steps);
}

} // namespace ember::collective
