//===- pooled_all_to_all_kernel.cpp - pooled_all_to_all on CUDA -----------===//
//
// As comm/kernels/pooled_all_to_all_kernel.cpp: the B, D and dtype (and
// comm_dtype) of every position are exchanged on the host; x's row blocks
// (contiguous per destination, rounded to 16 bits first with comm_dtype) go
// to their positions with one NCCL all-to-all-v into a staging buffer, and
// one kernel unpacks the [B_me, D_q] blocks into the [B_me, sum D] output
// (widening the 16-bit values).
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/collective_kernel_defs.h"
#include "comm/kernels/comm_codec.h"
#include "cuda/collectives/collective_launch.h"
#include "cuda/collectives/cuda_collective_defs.h"
#include "cuda/collectives/device_collective.h"

namespace ember::cuda::collectives {

using namespace ember::collective;

namespace {

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, where));
  const int g = group.size(), me = group.position;
  auto dimsOr = perMemberInts(ctx.attrs(), "dim_per_rank", g);
  if (!dimsOr)
    return dimsOr.status().withContext(where);
  const std::vector<int64_t> &dims = *dimsOr;
  const Tensor &x = ctx.input(0), &ref = ctx.input(1);
  if (!x.defined() || x.rank() != 2)
    return invalidArgument(where + ": x must have rank 2 [B_total, D], not " +
                           (x.defined() ? x.describe() : "absent"));
  if (x.dim(1) != dims[me])
    return invalidArgument(where + ": x has " + std::to_string(x.dim(1)) +
                           " columns but dim_per_rank[" + std::to_string(me) +
                           "] is " + std::to_string(dims[me]));
  auto codecOr = commCodec(ctx.attrs());
  if (!codecOr)
    return codecOr.status().withContext(where);
  const CommCodec codec = *codecOr;
  if (codec != CommCodec::kNone && x.dtype() != DType::kFloat32)
    return invalidArgument(where + ": comm_dtype \"" + commCodecName(codec) +
                           "\" needs float32 x, not " + x.describe());
  EMBER_ASSIGN_OR_RETURN(const int64_t bMe, localBatch(ctx, ref, where));
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> hdr,
      group.allGatherInts({bMe, x.dim(1), static_cast<int64_t>(x.dtype()),
                           static_cast<int64_t>(codec)},
                          " (batch sizes)"));
  std::vector<int64_t> batches(g);
  for (int q = 0; q < g; ++q) {
    batches[q] = hdr[4 * q];
    if (hdr[4 * q + 1] != dims[q] ||
        hdr[4 * q + 2] != static_cast<int64_t>(x.dtype()) ||
        hdr[4 * q + 3] != static_cast<int64_t>(codec))
      return invalidArgument(
          where + ": group position " + std::to_string(q) + " sends " +
          std::to_string(hdr[4 * q + 1]) + " columns of dtype code " +
          std::to_string(hdr[4 * q + 2]) + " (comm_dtype code " +
          std::to_string(hdr[4 * q + 3]) + "), but dim_per_rank says " +
          std::to_string(dims[q]) + " and this rank has " +
          std::string(dtypeName(x.dtype())) + " (comm_dtype " +
          commCodecName(codec) + ")");
  }
  std::vector<int64_t> rowOff = prefixSums(batches), colOff = prefixSums(dims);
  if (dims[me] != 0 && x.dim(0) != rowOff[g])
    return invalidArgument(where + ": x has " + std::to_string(x.dim(0)) +
                           " rows but the group's batch sizes sum to " +
                           std::to_string(rowOff[g]));
  const int wire = static_cast<int>(codec);
  const size_t es = codec != CommCodec::kNone ? 2 : dtypeSize(x.dtype());
  const int64_t dSum = colOff[g];
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, x.dtype(), {bMe, dSum}));
  EMBER_ASSIGN_OR_RETURN(
      char *staging, scratchBytes(ctx, static_cast<size_t>(bMe * dSum) * es));
  const char *xs = static_cast<const char *>(x.data());
  if (codec != CommCodec::kNone && dims[me] != 0) {
    EMBER_ASSIGN_OR_RETURN(
        char *wireX, scratchBytes(ctx, static_cast<size_t>(x.numel()) * es));
    EMBER_RETURN_IF_ERROR(launchEncodeWire(*env, x.data<float>(),
                                           reinterpret_cast<uint16_t *>(wireX),
                                           x.numel(), wire));
    xs = wireX;
  }
  std::vector<SendBuffer> sends(g);
  std::vector<RecvBuffer> recvs(g);
  for (int q = 0; q < g; ++q) {
    sends[q] = {xs + static_cast<size_t>(rowOff[q] * dims[me]) * es,
                static_cast<size_t>(batches[q] * dims[me]) * es};
    recvs[q] = {staging + static_cast<size_t>(bMe * colOff[q]) * es,
                static_cast<size_t>(bMe * dims[q]) * es};
  }
  EMBER_RETURN_IF_ERROR(deviceExchange(ctx, group, sends, recvs, ""));
  EMBER_ASSIGN_OR_RETURN(int64_t * colOffDevice, uploadInts(ctx, colOff));
  return launchPooledUnpack(*env, staging, wire, static_cast<int>(es),
                            out->data(), bMe, dSum, colOffDevice, g);
}

} // namespace

KernelDef pooledAllToAllKernel() {
  KernelDef d = collective::pooledAllToAllKernel();
  d.run = run;
  return d;
}

} // namespace ember::cuda::collectives
