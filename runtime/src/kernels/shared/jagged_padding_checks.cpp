//===- jagged_padding_checks.cpp - Host checks of jagged<->padded ---------===//
#include "kernels/shared/jagged_padding_checks.h"

#include "kernels/shared/jagged_index.h"
#include "kernels/shared/kjt_kernel_attrs.h"

namespace ember::jagged {

Status checkOffsetsInput(const Tensor &offsets, const std::string &where) {
  EMBER_RETURN_IF_ERROR(checkIndexVector(offsets, "input 1 (offsets)", where));
  if (offsets.numel() < 1)
    return errorAt(StatusCode::kInvalidArgument, where,
                   "offsets must have B + 1 >= 1 entries, got none");
  return Status::ok();
}

Result<JaggedToPaddedAttrs>
checkJaggedToPaddedInputs(KernelContext &ctx, const std::string &where) {
  auto maxLengthOr = readMaxLength(ctx.attrs());
  if (!maxLengthOr.isOk())
    return maxLengthOr.status().withContext(where);
  auto padOr = ctx.attrs().getFloat("padding_value");
  if (!padOr.isOk())
    return padOr.status().withContext(where);
  const Tensor &values = ctx.input(0);
  if (!values.defined() || values.rank() < 1)
    return errorAt(StatusCode::kInvalidArgument, where,
                   "input 0 (values) must be at least 1-D [N, D...]");
  if (values.rank() + 1 > Shape::kMaxRank)
    return errorAt(StatusCode::kInvalidArgument, where,
                   "input 0 (values) " + values.describe() +
                       " has too many dims");
  JaggedToPaddedAttrs a;
  a.maxLength = *maxLengthOr;
  a.paddingValue = *padOr;
  return a;
}

Status checkPaddedInput(const Tensor &padded, const std::string &where) {
  if (!padded.defined() || padded.rank() < 2)
    return errorAt(
        StatusCode::kInvalidArgument, where,
        "input 0 (padded) must be at least 2-D [B, L, D...], got " +
            (padded.defined() ? padded.describe() : std::string("none")));
  return Status::ok();
}

Status checkOffsetsMatchPadded(int64_t numOffsets, int64_t batch,
                               const std::string &where) {
  if (numOffsets != batch + 1)
    return errorAt(StatusCode::kInvalidArgument, where,
                   "offsets has " + std::to_string(numOffsets) +
                       " entries but padded has " + std::to_string(batch) +
                       " rows (expected B + 1)");
  return Status::ok();
}

} // namespace ember::jagged
