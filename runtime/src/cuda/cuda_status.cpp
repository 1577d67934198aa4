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
  if (isStickyError(err))
    return internalError(message + "; the CUDA context is unusable");
  cudaGetLastError(); // clear a non-sticky error so later calls are not blamed
  return internalError(message);
}

Status launchStatus(const std::string &kernel) {
  cudaError_t err = cudaGetLastError();
  return cudaStatus(err, "launching CUDA kernel " + kernel);
}

} // namespace ember::cuda
