//===- device_collective.cpp - Shared host code of the CUDA collectives ---===//
#include "cuda/collectives/device_collective.h"

#include "cuda/cuda_status.h"

namespace ember::cuda::collectives {

Result<KernelEnv *> envOf(KernelContext &ctx, const std::string &where) {
  KernelEnv *env = ctx.gpu();
  if (!env)
    return internalError(where + ": a CUDA kernel ran without a CUDA device");
  return env;
}

NcclCommunicator *ncclFor(KernelContext &ctx, const collective::Group &group) {
  if (group.size() <= 1)
    return nullptr;
  KernelEnv *env = ctx.gpu();
  return env ? env->nccl : nullptr;
}

Status deviceExchange(KernelContext &ctx, const collective::Group &group,
                      const std::vector<SendBuffer> &sends,
                      const std::vector<RecvBuffer> &recvs,
                      const std::string &step) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, group.what));
  const std::string what = group.what + step;
  if (NcclCommunicator *nccl = ncclFor(ctx, group))
    return nccl->allToAllv(group.ranks, sends, recvs, env->stream, what);
  const int me = group.position;
  if (sends.size() != recvs.size() || me < 0 ||
      static_cast<size_t>(me) >= sends.size())
    return internalError(what + ": malformed exchange");
  for (size_t i = 0; i < sends.size(); ++i)
    if (static_cast<int>(i) != me && (sends[i].bytes || recvs[i].bytes))
      return failedPrecondition(
          what + ": the collective's group has " +
          std::to_string(sends.size()) +
          " ranks but this CUDA session has no NCCL communicator (start every "
          "rank with SessionOptions.worldSize and a rendezvous, or ember-run "
          "--nproc)");
  const SendBuffer &s = sends[me];
  const RecvBuffer &r = recvs[me];
  if (s.bytes != r.bytes)
    return internalError(what + ": sends " + std::to_string(s.bytes) +
                         " bytes to itself but expects " +
                         std::to_string(r.bytes));
  if (s.bytes && s.data != r.data)
    EMBER_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        r.data, s.data, s.bytes, cudaMemcpyDeviceToDevice, env->stream));
  return Status::ok();
}

Result<int64_t *> uploadInts(KernelContext &ctx,
                             const std::vector<int64_t> &v) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, ctx.location()));
  EMBER_ASSIGN_OR_RETURN(
      char *p, collective::scratchBytes(ctx, v.size() * sizeof(int64_t)));
  // From pageable memory: the driver has read `v` when the call returns.
  if (!v.empty())
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(p, v.data(), v.size() * sizeof(int64_t),
                        cudaMemcpyHostToDevice, env->stream));
  return reinterpret_cast<int64_t *>(p);
}

Status synchronizeStream(KernelContext &ctx, const std::string &what) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, what));
  if (env->nccl)
    return env->nccl->synchronize(env->stream, what);
  EMBER_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(env->stream));
  return Status::ok();
}

} // namespace ember::cuda::collectives
