//===- reduce_scatter_kernel.cpp - reduce_scatter -------------------------===//
//
// inputs:  0 x [B_total, ...] float32 (rows ordered by destination position),
//          1 batch_ref (dim 0 is this rank's local batch B_me times
//          batch_ref_divisor)
// attrs:   reduce = "sum" (default) | "max", batch_ref_divisor (default 1)
// output:  [B_me, ...]: the elementwise reduction, over the group positions
//          in order 0, 1, ..., of the rows that belong to this rank
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/collective_common.h"
#include "comm/kernels/collective_kernel_defs.h"

#include <algorithm>

namespace ember::collective {

namespace {

Status validate(const Attributes &attrs, int, int) {
  EMBER_RETURN_IF_ERROR(validateBatchRefDivisor(attrs));
  return reduceIsMax(attrs).status();
}

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  const int g = group.size(), me = group.position;
  auto isMax = reduceIsMax(ctx.attrs());
  if (!isMax)
    return isMax.status().withContext(where);
  const Tensor &x = ctx.input(0), &ref = ctx.input(1);
  if (!x.defined() || x.rank() < 1 || x.dtype() != DType::kFloat32)
    return invalidArgument(where + ": x must be float32 of rank >= 1, not " +
                           (x.defined() ? x.describe() : "absent"));
  EMBER_ASSIGN_OR_RETURN(const int64_t bMe, localBatch(ctx, ref, where));
  const int64_t e = rowElements(x);
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> hdr,
                         group.allGatherInts({bMe, e}, " (batch sizes)"));
  std::vector<int64_t> batches(g);
  for (int q = 0; q < g; ++q) {
    batches[q] = hdr[2 * q];
    if (hdr[2 * q + 1] != e)
      return invalidArgument(where + ": group position " + std::to_string(q) +
                             " has rows of " + std::to_string(hdr[2 * q + 1]) +
                             " elements, this rank " + std::to_string(e));
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
  const size_t block = static_cast<size_t>(bMe * e);
  EMBER_ASSIGN_OR_RETURN(char *stagingBytes,
                         scratchBytes(ctx, block * g * sizeof(float)));
  float *staging = reinterpret_cast<float *>(stagingBytes);
  const float *xs = x.data<float>();
  std::vector<SendBuffer> sends(g);
  std::vector<RecvBuffer> recvs(g);
  for (int q = 0; q < g; ++q) {
    sends[q] = {xs + rowOff[q] * e,
                static_cast<size_t>(batches[q] * e) * sizeof(float)};
    recvs[q] = {staging + q * block, block * sizeof(float)};
  }
  (void)me;
  EMBER_RETURN_IF_ERROR(group.exchange(sends, recvs, ""));
  float *o = out->data<float>();
  std::copy(staging, staging + block, o);
  for (int q = 1; q < g; ++q) {
    const float *s = staging + q * block;
    if (*isMax)
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
  d.collectiveKind = static_cast<int>(CollectiveInfo::Kind::kReduceScatter);
  d.minInputs = d.maxInputs = 2;
  d.summary = "[B_total, ...] partial sums -> [B_me, ...] reduced (row-wise)";
  return d;
}

} // namespace ember::collective
