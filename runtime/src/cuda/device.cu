//===- device.cu - CUDA device discovery ----------------------------------===//
#include "cuda/device.h"

#include <cuda_runtime_api.h>

namespace ember::cuda {

Result<std::vector<DeviceInfo>> listDevices() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    std::string why = cudaGetErrorString(err);
    cudaGetLastError(); // clear the sticky error for later calls
    return unavailable("no usable CUDA device: cudaGetDeviceCount failed: " + why);
  }
  if (count == 0)
    return unavailable("no CUDA device is visible to this process");
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop;
    err = cudaGetDeviceProperties(&prop, i);
    if (err != cudaSuccess)
      return unavailable("cudaGetDeviceProperties(" + std::to_string(i) +
                         ") failed: " + cudaGetErrorString(err));
    DeviceInfo info;
    info.index = i;
    info.name = prop.name;
    info.computeCapabilityMajor = prop.major;
    info.computeCapabilityMinor = prop.minor;
    info.totalMemoryBytes = prop.totalGlobalMem;
    info.multiprocessors = prop.multiProcessorCount;
    devices.push_back(std::move(info));
  }
  return devices;
}

bool isSupported(const DeviceInfo &device) {
  return device.computeCapabilityMajor >= 8;
}

} // namespace ember::cuda
