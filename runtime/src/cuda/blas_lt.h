//===- blas_lt.h - The session's cuBLASLt handle and workspace --*- C++ -*-===//
#ifndef EMBER_CUDA_BLAS_LT_H
#define EMBER_CUDA_BLAS_LT_H

#include "ember/status.h"

#include <cublasLt.h>

#include <cstddef>
#include <memory>
#include <string>

namespace ember::cuda {

/// A cuBLASLt handle and a device workspace for its matmuls, created on the
/// current device. One per session; GEMM kernels use it on their stream.
class BlasLt {
public:
  static constexpr size_t kDefaultWorkspaceBytes = size_t{32} << 20;
  static Result<std::unique_ptr<BlasLt>>
  create(size_t workspaceBytes = kDefaultWorkspaceBytes);
  ~BlasLt();
  BlasLt(const BlasLt &) = delete;
  BlasLt &operator=(const BlasLt &) = delete;

  cublasLtHandle_t handle() const { return handle_; }
  void *workspace() const { return workspace_; }
  size_t workspaceBytes() const { return workspaceBytes_; }

private:
  BlasLt() = default;
  cublasLtHandle_t handle_ = nullptr;
  void *workspace_ = nullptr;
  size_t workspaceBytes_ = 0;
};

/// Ok for CUBLAS_STATUS_SUCCESS, else an error naming `what`.
Status cublasStatus(cublasStatus_t status, const std::string &what);

} // namespace ember::cuda

#endif // EMBER_CUDA_BLAS_LT_H
