//===- device_error.cpp - Errors found by CUDA kernels --------------------===//
#include "cuda/device_error.h"

namespace ember::cuda {

namespace {
std::string s(int64_t v) { return std::to_string(v); }
} // namespace

std::string describeDeviceError(const DeviceErrorRecord &r) {
  switch (static_cast<DeviceErrorCode>(r.code)) {
  case DeviceErrorCode::kNone:
    return "no error";
  case DeviceErrorCode::kIdOutOfRange:
    return "id " + s(r.a) + " at position " + s(r.b) + " (bag " + s(r.c) +
           ") is out of range for a table of " + s(r.d) + " rows";
  case DeviceErrorCode::kOffsetsDecreasing:
    return "offsets[" + s(r.a) + "] = " + s(r.b) + " is below offsets[" +
           s(r.a - 1) + "] = " + s(r.c) + ": offsets must not decrease";
  case DeviceErrorCode::kOffsetOutOfRange:
    return "offsets[" + s(r.a) + "] = " + s(r.b) + " is outside [0, " + s(r.c) +
           "] (the number of ids)";
  case DeviceErrorCode::kNegativeLength:
    return "length " + s(r.a) + " at position " + s(r.b) + " is negative";
  case DeviceErrorCode::kLengthsSumMismatch:
    return "the lengths sum to " + s(r.a) + " but there are " + s(r.b) +
           " values";
  case DeviceErrorCode::kIndexOutOfRange:
    return "index " + s(r.a) + " at position " + s(r.b) + " is outside [0, " +
           s(r.c) + ")";
  case DeviceErrorCode::kLengthTooLarge:
    return "segment " + s(r.a) + " has length " + s(r.b) +
           ", more than the limit " + s(r.c);
  case DeviceErrorCode::kFirstOffsetNotZero:
    return "offsets[0] must be 0, got " + s(r.a);
  case DeviceErrorCode::kFeatureIdOutOfRange:
    return "feature " + s(unpackFeature(r.c)) + ": id " + s(r.a) +
           " at position " + s(r.b) + " (sample " + s(unpackSample(r.c)) +
           ") is outside the table's " + s(r.d) + " rows";
  case DeviceErrorCode::kFeatureOffsetInvalid:
    if (r.b == 0)
      return "feature " + s(r.a) + ": offsets[0] must be 0, got " + s(r.c);
    if (r.c > r.d)
      return "feature " + s(r.a) + ": offsets[" + s(r.b) + "] = " + s(r.c) +
             " (end of bag " + s(r.b - 1) + ") is past the " + s(r.d) +
             " indices";
    return "feature " + s(r.a) + ": offsets decrease at bag " + s(r.b - 1) +
           " (offsets[" + s(r.b) + "] = " + s(r.c) +
           " is below the offset before it)";
  }
  return "unknown device error code " + s(r.code) + " (values " + s(r.a) +
         ", " + s(r.b) + ", " + s(r.c) + ", " + s(r.d) + ")";
}

StatusCode statusCodeOf(DeviceErrorCode code) {
  switch (code) {
  case DeviceErrorCode::kIdOutOfRange:
  case DeviceErrorCode::kOffsetOutOfRange:
  case DeviceErrorCode::kIndexOutOfRange:
  case DeviceErrorCode::kFeatureIdOutOfRange:
    return StatusCode::kOutOfRange;
  default:
    return StatusCode::kInvalidArgument;
  }
}

} // namespace ember::cuda
