//===- device_collective.cpp - Shared host code of the CUDA collectives ---===//
#include "cuda/collectives/device_collective.h"

#include "comm/kernels/kjt_all_to_all_layout.h"
#include "cuda/collectives/collective_launch.h"
#include "cuda/cuda_status.h"

#include <cstring>

namespace ember::cuda::collectives {

Result<std::vector<uint64_t>>
sumLengthsOnDevice(KernelContext &ctx, KernelEnv &env,
                   const collective::Group &group, const Tensor &lengths,
                   const std::vector<int64_t> &lenOff) {
  const std::string &where = group.what;
  const int g = group.size();
  const bool is64 = lengths.dtype() == DType::kInt64;
  const size_t resultBytes = static_cast<size_t>(g + 1) * sizeof(uint64_t);
  if (!env.hostStaging || env.hostStagingBytes < resultBytes)
    return internalError(where + ": the host staging buffer is too small for " +
                         std::to_string(g + 1) + " counts");
  EMBER_ASSIGN_OR_RETURN(char *resultBytesPtr,
                         collective::scratchBytes(ctx, resultBytes));
  auto *sums = reinterpret_cast<unsigned long long *>(resultBytesPtr);
  EMBER_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(sums, 0, g * sizeof(uint64_t), env.stream));
  EMBER_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(sums + g, 0xff, sizeof(uint64_t), env.stream));
  EMBER_ASSIGN_OR_RETURN(int64_t * lenOffDevice, uploadInts(ctx, lenOff));
  EMBER_RETURN_IF_ERROR(launchKjtCount(env, lengths.data(), is64,
                                       lengths.dim(0), lenOffDevice, g, sums,
                                       sums + g));
  EMBER_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
      env.hostStaging, sums, resultBytes, cudaMemcpyDeviceToHost, env.stream));
  EMBER_RETURN_IF_ERROR(synchronizeStream(ctx, where + " (lengths)"));
  std::vector<uint64_t> host(g + 1);
  std::memcpy(host.data(), env.hostStaging, resultBytes);
  if (host[g] != ~uint64_t{0}) {
    // Error path only: one more read for the message.
    const int64_t i = static_cast<int64_t>(host[g]);
    int64_t len = 0;
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(&len,
                   static_cast<const char *>(lengths.data()) +
                       i * dtypeSize(lengths.dtype()),
                   dtypeSize(lengths.dtype()), cudaMemcpyDeviceToHost));
    if (!is64)
      len = static_cast<int32_t>(len & 0xffffffff);
    return collective::negativeLength(where, i, len);
  }
  host.pop_back();
  return host;
}

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
