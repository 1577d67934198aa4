//===- device_memory.h - Device and pinned host memory ----------*- C++ -*-===//
#ifndef EMBER_CUDA_DEVICE_MEMORY_H
#define EMBER_CUDA_DEVICE_MEMORY_H

#include "executor/arena.h"

#include <cstddef>
#include <string>

namespace ember::cuda {

/// cudaMalloc / cudaFree on one device (the arenas of a CUDA run).
class DeviceMemory final : public MemoryResource {
public:
  explicit DeviceMemory(int device);
  Result<void *> allocate(size_t bytes) override;
  void deallocate(void *p) override;
  const char *name() const override { return name_.c_str(); }

private:
  int device_;
  std::string name_;
};

/// A growable pinned (page-locked) host buffer for staging copies.
class PinnedBuffer {
public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;

  /// Makes the buffer at least `bytes` long (contents are not kept).
  Status reserve(size_t bytes);
  char *data() const { return data_; }
  size_t bytes() const { return bytes_; }

private:
  char *data_ = nullptr;
  size_t bytes_ = 0;
};

} // namespace ember::cuda

#endif // EMBER_CUDA_DEVICE_MEMORY_H
