//===- device_memory.cpp - Device and pinned host memory ------------------===//
#include "cuda/device_memory.h"

#include "cuda/cuda_status.h"

#include <cuda_runtime_api.h>

namespace ember::cuda {

DeviceMemory::DeviceMemory(int device)
    : device_(device), name_("cuda:" + std::to_string(device)) {}

Result<void *> DeviceMemory::allocate(size_t bytes) {
  void *p = nullptr;
  EMBER_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  cudaError_t err = cudaMalloc(&p, bytes == 0 ? 64 : bytes);
  if (err != cudaSuccess)
    return cudaStatus(err, "cudaMalloc(" + std::to_string(bytes) +
                               " bytes) on " + name_);
  return p;
}

void DeviceMemory::deallocate(void *p) {
  if (p)
    cudaFree(p);
}

PinnedBuffer::~PinnedBuffer() {
  if (data_)
    cudaFreeHost(data_);
}

Status PinnedBuffer::reserve(size_t bytes) {
  if (bytes <= bytes_)
    return Status::ok();
  size_t grown = bytes_ * 2 > bytes ? bytes_ * 2 : bytes;
  grown = (grown + 4095) / 4096 * 4096;
  if (data_)
    cudaFreeHost(data_);
  data_ = nullptr;
  bytes_ = 0;
  void *p = nullptr;
  cudaError_t err = cudaMallocHost(&p, grown);
  if (err != cudaSuccess)
    return cudaStatus(err, "cudaMallocHost(" + std::to_string(grown) +
                               " bytes of pinned staging memory)");
  data_ = static_cast<char *>(p);
  bytes_ = grown;
  return Status::ok();
}

} // namespace ember::cuda
