//===- all_reduce_kernel.cpp - all_reduce ---------------------------------===//
//
// input:   0 x (float32, the same shape on every rank)
// attrs:   reduce = "sum" (default) | "max", comm_dtype = "float32"
//          (default) | "float16" | "bfloat16" (both steps send 16-bit values;
//          the reduction is in float32, comm_codec.h)
// output:  x's shape: the elementwise reduction over the group
//
// A reduce-scatter of near-equal chunks (position p reduces chunk p over the
// positions in order 0, 1, ...) and an all-gather of the reduced chunks: every
// rank gets bit-identical results.
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/all_reduce_layout.h"
#include "comm/kernels/collective_common.h"
#include "comm/kernels/collective_kernel_defs.h"
#include "comm/kernels/comm_codec.h"

#include <algorithm>

namespace ember::collective {

namespace {

Status validate(const Attributes &attrs, int, int) {
  EMBER_RETURN_IF_ERROR(commCodec(attrs).status());
  return reduceIsMax(attrs).status();
}

/// all_reduce with a 16-bit codec: the chunks travel as wire values, the
/// owner reduces them in float32 and sends its chunk, rounded again, to all.
Status runWithCodec(KernelContext &ctx, const Group &group, CommCodec codec,
                    bool isMax, const std::vector<int64_t> &chunk,
                    Tensor &out) {
  const int g = group.size(), me = group.position;
  const Tensor &x = ctx.input(0);
  const int64_t n = x.numel(), mine = chunk[me + 1] - chunk[me];
  const size_t es = sizeof(uint16_t);
  EMBER_ASSIGN_OR_RETURN(char *wireX,
                         scratchBytes(ctx, static_cast<size_t>(n) * es));
  EMBER_ASSIGN_OR_RETURN(char *staging,
                         scratchBytes(ctx, static_cast<size_t>(mine * g) * es));
  EMBER_ASSIGN_OR_RETURN(char *wireOut,
                         scratchBytes(ctx, static_cast<size_t>(n) * es));
  uint16_t *wx = reinterpret_cast<uint16_t *>(wireX);
  uint16_t *st = reinterpret_cast<uint16_t *>(staging);
  uint16_t *wo = reinterpret_cast<uint16_t *>(wireOut);
  encodeWire(codec, x.data<float>(), wx, n);
  std::vector<SendBuffer> sends(g);
  std::vector<RecvBuffer> recvs(g);
  for (int q = 0; q < g; ++q) {
    sends[q] = {wx + chunk[q],
                static_cast<size_t>(chunk[q + 1] - chunk[q]) * es};
    recvs[q] = {st + q * mine, static_cast<size_t>(mine) * es};
  }
  EMBER_RETURN_IF_ERROR(group.exchange(sends, recvs, " (reduce)"));
  float *o = out.data<float>();
  float *reduced = o + chunk[me];
  for (int64_t i = 0; i < mine; ++i) {
    float acc = decodeWire(codec, st[i]);
    for (int q = 1; q < g; ++q) {
      float v = decodeWire(codec, st[q * mine + i]);
      acc = isMax ? std::max(acc, v) : acc + v;
    }
    reduced[i] = acc;
  }
  encodeWire(codec, reduced, wo + chunk[me], mine);
  for (int q = 0; q < g; ++q) {
    sends[q] = {wo + chunk[me], static_cast<size_t>(mine) * es};
    recvs[q] = {wo + chunk[q],
                static_cast<size_t>(chunk[q + 1] - chunk[q]) * es};
  }
  EMBER_RETURN_IF_ERROR(group.exchange(sends, recvs, " (gather)"));
  for (int64_t i = 0; i < n; ++i)
    o[i] = decodeWire(codec, wo[i]);
  return Status::ok();
}

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const int g = group.size(), me = group.position;
  EMBER_ASSIGN_OR_RETURN(AllReduceLayout layout, allReduceLayout(ctx, group));
  const std::vector<int64_t> &chunk = layout.chunk;
  const CommCodec codec = layout.codec;
  const bool isMax = layout.isMax;
  const Tensor &x = ctx.input(0);
  const int64_t mine = chunk[me + 1] - chunk[me];
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, DType::kFloat32, x.shape()));
  if (codec != CommCodec::kNone)
    return runWithCodec(ctx, group, codec, isMax, chunk, *out);
  EMBER_ASSIGN_OR_RETURN(
      char *stagingBytes,
      scratchBytes(ctx, static_cast<size_t>(mine * g) * sizeof(float)));
  float *staging = reinterpret_cast<float *>(stagingBytes);
  const float *xs = x.data<float>();
  float *o = out->data<float>();
  std::vector<SendBuffer> sends(g);
  std::vector<RecvBuffer> recvs(g);
  for (int q = 0; q < g; ++q) {
    sends[q] = {xs + chunk[q],
                static_cast<size_t>(chunk[q + 1] - chunk[q]) * sizeof(float)};
    recvs[q] = {staging + q * mine, static_cast<size_t>(mine) * sizeof(float)};
  }
  EMBER_RETURN_IF_ERROR(group.exchange(sends, recvs, " (reduce)"));
  float *reduced = o + chunk[me];
  std::copy(staging, staging + mine, reduced);
  for (int q = 1; q < g; ++q) {
    const float *s = staging + q * mine;
    if (isMax)
      for (int64_t i = 0; i < mine; ++i)
        reduced[i] = std::max(reduced[i], s[i]);
    else
      for (int64_t i = 0; i < mine; ++i)
        reduced[i] += s[i];
  }
  for (int q = 0; q < g; ++q) {
    sends[q] = {reduced, static_cast<size_t>(mine) * sizeof(float)};
    recvs[q] = {o + chunk[q],
                static_cast<size_t>(chunk[q + 1] - chunk[q]) * sizeof(float)};
  }
  return group.exchange(sends, recvs, " (gather)");
}

} // namespace

KernelDef allReduceKernel() {
  KernelDef d;
  d.name = "all_reduce";
  d.run = run;
  d.validate = validate;
  d.summary = "elementwise sum/max over the group (same shape everywhere)";
  return d;
}

} // namespace ember::collective
