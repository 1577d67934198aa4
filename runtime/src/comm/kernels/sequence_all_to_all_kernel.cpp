//===- sequence_all_to_all_kernel.cpp - sequence_all_to_all ---------------===//
//
// The output dist of sharded sequence (unpooled) embeddings: TorchRec's
// SequenceEmbeddingsAllToAll.
//
// inputs:  0 rows [N, ...] (float32 / float16 / bfloat16; ordered by
//            destination position: the first send[0] rows go to position 0,
//            the next send[1] to position 1, ...), 1 lengths [K * B_me]
//            (int32/int64): the lengths of the local KJT this rank sent in
//            the matching kjt_all_to_all (key-major, B_me bags per key)
// attrs:   key_splits (one key count per group position, sum K: the
//          matching kjt_all_to_all's)
// output:  [sum expect, ...] (rows' dtype and trailing dims): the rows
//          received from position 0 first, then position 1, ...
//
// expect[p] = the sum of this rank's lengths over position p's keys (keys
// key_splits[0] + ... + key_splits[p-1] onward): the rows position p sends
// back. The expect of every position is exchanged first, which tells each
// rank its send[p]; sum(send) must be N. Then one exchange of the row
// blocks, empty ones skipped.
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/collective_common.h"
#include "comm/kernels/collective_kernel_defs.h"
#include "comm/kernels/kjt_all_to_all_layout.h"
#include "comm/kernels/sequence_all_to_all_layout.h"

namespace ember::collective {

namespace {

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  const int g = group.size();
  EMBER_ASSIGN_OR_RETURN(SequenceAllToAllInput in,
                         checkSequenceAllToAllInput(ctx, group));
  const Tensor &rows = ctx.input(0), &lengths = ctx.input(1);

  // Rows expected back from each position: its keys are one contiguous
  // range of the key-major lengths.
  std::vector<int64_t> expect(g, 0);
  for (int p = 0; p < g; ++p) {
    int64_t sum = 0;
    for (int64_t i = in.lenOff[p]; i < in.lenOff[p + 1]; ++i) {
      int64_t len = loadLength(lengths.data(), lengths.dtype(), i);
      if (len < 0)
        return negativeLength(where, i, len);
      sum += len;
      if (sum > kMaxSequenceRows)
        break; // refused by exchangeSequenceCounts
    }
    expect[p] = sum;
  }

  EMBER_ASSIGN_OR_RETURN(SequenceAllToAllLayout layout,
                         exchangeSequenceCounts(group, in, rows, expect));
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out, ctx.allocateOutput(0, rows.dtype(), layout.outputShape));
  std::vector<SendBuffer> sends;
  std::vector<RecvBuffer> recvs;
  sequenceBlocks(layout, rows, *out, sends, recvs);
  return group.exchange(sends, recvs, "");
}

} // namespace

KernelDef sequenceAllToAllKernel() {
  KernelDef d;
  d.name = "sequence_all_to_all";
  d.run = run;
  d.validate = validateKeySplits;
  d.validateGroup = validateKeySplitsForGroup;
  d.summary = "sequence embeddings [N, D] -> [sum of my lengths, D], rows "
              "back to the ranks that sent the ids (output dist)";
  return d;
}

} // namespace ember::collective
