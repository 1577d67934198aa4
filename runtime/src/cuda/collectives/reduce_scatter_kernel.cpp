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
#include "comm/kernels/comm_codec.h"
#include "comm/kernels/reduce_scatter_layout.h"
#include "cuda/collectives/collective_launch.h"
#include "cuda/collectives/cuda_collective_defs.h"
#include "cuda/collectives/device_collective.h"

namespace ember::cuda::collectives {

using namespace ember::collective;

namespace {} // namespace

Status runReduceScatter(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, where));
  const int g = group.size();
  EMBER_ASSIGN_OR_RETURN(ReduceScatterLayout layout,
                         reduceScatterLayout(ctx, group));
  const std::vector<int64_t> &batches = layout.batches, &rowOff = layout.rowOff;
  const Tensor &x = ctx.input(0);
  const int64_t bMe = layout.localBatch, e = layout.rowElements;
  const CommCodec codec = layout.codec;
  const bool isMax = layout.isMax, equal = layout.equalBatches;
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out, ctx.allocateOutput(0, DType::kFloat32, layout.outputShape));
  const int64_t block = bMe * e;
  NcclCommunicator *nccl = ncclFor(ctx, group);
  if (nccl && equal && codec == CommCodec::kNone)
    return nccl->reduceScatter(group.ranks, x.data(), out->data(),
                               static_cast<size_t>(block), DType::kFloat32,
                               isMax ? NcclCommunicator::ReduceOp::kMax
                                     : NcclCommunicator::ReduceOp::kSum,
                               env->stream, where);
  const int wire = static_cast<int>(codec);
  const size_t es = layout.wireElementSize;
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
  return launchReduceBlocks(*env, staging, wire, g, block, isMax,
                            out->data<float>(), nullptr, 0);
}

} // namespace ember::cuda::collectives
