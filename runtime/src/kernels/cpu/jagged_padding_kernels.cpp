//===- jagged_padding_kernels.cpp - jagged_to_padded, padded_to_jagged ----===//
//
// jagged_to_padded: values [N, D...], offsets [B+1]; attrs max_length,
//   padding_value (default 0) -> [B, max_length, D...]. Rows longer than
//   max_length are truncated, shorter ones padded.
// jagged_sum: values [N, D...] float32, offsets [B+1]; attr max_length ->
//   [B, D...]: row b is the sum of its first min(len_b, max_length) values
//   (accumulated in double, in order: reduce_sum over jagged_to_padded with
//   zero padding, without the padded tensor).
// padded_to_jagged: padded [B, L, D...], offsets [B+1] -> values
//   [offsets[B], D...]; a row longer than L is an error.
// Element types: float32, float64, float16, bfloat16, int8, uint8, int32,
// int64, bool (the padding value is converted to the element type).
// Offsets (int32/int64) must start at 0 and be non-decreasing.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/jagged_kernel_defs.h"
#include "kernels/kernel_context.h"
#include "kernels/shared/jagged_index.h"
#include "kernels/shared/jagged_padding_checks.h"
#include "kernels/shared/kjt_kernel_attrs.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ember::jagged {

std::vector<uint8_t> paddingBytes(double value, DType dtype) {
  std::vector<uint8_t> bytes(dtypeSize(dtype));
  auto put = [&](auto v) { std::memcpy(bytes.data(), &v, sizeof v); };
  switch (dtype) {
  case DType::kFloat32:
    put(static_cast<float>(value));
    break;
  case DType::kFloat64:
    put(value);
    break;
  case DType::kFloat16:
    put(floatToHalf(static_cast<float>(value)));
    break;
  case DType::kBFloat16:
    put(floatToBFloat16(static_cast<float>(value)));
    break;
  case DType::kInt8:
    put(static_cast<int8_t>(value));
    break;
  case DType::kUInt8:
    put(static_cast<uint8_t>(value));
    break;
  case DType::kInt32:
    put(static_cast<int32_t>(value));
    break;
  case DType::kInt64:
    put(static_cast<int64_t>(value));
    break;
  case DType::kBool:
    put(static_cast<uint8_t>(value != 0.0));
    break;
  }
  return bytes;
}

Result<int64_t> readMaxLength(const Attributes &attrs) {
  EMBER_ASSIGN_OR_RETURN(int64_t maxLength, attrs.getInt("max_length"));
  if (maxLength < 0)
    return invalidArgument("attribute 'max_length' must be >= 0, got " +
                           std::to_string(maxLength));
  return maxLength;
}

namespace {

/// Reads offsets [B+1] into int64, checking offsets[0] = 0 and
/// non-decreasing; `limit` (>= 0) bounds the last one.
Status readOffsets(const Tensor &offsets, int64_t limit,
                   std::vector<int64_t> &out, const std::string &where) {
  EMBER_RETURN_IF_ERROR(checkOffsetsInput(offsets, where));
  out.resize(offsets.numel());
  for (int64_t i = 0; i < offsets.numel(); ++i) {
    out[i] = indexAt(offsets, i);
    if (i == 0 && out[0] != 0)
      return errorAt(StatusCode::kInvalidArgument, where,
                     "offsets[0] must be 0, got " + std::to_string(out[0]));
    if (i > 0 && out[i] < out[i - 1])
      return errorAt(StatusCode::kInvalidArgument, where,
                     "offsets decrease at row " + std::to_string(i - 1) + ": " +
                         std::to_string(out[i - 1]) + " > " +
                         std::to_string(out[i]));
    if (limit >= 0 && out[i] > limit)
      return errorAt(StatusCode::kOutOfRange, where,
                     "offsets[" + std::to_string(i) +
                         "] = " + std::to_string(out[i]) + " is past the " +
                         std::to_string(limit) + " values");
  }
  return Status::ok();
}

Status validateToPadded(const Attributes &attrs, int, int) {
  EMBER_RETURN_IF_ERROR(readMaxLength(attrs).status());
  return attrs.getFloat("padding_value").status();
}

Status runToPadded(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(JaggedToPaddedAttrs attrs,
                         checkJaggedToPaddedInputs(ctx, where));
  const int64_t L = attrs.maxLength;
  const Tensor &values = ctx.input(0);
  std::vector<int64_t> offsets;
  EMBER_RETURN_IF_ERROR(
      readOffsets(ctx.input(1), values.dim(0), offsets, where));
  const int64_t B = static_cast<int64_t>(offsets.size()) - 1;
  std::vector<int64_t> dims = {B, L};
  for (int i = 1; i < values.rank(); ++i)
    dims.push_back(values.dim(i));
  EMBER_ASSIGN_OR_RETURN(Shape shape,
                         Shape::fromDims(dims.data(), dims.size()));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, values.dtype(), shape));
  size_t rowBytes = dtypeSize(values.dtype());
  for (int i = 1; i < values.rank(); ++i)
    rowBytes *= values.dim(i);
  const std::vector<uint8_t> pad =
      paddingBytes(attrs.paddingValue, values.dtype());
  const size_t elem = pad.size();
  const uint8_t *src = values.data<uint8_t>();
  uint8_t *dst = out->data<uint8_t>();
  // One padded row of the padding value (memset when its bytes are zero),
  // copied whole into every padded position.
  const bool zeroPad =
      std::all_of(pad.begin(), pad.end(), [](uint8_t v) { return v == 0; });
  std::vector<uint8_t> padRow;
  if (!zeroPad) {
    padRow.resize(rowBytes);
    for (size_t at = 0; at < rowBytes; at += elem)
      std::memcpy(padRow.data() + at, pad.data(), elem);
  }
  for (int64_t b = 0; b < B; ++b) {
    int64_t len = std::min(L, offsets[b + 1] - offsets[b]);
    uint8_t *row = dst + b * L * rowBytes;
    if (len > 0)
      std::memcpy(row, src + offsets[b] * rowBytes, len * rowBytes);
    if (zeroPad) {
      std::memset(row + len * rowBytes, 0, (L - len) * rowBytes);
      continue;
    }
    for (int64_t r = len; r < L; ++r)
      std::memcpy(row + r * rowBytes, padRow.data(), rowBytes);
  }
  return Status::ok();
}

