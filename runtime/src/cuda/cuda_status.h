//===- cuda_status.h - CUDA errors as ember::Status -------------*- C++ -*-===//
//
// Every CUDA runtime call of the backend goes through these: a failure
// becomes a Status naming the call and CUDA's own explanation, never an abort.
// Sticky errors (a kernel that faulted) break the device context; they are
// reported as kInternal with "the CUDA context is unusable" so callers stop.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_CUDA_STATUS_H
#define EMBER_CUDA_CUDA_STATUS_H

#include "ember/status.h"

#include <cuda_runtime_api.h>

#include <string>

namespace ember::cuda {

/// Ok for cudaSuccess, else an error naming `what` (the call, e.g.
/// "cudaMemcpyAsync(inputs)") and cudaGetErrorString.
Status cudaStatus(cudaError_t err, const std::string &what);

/// The error of the last kernel launch (cudaGetLastError), naming `kernel`.
Status launchStatus(const std::string &kernel);

} // namespace ember::cuda

#define EMBER_CUDA_RETURN_IF_ERROR(call)                                       \
  do {                                                                         \
    cudaError_t ember_cuda_err_ = (call);                                      \
    if (ember_cuda_err_ != cudaSuccess)                                        \
      return ::ember::cuda::cudaStatus(ember_cuda_err_, #call);                \
  } while (0)

#endif // EMBER_CUDA_CUDA_STATUS_H
