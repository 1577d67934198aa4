//===- all_gather_kernel.cpp - all_gather on CUDA -------------------------===//
//
// As comm/kernels/all_gather_kernel.cpp: batch sizes on the host, then one
// ncclAllGather straight into the output when every position has the same
// batch, else grouped ncclSend/ncclRecv (all-gather-v); device copies for a
// group of one.
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/collective_kernel_defs.h"
#include "cuda/collectives/cuda_collective_defs.h"
#include "cuda/collectives/device_collective.h"

namespace ember::cuda::collectives {

using namespace ember::collective;

namespace {

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, where));
  const int g = group.size();
  const Tensor &x = ctx.input(0);
  if (!x.defined() || x.rank() < 1)
    return invalidArgument(where + ": x must have rank >= 1");
  const int64_t e = rowElements(x);
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> hdr,
      group.allGatherInts({x.dim(0), e, static_cast<int64_t>(x.dtype())},
                          " (batch sizes)"));
  std::vector<int64_t> batches(g);
  bool equal = true;
  for (int q = 0; q < g; ++q) {
    batches[q] = hdr[3 * q];
    equal = equal && batches[q] == x.dim(0);
    if (hdr[3 * q + 1] != e ||
        hdr[3 * q + 2] != static_cast<int64_t>(x.dtype()))
      return invalidArgument(
          where + ": group position " + std::to_string(q) + " has rows of " +
          std::to_string(hdr[3 * q + 1]) + " elements of dtype code " +
          std::to_string(hdr[3 * q + 2]) + ", this rank " + x.describe());
  }
  std::vector<int64_t> rowOff = prefixSums(batches);
  Shape shape = x.shape();
  shape[0] = rowOff[g];
  EMBER_ASSIGN_OR_RETURN(Tensor * out, ctx.allocateOutput(0, x.dtype(), shape));
  NcclCommunicator *nccl = ncclFor(ctx, group);
  if (nccl && equal)
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

} // namespace

KernelDef allGatherKernel() {
  KernelDef d = collective::allGatherKernel();
  d.run = run;
  return d;
}

} // namespace ember::cuda::collectives
