//===- all_gather_kernel.cpp - all_gather ---------------------------------===//
//
// input:   0 x [B_me, ...] (any dtype; the same trailing dims on every rank)
// output:  [sum B, ...]: every position's rows, in position order
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/all_gather_layout.h"
#include "comm/kernels/collective_kernel_defs.h"

namespace ember::collective {

namespace {

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const int g = group.size();
  EMBER_ASSIGN_OR_RETURN(AllGatherLayout layout, allGatherLayout(ctx, group));
  const std::vector<int64_t> &batches = layout.batches, &rowOff = layout.rowOff;
  const Tensor &x = ctx.input(0);
  const int64_t e = layout.rowElements;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, x.dtype(), layout.outputShape));
  const size_t rowBytes = static_cast<size_t>(e) * dtypeSize(x.dtype());
  char *o = static_cast<char *>(out->data());
  std::vector<SendBuffer> sends(g, SendBuffer{x.data(), x.nbytes()});
  std::vector<RecvBuffer> recvs(g);
  for (int q = 0; q < g; ++q)
    recvs[q] = {o + rowOff[q] * rowBytes, batches[q] * rowBytes};
  return group.exchange(sends, recvs, "");
}

} // namespace

KernelDef allGatherKernel() {
  KernelDef d;
  d.name = "all_gather";
  d.run = run;
  d.summary = "[B_me, ...] -> [sum B, ...] in group order";
  return d;
}

} // namespace ember::collective