Status validateSum(const Attributes &attrs, int, int) {
  return readMaxLength(attrs).status();
}

Status runSum(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(int64_t L, readMaxLength(ctx.attrs()));
  const Tensor &values = ctx.input(0);
  if (values.dtype() != DType::kFloat32 || values.rank() < 1)
    return errorAt(StatusCode::kInvalidArgument, where,
                   "values must be float32 [N, D...], got " +
                       values.describe());
  std::vector<int64_t> offsets;
  EMBER_RETURN_IF_ERROR(
      readOffsets(ctx.input(1), values.dim(0), offsets, where));
  const int64_t B = static_cast<int64_t>(offsets.size()) - 1;
  std::vector<int64_t> dims = {B};
  int64_t width = 1;
  for (int i = 1; i < values.rank(); ++i) {
    dims.push_back(values.dim(i));
    width *= values.dim(i);
  }
  EMBER_ASSIGN_OR_RETURN(Shape shape,
                         Shape::fromDims(dims.data(), dims.size()));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, DType::kFloat32, shape));
  const float *in = values.data<float>();
  float *o = out->data<float>();
  std::vector<double> acc(static_cast<size_t>(width));
  for (int64_t b = 0; b < B; ++b) {
    std::fill(acc.begin(), acc.end(), 0.0);
    int64_t end = std::min(offsets[b + 1], offsets[b] + L);
    for (int64_t r = offsets[b]; r < end; ++r) {
      const float *row = in + r * width;
      for (int64_t c = 0; c < width; ++c)
        acc[c] += row[c];
    }
    for (int64_t c = 0; c < width; ++c)
      o[b * width + c] = static_cast<float>(acc[c]);
  }
  return Status::ok();
}

Status runToJagged(KernelContext &ctx) {
  const std::string where = ctx.location();
  const Tensor &padded = ctx.input(0);
  EMBER_RETURN_IF_ERROR(checkPaddedInput(padded, where));
  std::vector<int64_t> offsets;
  EMBER_RETURN_IF_ERROR(readOffsets(ctx.input(1), -1, offsets, where));
  const int64_t B = padded.dim(0), L = padded.dim(1);
  EMBER_RETURN_IF_ERROR(
      checkOffsetsMatchPadded(static_cast<int64_t>(offsets.size()), B, where));
  size_t rowBytes = dtypeSize(padded.dtype());
  std::vector<int64_t> dims = {offsets[B]};
  for (int i = 2; i < padded.rank(); ++i) {
    dims.push_back(padded.dim(i));
    rowBytes *= padded.dim(i);
  }
  for (int64_t b = 0; b < B; ++b)
    if (offsets[b + 1] - offsets[b] > L)
      return errorAt(StatusCode::kInvalidArgument, where,
                     "row " + std::to_string(b) + " has length " +
                         std::to_string(offsets[b + 1] - offsets[b]) +
                         ", longer than the padded length " +
                         std::to_string(L));
  EMBER_ASSIGN_OR_RETURN(Shape shape,
                         Shape::fromDims(dims.data(), dims.size()));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, padded.dtype(), shape));
  const uint8_t *src = padded.data<uint8_t>();
  uint8_t *dst = out->data<uint8_t>();
  for (int64_t b = 0; b < B; ++b) {
    int64_t len = offsets[b + 1] - offsets[b];
    if (len > 0)
      std::memcpy(dst + offsets[b] * rowBytes, src + b * L * rowBytes,
                  len * rowBytes);
  }
  return Status::ok();
}

} // namespace

KernelEntry jaggedToPaddedKernelEntry() {
  return {"jagged_to_padded", runToPadded, validateToPadded,
          "jagged values [N, D...] + offsets [B+1] -> padded [B, max_length, "
          "D...]"};
}

KernelEntry jaggedSumKernelEntry() {
  return {"jagged_sum", runSum, validateSum,
          "jagged values [N, D...] + offsets [B+1] -> [B, D...]: the "
          "sum of each row's first max_length values"};
}

KernelEntry paddedToJaggedKernelEntry() {
  return {"padded_to_jagged", runToJagged, nullptr,
          "padded [B, L, D...] + offsets [B+1] -> jagged values [N, D...]"};
}

} // namespace ember::jagged
