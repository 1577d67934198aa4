//===- all_reduce_layout.cpp - all_reduce's checks and chunks -------------===//
#include "comm/kernels/all_reduce_layout.h"

namespace ember::collective {

Result<AllReduceLayout> allReduceLayout(KernelContext &ctx,
                                        const Group &group) {
  const std::string &where = group.what;
  EMBER_ASSIGN_OR_RETURN(ReductionAttrs r,
                         readReductionAttrs(ctx.attrs(), where));
  AllReduceLayout layout;
  static_cast<ReductionAttrs &>(layout) = r;
  const CommCodec codec = r.codec;
  const int g = group.size();
  const Tensor &x = ctx.input(0);
  if (!x.defined() || x.dtype() != DType::kFloat32)
    return invalidArgument(where + ": x must be float32");
  const int64_t n = layout.numElements = x.numel();
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> hdr,
      group.allGatherInts({n, static_cast<int64_t>(codec)}, " (sizes)"));
  for (int q = 0; q < g; ++q)
    if (hdr[2 * q] != n || hdr[2 * q + 1] != static_cast<int64_t>(codec))
      return invalidArgument(
          where + ": group position " + std::to_string(q) + " has " +
          std::to_string(hdr[2 * q]) + " elements (comm_dtype code " +
          std::to_string(hdr[2 * q + 1]) + "), this rank " + std::to_string(n) +
          " (comm_dtype " + commCodecName(codec) + ")");
  layout.chunk.resize(g + 1);
  for (int q = 0; q <= g; ++q)
    layout.chunk[q] = n * q / g;
  return layout;
}

} // namespace ember::collective
