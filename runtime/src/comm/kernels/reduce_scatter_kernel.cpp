//===- reduce_scatter_kernel.cpp - reduce_scatter -------------------------===//
//
// inputs:  0 x [B_total, ...] float32 (rows ordered by destination position),
//          1 batch_ref (dim 0 is this rank's local batch B_me times
//          batch_ref_divisor)
// attrs:   reduce = "sum" (default) | "max", batch_ref_divisor (default 1),
//          comm_dtype = "float32" (default) | "float16" | "bfloat16" (the rows
//          travel as 16-bit values and are reduced in float32, comm_codec.h)
// output:  [B_me, ...]: the elementwise reduction, over the group positions
//          in order 0, 1, ..., of the rows that belong to this rank
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/collective_common.h"
#include "comm/kernels/collective_kernel_defs.h"
#include "comm/kernels/comm_codec.h"
#include "comm/kernels/reduce_scatter_layout.h"

#include <algorithm>

namespace ember::collective {

namespace {

Status validate(const Attributes &attrs, int, int) {
  EMBER_RETURN_IF_ERROR(validateBatchRefDivisor(attrs));
  EMBER_RETURN_IF_ERROR(commCodec(attrs).status());
  return reduceIsMax(attrs).status();
}

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const int g = group.size();
  EMBER_ASSIGN_OR_RETURN(ReduceScatterLayout layout,
                         reduceScatterLayout(ctx, group));
  const std::vector<int64_t> &batches = layout.batches, &rowOff = layout.rowOff;
  const Tensor &x = ctx.input(0);
  const int64_t bMe = layout.localBatch, e = layout.rowElements;
  const CommCodec codec = layout.codec;
  const bool isMax = layout.isMax;
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out, ctx.allocateOutput(0, DType::kFloat32, layout.outputShape));
  const size_t block = static_cast<size_t>(bMe * e);
  const size_t es = layout.wireElementSize;
  EMBER_ASSIGN_OR_RETURN(char *stagingBytes, scratchBytes(ctx, block * g * es));
  const char *xs = static_cast<const char *>(x.data());
  if (codec != CommCodec::kNone) {
    EMBER_ASSIGN_OR_RETURN(
        char *wire, scratchBytes(ctx, static_cast<size_t>(x.numel()) * es));
    encodeWire(codec, x.data<float>(), reinterpret_cast<uint16_t *>(wire),
               x.numel());
    xs = wire;
  }
  std::vector<SendBuffer> sends(g);
  std::vector<RecvBuffer> recvs(g);
  for (int q = 0; q < g; ++q) {
    sends[q] = {xs + static_cast<size_t>(rowOff[q] * e) * es,
                static_cast<size_t>(batches[q] * e) * es};
    recvs[q] = {stagingBytes + q * block * es, block * es};
  }
  EMBER_RETURN_IF_ERROR(group.exchange(sends, recvs, ""));
  float *o = out->data<float>();
  if (codec != CommCodec::kNone) {
    const uint16_t *w = reinterpret_cast<const uint16_t *>(stagingBytes);
    for (size_t i = 0; i < block; ++i)
      o[i] = decodeWire(codec, w[i]);
    for (int q = 1; q < g; ++q) {
      const uint16_t *s = w + q * block;
      for (size_t i = 0; i < block; ++i) {
        float v = decodeWire(codec, s[i]);
        o[i] = isMax ? std::max(o[i], v) : o[i] + v;
      }
    }
    return Status::ok();
  }
  const float *staging = reinterpret_cast<const float *>(stagingBytes);
  std::copy(staging, staging + block, o);
  for (int q = 1; q < g; ++q) {
    const float *s = staging + q * block;
    if (isMax)
      for (size_t i = 0; i < block; ++i)
        o[i] = std::max(o[i], s[i]);
    else
      for (size_t i = 0; i < block; ++i)
        o[i] += s[i];
  }
  return Status::ok();
}

} // namespace

KernelDef reduceScatterKernel() {
  KernelDef d;
  d.name = "reduce_scatter";
  d.run = run;
  d.validate = validate;
  d.summary = "[B_total, ...] partial sums -> [B_me, ...] reduced (row-wise)";
  return d;
}

} // namespace ember::collective
