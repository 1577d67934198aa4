//===- sequence_all_to_all_layout.cpp - sequence_all_to_all layout --------===//
#include "comm/kernels/sequence_all_to_all_layout.h"

#include "comm/kernels/kjt_all_to_all_layout.h"

namespace ember::collective {

namespace {

bool isFloatRows(const Tensor &t) {
  return t.defined() && t.rank() >= 1 &&
         (t.dtype() == DType::kFloat32 || t.dtype() == DType::kFloat16 ||
          t.dtype() == DType::kBFloat16);
}

std::string describeOrAbsent(const Tensor &t) {
  return t.defined() ? t.describe() : std::string("absent");
}

/// "position 0: 3, position 1: 0" (g entries).
std::string perPosition(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t p = 0; p < v.size(); ++p)
    s += (p ? ", position " : "position ") + std::to_string(p) + ": " +
         std::to_string(v[p]);
  return s;
}

} // namespace

Result<SequenceAllToAllInput> checkSequenceAllToAllInput(KernelContext &ctx,
                                                         const Group &group) {
  const std::string &where = group.what;
  const int g = group.size();
  SequenceAllToAllInput in;
  auto splitsOr = keySplits(ctx.attrs(), g);
  if (!splitsOr)
    return splitsOr.status().withContext(where);
  in.splits = std::move(*splitsOr);
  in.keyOff = prefixSums(in.splits);
  const int64_t numKeys = in.keyOff[g];

  const Tensor &rows = ctx.input(0), &lengths = ctx.input(1);
  if (!isFloatRows(rows))
    return invalidArgument(where +
                           ": rows must be float32, float16 or bfloat16 of "
                           "rank >= 1 [N, ...], not " +
                           describeOrAbsent(rows));
  if (!lengths.defined() || lengths.rank() != 1 ||
      (lengths.dtype() != DType::kInt32 && lengths.dtype() != DType::kInt64))
    return invalidArgument(where + ": lengths must be int32/int64 of rank 1 " +
                           "[K * B], not " + describeOrAbsent(lengths));
  if (lengths.dim(0) % numKeys != 0)
    return invalidArgument(where + ": lengths has " +
                           std::to_string(lengths.dim(0)) +
                           " entries, not a multiple of the " +
                           std::to_string(numKeys) + " keys of key_splits");
  in.localBatch = lengths.dim(0) / numKeys;
  in.lenOff.resize(g + 1);
  for (int p = 0; p <= g; ++p)
    in.lenOff[p] = in.keyOff[p] * in.localBatch;
  in.rowElements = rowElements(rows);
  return in;
}

Result<SequenceAllToAllLayout>
exchangeSequenceCounts(const Group &group, const SequenceAllToAllInput &in,
                       const Tensor &rows, std::vector<int64_t> expect) {
  const std::string &where = group.what;
  const int g = group.size(), me = group.position;
  if (static_cast<int>(expect.size()) != g)
    return internalError(where + ": " + std::to_string(expect.size()) +
                         " row counts for a group of " + std::to_string(g));
  for (int p = 0; p < g; ++p)
    if (expect[p] < 0 || expect[p] > kMaxSequenceRows)
      return invalidArgument(where + ": the lengths of position " +
                             std::to_string(p) + "'s keys sum to " +
                             std::to_string(expect[p]) +
                             " rows, more than the " +
                             std::to_string(kMaxSequenceRows) + " allowed");
  const int64_t dtype = static_cast<int64_t>(rows.dtype());
  std::vector<int64_t> mine(3 * g);
  for (int p = 0; p < g; ++p) {
    mine[3 * p] = expect[p];
    mine[3 * p + 1] = in.rowElements;
    mine[3 * p + 2] = dtype;
  }
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> hdr,
      exchangeCounts(group.comm, group.ranks, me, mine, 3, where + " (sizes)"));
  SequenceAllToAllLayout layout;
  layout.send.resize(g);
  for (int q = 0; q < g; ++q) {
    layout.send[q] = hdr[3 * q];
    if (hdr[3 * q + 1] != in.rowElements || hdr[3 * q + 2] != dtype)
      return invalidArgument(
          where + ": group position " + std::to_string(q) + " has rows of " +
          std::to_string(hdr[3 * q + 1]) + " elements of dtype code " +
          std::to_string(hdr[3 * q + 2]) + ", this rank " + rows.describe());
  }
  layout.sendOff = prefixSums(layout.send);
  if (layout.sendOff[g] != rows.dim(0))
    return invalidArgument(
        where + ": rows has " + std::to_string(rows.dim(0)) +
        " rows but the group's positions expect " +
        std::to_string(layout.sendOff[g]) + " from this rank (" +
        perPosition(layout.send) +
        "; the sums of their lengths over this rank's keys)");
  layout.expect = std::move(expect);
  layout.recvOff = prefixSums(layout.expect);
  layout.outputShape = rows.shape();
  layout.outputShape[0] = layout.recvOff[g];
  layout.rowBytes =
      static_cast<size_t>(in.rowElements) * dtypeSize(rows.dtype());
  return layout;
}

void sequenceBlocks(const SequenceAllToAllLayout &layout, const Tensor &rows,
                    Tensor &out, std::vector<SendBuffer> &sends,
                    std::vector<RecvBuffer> &recvs) {
  const size_t g = layout.send.size(), rb = layout.rowBytes;
  const char *r = static_cast<const char *>(rows.data());
  char *o = static_cast<char *>(out.data());
  sends.assign(g, SendBuffer{});
  recvs.assign(g, RecvBuffer{});
  for (size_t q = 0; q < g; ++q) {
    sends[q] = {r + static_cast<size_t>(layout.sendOff[q]) * rb,
                static_cast<size_t>(layout.send[q]) * rb};
    recvs[q] = {o + static_cast<size_t>(layout.recvOff[q]) * rb,
                static_cast<size_t>(layout.expect[q]) * rb};
  }
}

} // namespace ember::collective
