//===- blas_lt.cpp - The session's cuBLASLt handle and workspace ----------===//
#include "cuda/blas_lt.h"

#include "cuda/cuda_status.h"

#include <cuda_runtime_api.h>

namespace ember::cuda {

Status cublasStatus(cublasStatus_t status, const std::string &what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  std::string message = what + " failed: cuBLAS status " +
                        std::to_string(static_cast<int>(status));
  switch (status) {
  case CUBLAS_STATUS_ALLOC_FAILED:
    return resourceExhausted(message + " (allocation failed)");
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return unimplemented(message + " (not supported)");
  case CUBLAS_STATUS_INVALID_VALUE:
    return invalidArgument(message + " (invalid value)");
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return failedPrecondition(message + " (not supported on this GPU)");
  default:
    return internalError(message);
  }
}

Result<std::unique_ptr<BlasLt>> BlasLt::create(size_t workspaceBytes) {
  std::unique_ptr<BlasLt> lt(new BlasLt());
  EMBER_RETURN_IF_ERROR(
      cublasStatus(cublasLtCreate(&lt->handle_), "cublasLtCreate"));
  if (workspaceBytes > 0) {
    EMBER_CUDA_RETURN_IF_ERROR(cudaMalloc(&lt->workspace_, workspaceBytes));
    lt->workspaceBytes_ = workspaceBytes;
  }
  return lt;
}

BlasLt::~BlasLt() {
  if (workspace_)
    cudaFree(workspace_);
  if (handle_)
    cublasLtDestroy(handle_);
}

} // namespace ember::cuda
