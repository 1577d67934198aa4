//===- all_reduce_kernel.cpp - all_reduce on CUDA -------------------------===//
//
// As comm/kernels/all_reduce_kernel.cpp. Without comm_dtype, a group of
// several ranks runs one ncclAllReduce (NCCL's reduction order: sums over
// more than two ranks may differ from the CPU backend in the last bits;
// every rank gets the same bits). With comm_dtype (or without NCCL: a group
// of one), the CPU's algorithm: near-equal chunks (16-bit on the wire) go to
// their owners, the owner reduces them in float32 in position order (and
// rounds the result to 16 bits), and an all-gather returns every chunk.
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/all_reduce_layout.h"
#include "comm/kernels/comm_codec.h"
#include "cuda/collectives/collective_launch.h"
#include "cuda/collectives/cuda_collective_defs.h"
#include "cuda/collectives/device_collective.h"

namespace ember::cuda::collectives {

using namespace ember::collective;

namespace {

/// The chunked reduce + gather; wire: a CommCodec (kNone: float32).
Status runChunked(KernelContext &ctx, KernelEnv &env, const Group &group,
                  int wire, bool isMax, const std::vector<int64_t> &chunk,
                  Tensor &out) {
  const int g = group.size(), me = group.position;
  const Tensor &x = ctx.input(0);
  const int64_t n = x.numel(), mine = chunk[me + 1] - chunk[me];
  const size_t es =
      wire != static_cast<int>(CommCodec::kNone) ? 2 : sizeof(float);
  const char *xs = static_cast<const char *>(x.data());
  uint16_t *wireOut = nullptr;
  if (wire != static_cast<int>(CommCodec::kNone)) {
    EMBER_ASSIGN_OR_RETURN(char *wx,
                           scratchBytes(ctx, static_cast<size_t>(n) * es));
    EMBER_ASSIGN_OR_RETURN(char *wo,
                           scratchBytes(ctx, static_cast<size_t>(n) * es));
    EMBER_RETURN_IF_ERROR(launchEncodeWire(
        env, x.data<float>(), reinterpret_cast<uint16_t *>(wx), n, wire));
    xs = wx;
    wireOut = reinterpret_cast<uint16_t *>(wo);
  }
  EMBER_ASSIGN_OR_RETURN(char *staging,
                         scratchBytes(ctx, static_cast<size_t>(mine * g) * es));
  std::vector<SendBuffer> sends(g);
  std::vector<RecvBuffer> recvs(g);
  for (int q = 0; q < g; ++q) {
    sends[q] = {xs + static_cast<size_t>(chunk[q]) * es,
                static_cast<size_t>(chunk[q + 1] - chunk[q]) * es};
    recvs[q] = {staging + static_cast<size_t>(q * mine) * es,
                static_cast<size_t>(mine) * es};
  }
  EMBER_RETURN_IF_ERROR(deviceExchange(ctx, group, sends, recvs, " (reduce)"));
  float *o = out.data<float>();
  EMBER_RETURN_IF_ERROR(
      launchReduceBlocks(env, staging, wire, g, mine, isMax, o + chunk[me],
                         wireOut ? wireOut + chunk[me] : nullptr, wire));
  char *gathered =
      wireOut ? reinterpret_cast<char *>(wireOut) : reinterpret_cast<char *>(o);
  for (int q = 0; q < g; ++q) {
    sends[q] = {gathered + static_cast<size_t>(chunk[me]) * es,
                static_cast<size_t>(mine) * es};
    recvs[q] = {gathered + static_cast<size_t>(chunk[q]) * es,
                static_cast<size_t>(chunk[q + 1] - chunk[q]) * es};
  }
  EMBER_RETURN_IF_ERROR(deviceExchange(ctx, group, sends, recvs, " (gather)"));
  if (wireOut)
    return launchDecodeWire(env, wireOut, o, n, wire);
  return Status::ok();
}

} // namespace

Status runAllReduce(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, where));
  EMBER_ASSIGN_OR_RETURN(AllReduceLayout layout, allReduceLayout(ctx, group));
  const CommCodec codec = layout.codec;
  const bool isMax = layout.isMax;
  const Tensor &x = ctx.input(0);
  const int64_t n = layout.numElements;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, DType::kFloat32, x.shape()));
  NcclCommunicator *nccl = ncclFor(ctx, group);
  if (nccl && codec == CommCodec::kNone)
    return nccl->allReduce(group.ranks, x.data(), out->data(),
                           static_cast<size_t>(n), DType::kFloat32,
                           isMax ? NcclCommunicator::ReduceOp::kMax
                                 : NcclCommunicator::ReduceOp::kSum,
                           env->stream, where);
  return runChunked(ctx, *env, group, static_cast<int>(codec), isMax,
                    layout.chunk, *out);
}

} // namespace ember::cuda::collectives
