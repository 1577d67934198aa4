//===- jagged_lengths_to_offsets_kernel.cpp - lengths_to_offsets ----------===//
//
// input: lengths [K] int32/int64 -> offsets [K+1] int64, the exclusive
// cumulative sum (offsets[0] = 0). A negative length is an error.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/jagged_kernel_defs.h"
#include "kernels/kernel_context.h"
#include "kernels/shared/jagged_index.h"

namespace ember::jagged {

namespace {

Status run(KernelContext &ctx) {
  const std::string where = ctx.location();
  const Tensor &lengths = ctx.input(0);
  EMBER_RETURN_IF_ERROR(checkIndexVector(lengths, "input 0 (lengths)", where));
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out,
      ctx.allocateOutput(0, DType::kInt64, {lengths.numel() + 1}));
  return lengthsToOffsets(lengths, out->data<int64_t>(), "lengths", where);
}

} // namespace

KernelEntry lengthsToOffsetsKernelEntry() {
  return {"lengths_to_offsets", run, nullptr,
          "exclusive cumulative sum of lengths [K] into int64 offsets [K+1]"};
}

} // namespace ember::jagged
