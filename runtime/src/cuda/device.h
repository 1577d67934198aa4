//===- device.h - CUDA device discovery -------------------------*- C++ -*-===//
//
// Built only when the CUDA backend is (EMBER_ENABLE_CUDA). Uses the CUDA
// runtime API alone; the driver library is never linked, so binaries start on
// machines without a GPU and report why there is none.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_DEVICE_H
#define EMBER_CUDA_DEVICE_H

#include "ember/status.h"

#include <string>
#include <vector>

namespace ember::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int computeCapabilityMajor = 0;
  int computeCapabilityMinor = 0;
  size_t totalMemoryBytes = 0;
  int multiprocessors = 0;
};

/// The CUDA devices this process can use, or Unavailable with the CUDA
/// runtime's own explanation (no driver, no device, ...).
Result<std::vector<DeviceInfo>> listDevices();

/// Whether this build's kernels can run on the device (sm_80 and newer).
bool isSupported(const DeviceInfo &device);

} // namespace ember::cuda

#endif // EMBER_CUDA_DEVICE_H
