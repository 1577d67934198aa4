//===- all_reduce_kernel.cpp - all_reduce ---------------------------------===//
//
// input:   0 x (float32, the same shape on every rank)
// attrs:   reduce = "sum" (default) | "max"
// output:  x's shape: the elementwise reduction over the group
//
// A reduce-scatter of near-equal chunks (position p reduces chunk p over the
// positions in order 0, 1, ...) and an all-gather of the reduced chunks: every
// rank gets bit-identical results.
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/collective_common.h"
#include "comm/kernels/collective_kernel_defs.h"

#include <algorithm>

namespace ember::collective {

namespace {

Status validate(const Attributes &attrs, int, int) {
  return reduceIsMax(attrs).status();
}

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  const int g = group.size(), me = group.position;
  auto isMax = reduceIsMax(ctx.attrs());
  if (!isMax)
    return isMax.status().withContext(where);
  const Tensor &x = ctx.input(0);
  if (!x.defined() || x.dtype() != DType::kFloat32)
    return invalidArgument(where + ": x must be float32");
  const int64_t n = x.numel();
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> hdr,
                         group.allGatherInts({n}, " (sizes)"));
  for (int q = 0; q < g; ++q)
    if (hdr[q] != n)
      return invalidArgument(where + ": group position " + std::to_string(q) +
                             " has " + std::to_string(hdr[q]) +
                             " elements, this rank " + std::to_string(n));
  std::vector<int64_t> chunk(g + 1);
  for (int q = 0; q <= g; ++q)
    chunk[q] = n * q / g;
  const int64_t mine = chunk[me + 1] - chunk[me];
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, DType::kFloat32, x.shape()));
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
    if (*isMax)
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
  d.collectiveKind = static_cast<int>(CollectiveInfo::Kind::kAllReduce);
  d.minInputs = d.maxInputs = 1;
  d.summary = "elementwise sum/max over the group (same shape everywhere)";
  return d;
}

} // namespace ember::collective
