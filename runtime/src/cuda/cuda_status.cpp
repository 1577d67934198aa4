//===- cuda_status.cpp - CUDA errors as ember::Status ---------------------===//
#include "cuda/cuda_status.h"

namespace ember::cuda {

namespace {

bool isStickyError(cudaError_t err) {
  switch (err) {
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorMisalignedAddress:
  case cudaErrorIllegalInstruction:
  case cudaErrorHardwareStackError:
  case cudaErrorInvalidPc:
  case cudaErrorAssert:
    return true;
  default:
    return false;
  }
}

} // namespace

Status cudaStatus(cudaError_t err, const std::string &what) {
  if (err == cudaSuccess)
    return Status::ok();
  std::string message = what + " failed: " + cudaGetErrorName(err) + " (" +
                        cudaGetErrorString(err) + ")";
  const bool sticky = isStickyError(err);
  if (!sticky)
    cudaGetLastError(); // clear it so that later calls are not blamed
  switch (err) {
  case cudaErrorMemoryAllocation:
    return resourceExhausted(message + " - out of device memory");
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver:
  case cudaErrorInvalidDevice:
  case cudaErrorDevicesUnavailable:
    return unavailable(message);
  default:
    break;
  }
  if (sticky)
    return internalError(message + "; the CUDA context is unusable");
  return internalError(message);
}

Status launchStatus(const std::string &kernel) {
  cudaError_t err = cudaGetLastError();
  return cudaStatus(err, "launching CUDA kernel " + kernel);
}

} // namespace ember::cuda
