//===- pooled_all_to_all_kernel.cpp - pooled_all_to_all on CUDA -----------===//
//
// As comm/kernels/pooled_all_to_all_kernel.cpp: the B, D and dtype (and
// comm_dtype) of every position are exchanged on the host; x's row blocks
// (contiguous per destination, rounded to 16 bits first with comm_dtype) go
// to their positions with one NCCL all-to-all-v into a staging buffer, and
// one kernel unpacks the [B_me, D_q] blocks into the [B_me, sum D] output
// (widening the 16-bit values), segment by segment: in position order, or
// where the plan's segment_dims / segment_columns put each run of columns.
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/comm_codec.h"
#include "comm/kernels/pooled_all_to_all_layout.h"
#include "cuda/collectives/collective_launch.h"
#include "cuda/collectives/cuda_collective_defs.h"
#include "cuda/collectives/device_collective.h"

namespace ember::cuda::collectives {

using namespace ember::collective;

namespace {} // namespace

Status runPooledAllToAll(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, where));
  const int g = group.size(), me = group.position;
  EMBER_ASSIGN_OR_RETURN(PooledAllToAllLayout layout,
                         pooledAllToAllLayout(ctx, group));
  const std::vector<int64_t> &dims = layout.dims, &batches = layout.batches,
                             &rowOff = layout.rowOff, &colOff = layout.colOff;
  const Tensor &x = ctx.input(0);
  const int64_t bMe = layout.localBatch;
  const CommCodec codec = layout.codec;
  const int wire = static_cast<int>(codec);
  const size_t es = layout.wireElementSize;
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
  // One pass over the output, each element from its segment's block (in
  // position order, or as the plan's segment_columns place them).
  EMBER_ASSIGN_OR_RETURN(
      int64_t * segmentsDevice,
      uploadInts(ctx, pooledUnpackTable(layout.segments, dims, bMe)));
  return launchPooledUnpack(*env, staging, wire, static_cast<int>(es),
                            out->data(), bMe, dSum, segmentsDevice,
                            static_cast<int>(layout.segments.size()));
}

} // namespace ember::cuda::collectives
