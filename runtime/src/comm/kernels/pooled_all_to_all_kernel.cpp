//===- pooled_all_to_all_kernel.cpp - pooled_all_to_all -------------------===//
//
// inputs:  0 x [B_total, D_me] (rows ordered by destination position: the
//            first B_0 rows go to position 0, ...; any number of rows
//            when D_me is 0: nothing is sent), 1 batch_ref (dim 0 is this
//            rank's local batch B_me times batch_ref_divisor)
// attrs:   dim_per_rank (one D per group position), batch_ref_divisor
//          (default 1), comm_dtype (float32 x only: "float16" / "bfloat16"
//          send 16-bit values, comm_codec.h; default "float32")
//          segment_dims, segment_columns (both or neither: where runs of
//          the received columns go, pooled_all_to_all_layout.h)
// output:  [B_me, sum(D)], the columns of position 0 first, or as the
//          segments place them
//
// The B and D of every position are exchanged first (and checked against
// dim_per_rank), then each position's rows; empty blocks are not sent.
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/collective_common.h"
#include "comm/kernels/collective_kernel_defs.h"
#include "comm/kernels/comm_codec.h"
#include "comm/kernels/pooled_all_to_all_layout.h"

#include <cstring>

namespace ember::collective {

namespace {

Status validate(const Attributes &attrs, int, int) {
  EMBER_RETURN_IF_ERROR(validateBatchRefDivisor(attrs));
  EMBER_RETURN_IF_ERROR(commCodec(attrs).status());
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                         perMemberInts(attrs, "dim_per_rank", -1));
  return pooledSegments(attrs, dims).status();
}

Status validateGroup(const Attributes &attrs, int groupSize) {
  return perMemberInts(attrs, "dim_per_rank", groupSize).status();
}

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const int g = group.size(), me = group.position;
  EMBER_ASSIGN_OR_RETURN(PooledAllToAllLayout layout,
                         pooledAllToAllLayout(ctx, group));
  const std::vector<int64_t> &dims = layout.dims, &batches = layout.batches,
                             &rowOff = layout.rowOff, &colOff = layout.colOff;
  const Tensor &x = ctx.input(0);
  const int64_t bMe = layout.localBatch;
  const CommCodec codec = layout.codec;
  const size_t es = layout.wireElementSize;
  const int64_t dSum = colOff[g];
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, x.dtype(), {bMe, dSum}));
  EMBER_ASSIGN_OR_RETURN(
      char *staging, scratchBytes(ctx, static_cast<size_t>(bMe * dSum) * es));
  std::vector<SendBuffer> sends(g);
  std::vector<RecvBuffer> recvs(g);
  const char *xs = static_cast<const char *>(x.data());
  if (codec != CommCodec::kNone && dims[me] != 0) {
    EMBER_ASSIGN_OR_RETURN(
        char *wire, scratchBytes(ctx, static_cast<size_t>(x.numel()) * es));
    encodeWire(codec, x.data<float>(), reinterpret_cast<uint16_t *>(wire),
               x.numel());
    xs = wire;
  }
  // Where each position's [B_me, D_q] block is read from after the
  // exchange: the staging buffer, except this rank's own block, which is
  // read where it already is (x's rows for this rank, or their wire copy):
  // its receive aliases its send, so the communicator copies nothing for it
  // (Communicator::exchange), and its rows are copied once, into the output,
  // instead of twice (3.4 MB per rank and step on the 26-table models of
  // bench/overlap_netns.py).
  std::vector<const char *> blocks(g);
  for (int q = 0; q < g; ++q) {
    sends[q] = {xs + static_cast<size_t>(rowOff[q] * dims[me]) * es,
                static_cast<size_t>(batches[q] * dims[me]) * es};
    recvs[q] = {staging + static_cast<size_t>(bMe * colOff[q]) * es,
                static_cast<size_t>(bMe * dims[q]) * es};
    blocks[q] = static_cast<const char *>(recvs[q].data);
  }
  // batches[me] is B_me, so the own send is exactly the own block.
  recvs[me].data = const_cast<void *>(sends[me].data);
  blocks[me] = static_cast<const char *>(sends[me].data);
  EMBER_RETURN_IF_ERROR(group.exchange(sends, recvs, ""));
  // Each received row's runs of columns into their output columns, one
  // output row at a time (the segments are ordered by output column, so
  // each output row is written front to back): as many copies as rows times
  // segments, one segment per position unless the plan permutes them.
  char *o = static_cast<char *>(out->data());
  for (int64_t b = 0; b < bMe; ++b)
    for (const PooledSegment &seg : layout.segments) {
      const int64_t d = dims[seg.position];
      const size_t from = static_cast<size_t>(b * d + seg.sourceColumn);
      const char *block = blocks[seg.position];
      const size_t to = static_cast<size_t>(b * dSum + seg.outputColumn);
      if (codec != CommCodec::kNone) {
        const uint16_t *w = reinterpret_cast<const uint16_t *>(block) + from;
        float *of = out->data<float>() + to;
        for (int64_t c = 0; c < seg.width; ++c)
          of[c] = decodeWire(codec, w[c]);
        continue;
      }
      std::memcpy(o + to * es, block + from * es,
                  static_cast<size_t>(seg.width) * es);
    }
  return Status::ok();
}

} // namespace

KernelDef pooledAllToAllKernel() {
  KernelDef d;
  d.name = "pooled_all_to_all";
  d.run = run;
  d.validate = validate;
  d.validateGroup = validateGroup;
  d.summary =
      "pooled embeddings [B_total, D_me] -> [B_me, sum D] (output dist)";
  return d;
}

} // namespace ember::collective
