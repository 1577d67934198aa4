//===- device_error.h - Errors found by CUDA kernels ------------*- C++ -*-===//
//
// A kernel that meets bad data on the device (an id outside its table,
// offsets that go backwards, ...) must not fault and cannot return a Status.
// It records the first such problem in the run's DeviceErrorRecord (device
// memory, one per run) and goes on writing something harmless (zero rows).
// The executor reads the record when it synchronizes (at the end of a run,
// before anything is returned) and turns it into a Status naming the
// instruction and the values: no outputs are returned from a run that hit one.
//
// This header compiles with and without nvcc: raiseDeviceError is a device
// function only under nvcc; describeDeviceError is host code.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_DEVICE_ERROR_H
#define EMBER_CUDA_DEVICE_ERROR_H

#include "cuda/host_device.h"
#include "ember/status.h"

#include <cstdint>
#include <string>

namespace ember::cuda {

/// What went wrong. Each code has a fixed message (describeDeviceError) that
/// uses the record's values a, b, c, d.
enum class DeviceErrorCode : int32_t {
  kNone = 0,
  /// id a at position b (bag c) is outside a table of d rows.
  kIdOutOfRange = 1,
  /// offsets[a] = b is below offsets[a - 1] = c (bags must not go backwards).
  kOffsetsDecreasing = 2,
  /// offsets[a] = b is outside [0, c] (c = number of ids).
  kOffsetOutOfRange = 3,
  /// length a at position b is negative.
  kNegativeLength = 4,
  /// the lengths sum to a but there are b values.
  kLengthsSumMismatch = 5,
  /// index a at position b is outside [0, c) (gather, permute, ...).
  kIndexOutOfRange = 6,
  /// bag/segment a has length b, more than the limit c (e.g. padded max
  /// length).
  kLengthTooLarge = 7,
  /// offsets[0] = a, but offsets must start at 0.
  kFirstOffsetNotZero = 8,
  /// id a at position b of feature f, sample s (c = packFeatureSample(f, s))
  /// is outside a table of d rows (kjt_from_bags' num_rows).
  kFeatureIdOutOfRange = 9,
  /// feature a: offsets[b] = c is not 0 (b = 0), below offsets[b - 1], or
  /// past the feature's d ids (kjt_from_bags).
  kFeatureOffsetInvalid = 10,
};

/// A feature index and a sample index in one record value (features below
/// 2^23, samples below 2^40).
EMBER_HD_INLINE int64_t packFeatureSample(int64_t feature, int64_t sample) {
  return (feature << 40) | (sample & ((int64_t{1} << 40) - 1));
}
EMBER_HD_INLINE int64_t unpackFeature(int64_t packed) { return packed >> 40; }
EMBER_HD_INLINE int64_t unpackSample(int64_t packed) {
  return packed & ((int64_t{1} << 40) - 1);
}

/// Device memory; zero-filled at the start of every run.
struct DeviceErrorRecord {
  int32_t code;        // DeviceErrorCode; 0 = none
  int32_t instruction; // KernelEnv::instruction of the kernel that raised it
  int64_t a, b, c, d;
};

/// The message for a record (without the instruction's location).
std::string describeDeviceError(const DeviceErrorRecord &record);
/// kOutOfRange for ids and indices, kInvalidArgument for the rest.
StatusCode statusCodeOf(DeviceErrorCode code);

#ifdef __CUDACC__
/// Records the error unless an earlier one is recorded (first one wins).
__device__ inline void raiseDeviceError(DeviceErrorRecord *record,
                                        int32_t instruction,
                                        DeviceErrorCode code, int64_t a,
                                        int64_t b = 0, int64_t c = 0,
                                        int64_t d = 0) {
  if (!record)
    return;
  if (atomicCAS(&record->code, 0, static_cast<int32_t>(code)) == 0) {
    record->instruction = instruction;
    record->a = a;
    record->b = b;
    record->c = c;
    record->d = d;
  }
}
#endif

} // namespace ember::cuda

#endif // EMBER_CUDA_DEVICE_ERROR_H
