//===- sequence_all_to_all_kernel.cpp - sequence_all_to_all on CUDA -------===//
//
// As comm/kernels/sequence_all_to_all_kernel.cpp, with the data on the
// device:
// 1. kjt_all_to_all's count kernel sums the lengths per position (and finds
//    a negative one); the g sums come back through the pinned host staging
//    with the kernel's one synchronization (the output size depends on
//    them);
// 2. (rows expected, row elements, dtype) are exchanged on the host;
// 3. rows' blocks (contiguous per destination) go with one NCCL
//    all-to-all-v straight into the output (device copies for a group of
//    one): the received blocks are the output, in position order.
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/sequence_all_to_all_layout.h"
#include "cuda/collectives/cuda_collective_defs.h"
#include "cuda/collectives/device_collective.h"

namespace ember::cuda::collectives {

using namespace ember::collective;

namespace {

/// Step 1: expect[p], the sum of the lengths of position p's keys, checked
/// as the CPU kernel checks them.
Status sumLengths(KernelContext &ctx, KernelEnv &env, const Group &group,
                  const SequenceAllToAllInput &in, const Tensor &lengths,
                  std::vector<int64_t> &expect) {
  const int g = group.size();
  expect.assign(g, 0);
  if (lengths.dim(0) == 0)
    return Status::ok(); // nothing to read back
  EMBER_ASSIGN_OR_RETURN(
      std::vector<uint64_t> sums,
      sumLengthsOnDevice(ctx, env, group, lengths, in.lenOff));
  for (int p = 0; p < g; ++p)
    // A sum past kMaxSequenceRows (or wrapped past 2^63) is refused by
    // exchangeSequenceCounts.
    expect[p] = sums[p] > static_cast<uint64_t>(kMaxSequenceRows)
                    ? kMaxSequenceRows + 1
                    : static_cast<int64_t>(sums[p]);
  return Status::ok();
}

} // namespace

Status runSequenceAllToAll(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, where));
  EMBER_ASSIGN_OR_RETURN(SequenceAllToAllInput in,
                         checkSequenceAllToAllInput(ctx, group));
  const Tensor &rows = ctx.input(0), &lengths = ctx.input(1);
  std::vector<int64_t> expect;
  EMBER_RETURN_IF_ERROR(sumLengths(ctx, *env, group, in, lengths, expect));
  EMBER_ASSIGN_OR_RETURN(SequenceAllToAllLayout layout,
                         exchangeSequenceCounts(group, in, rows, expect));
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out, ctx.allocateOutput(0, rows.dtype(), layout.outputShape));
  std::vector<SendBuffer> sends;
  std::vector<RecvBuffer> recvs;
  sequenceBlocks(layout, rows, *out, sends, recvs);
  return deviceExchange(ctx, group, sends, recvs, "");
}

} // namespace ember::cuda::collectives
