//===- kernel_env.h - What a CUDA kernel sees of its device -----*- C++ -*-===//
//
// KernelContext::gpu() returns this for instructions that run on the CUDA
// backend (nullptr on the CPU backend). Conventions for CUDA kernels:
//   - every input, output and scratch tensor of the context is DEVICE memory
//     (outputs and scratch come from the run's device arena; constants were
//     uploaded once at load);
//   - work is enqueued on `stream` and never synchronized, except by kernels
//     whose output shape depends on device data: they copy the few values
//     they need through `hostStaging` (pinned) and synchronize `stream`;
//   - bad data found on the device is recorded with raiseDeviceError(errors,
//     instruction, ...) (device_error.h) and the kernel writes zeros instead;
//   - BoundsCheckMode::kWarning counts replaced ids with atomicAdd on
//     `invalidIds`; kIgnore replaces them silently (a GPU never reads past a
//     table: out-of-range rows are zero rows on every mode);
//   - host-side checks (shapes, dtypes, attributes) return a Status as on the
//     CPU backend.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_KERNEL_ENV_H
#define EMBER_CUDA_KERNEL_ENV_H

#include "cuda/device_error.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace ember {
class NcclCommunicator; // runtime/src/comm/nccl/nccl_communicator.h
}

namespace ember::cuda {

class BlasLt;

struct KernelEnv {
  int device = 0;
  int multiprocessors = 1;
  int computeCapability = 90; // major * 10 + minor
  cudaStream_t stream = nullptr;
  /// The index of the running instruction, for raiseDeviceError.
  int32_t instruction = 0;
  DeviceErrorRecord *errors = nullptr;      // device memory
  unsigned long long *invalidIds = nullptr; // device memory
  /// Pinned host memory for reading back small values (sizes) that decide an
  /// output's shape; `hostStagingBytes` long, valid until the kernel returns.
  void *hostStaging = nullptr;
  size_t hostStagingBytes = 0;
  /// cuBLASLt handle and workspace of the session (gemm.h).
  BlasLt *blas = nullptr;
  /// The session's NCCL communicator (multi-rank CUDA sessions), else
  /// nullptr; KernelContext::communicator() is the host (Gloo) one, for
  /// exchanging small host values such as counts.
  NcclCommunicator *nccl = nullptr;
};

} // namespace ember::cuda

#endif // EMBER_CUDA_KERNEL_ENV_H
