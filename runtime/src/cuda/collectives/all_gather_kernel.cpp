//===- all_gather_kernel.cpp - all_gather on CUDA -------------------------===//
//
// As comm/kernels/all_gather_kernel.cpp: batch sizes on the host, then one
// ncclAllGather straight into the output when every position has the same
// batch, else grouped ncclSend/ncclRecv (all-gather-v); device copies for a
// group of one.
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/all_gather_layout.h"
#include "cuda/collectives/cuda_collective_defs.h"
#include "cuda/collectives/device_collective.h"

namespace ember::cuda::collectives {

using namespace ember::collective;

namespace {} // namespace

Status runAllGather(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, where));
  const int g = group.size();
  EMBER_ASSIGN_OR_RETURN(AllGatherLayout layout, allGatherLayout(ctx, group));
  const std::vector<int64_t> &batches = layout.batches, &rowOff = layout.rowOff;
  const Tensor &x = ctx.input(0);
  const int64_t e = layout.rowElements;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, x.dtype(), layout.outputShape));
  NcclCommunicator *nccl = ncclFor(ctx, group);
  if (nccl && layout.equalBatches)
    return nccl->allGather(group.ranks, x.data(), out->data(),
                           static_cast<size_t>(x.numel()), x.dtype(),
                           env->stream, where);
  const size_t rowBytes = static_cast<size_t>(e) * dtypeSize(x.dtype());
  char *o = static_cast<char *>(out->data());
  std::vector<SendBuffer> sends(g, SendBuffer{x.data(), x.nbytes()});
  std::vector<RecvBuffer> recvs(g);
  for (int q = 0; q < g; ++q)
    recvs[q] = {o + rowOff[q] * rowBytes, batches[q] * rowBytes};
  return deviceExchange(ctx, group, sends, recvs, "");
}

} // namespace ember::cuda::collectives
