//===- all_gather_kernel.cpp - all_gather ---------------------------------===//
//
// input:   0 x [B_me, ...] (any dtype; the same trailing dims on every rank)
// output:  [sum B, ...]: every position's rows, in position order
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/collective_common.h"
#include "comm/kernels/collective_kernel_defs.h"

namespace ember::collective {

namespace {

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
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
  for (int q = 0; q < g; ++q) {
    batches[q] = hdr[3 * q];
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
  d.collectiveKind = static_cast<int>(CollectiveInfo::Kind::kAllGather);
  d.minInputs = d.maxInputs = 1;
  d.summary = "[B_me, ...] -> [sum B, ...] in group order";
  return d;
}

} // namespace ember::collective
