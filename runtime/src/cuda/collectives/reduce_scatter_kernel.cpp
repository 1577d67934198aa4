//===- reduce_scatter_kernel.cpp - reduce_scatter on CUDA -----------------===//
//
// As comm/kernels/reduce_scatter_kernel.cpp. When every position has the
// same batch and no comm_dtype is set, one ncclReduceScatter writes the
// output (NCCL's reduction order: sums over more than two ranks may differ
// from the CPU backend in the last bits). Otherwise the row blocks (16-bit
// with comm_dtype) go to their owners with an all-to-all-v and one kernel
// reduces the received blocks in float32 in position order, exactly as the
// CPU kernel does.
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
  const int g = group.size();
  auto isMax = reduceIsMax(ctx.attrs());
  if (!isMax)
    return isMax.status().withContext(where);
  auto codecOr = commCodec(ctx.attrs());
  if (!codecOr)
    return codecOr.status().withContext(where);
  const CommCodec codec = *codecOr;
  const Tensor &x = ctx.input(0), &ref = ctx.input(1);
  if (!x.defined() || x.rank() < 1 || x.dtype() != DType::kFloat32)
    return invalidArgument(where + ": x must be float32 of rank >= 1, not " +
                           (x.defined() ? x.describe() : "absent"));
  EMBER_ASSIGN_OR_RETURN(const int64_t bMe, localBatch(ctx, ref, where));
  const int64_t e = rowElements(x);
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> hdr,
      group.allGatherInts({bMe, e, static_cast<int64_t>(codec)},
                          " (batch sizes)"));
  std::vector<int64_t> batches(g);
  bool equal = true;
  for (int q = 0; q < g; ++q) {
    batches[q] = hdr[3 * q];
    equal = equal && batches[q] == bMe;
    if (hdr[3 * q + 1] != e)
      return invalidArgument(where + ": group position " + std::to_string(q) +
                             " has rows of " + std::to_string(hdr[3 * q + 1]) +
                             " elements, this rank " + std::to_string(e));
    if (hdr[3 * q + 2] != static_cast<int64_t>(codec))
      return invalidArgument(where + ": group position " + std::to_string(q) +
                             " sends comm_dtype code " +
                             std::to_string(hdr[3 * q + 2]) + ", this rank " +
                             commCodecName(codec));
  }
  std::vector<int64_t> rowOff = prefixSums(batches);
  if (x.dim(0) != rowOff[g])
    return invalidArgument(where + ": x has " + std::to_string(x.dim(0)) +
                           " rows but the group's batch sizes sum to " +
                           std::to_string(rowOff[g]));
  Shape shape = x.shape();
  shape[0] = bMe;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, DType::kFloat32, shape));
  const int64_t block = bMe * e;
  NcclCommunicator *nccl = ncclFor(ctx, group);
  if (nccl && equal && codec == CommCodec::kNone)
    return nccl->reduceScatter(group.ranks, x.data(), out->data(),
                               static_cast<size_t>(block), DType::kFloat32,
                               *isMax ? NcclCommunicator::ReduceOp::kMax
                                      : NcclCommunicator::ReduceOp::kSum,
                               env->stream, where);
  const int wire = static_cast<int>(codec);
  const size_t es = codec != CommCodec::kNone ? 2 : sizeof(float);
  EMBER_ASSIGN_OR_RETURN(
      char *staging, scratchBytes(ctx, static_cast<size_t>(block * g) * es));
  const char *xs = static_cast<const char *>(x.data());
  if (codec != CommCodec::kNone) {
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
    sends[q] = {xs + static_cast<size_t>(rowOff[q] * e) * es,
                static_cast<size_t>(batches[q] * e) * es};
    recvs[q] = {staging + static_cast<size_t>(q * block) * es,
                static_cast<size_t>(block) * es};
  }
  EMBER_RETURN_IF_ERROR(deviceExchange(ctx, group, sends, recvs, ""));
  return launchReduceBlocks(*env, staging, wire, g, block, *isMax,
                            out->data<float>(), nullptr, 0);
}

} // namespace

KernelDef reduceScatterKernel() {
  KernelDef d = collective::reduceScatterKernel();
  d.run = run;
  return d;
}

} // namespace ember::cuda::collectives
