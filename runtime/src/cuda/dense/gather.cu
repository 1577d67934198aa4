//===- gather.cu - gather / gather_elements CUDA kernels ------------------===//
#include "cuda/cuda_status.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/gather_device.cuh"
#include "cuda/device_error.h"

namespace ember::cuda::dense {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void gatherKernel(const T *data, const void *indices, bool wide,
                             int64_t n, int64_t inner, int64_t axisDim, T *out,
                             int64_t total, DeviceErrorRecord *errors,
                             int32_t instruction) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       u < total; u += stride) {
    int64_t bad, pos;
    if (!gatherElement<T>(data, indices, wide, n, inner, axisDim, out, u, bad,
                          pos))
      raiseDeviceError(errors, instruction, DeviceErrorCode::kIndexOutOfRange,
                       bad, pos, axisDim);
  }
}

struct Dims {
  int64_t dims[8];
  int64_t strides[8];
};

template <typename T>
__global__ void
gatherElementsKernel(const T *data, const void *indices, bool wide, Dims d,
                     int rank, int axis, int64_t axisDim, T *out, int64_t total,
                     DeviceErrorRecord *errors, int32_t instruction) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       u < total; u += stride) {
    int64_t bad;
    if (!gatherElementsElement<T>(data, indices, wide, d.dims, d.strides, rank,
                                  axis, axisDim, out, u, bad))
      raiseDeviceError(errors, instruction, DeviceErrorCode::kIndexOutOfRange,
                       bad, u, axisDim);
  }
}

template <typename T>
Status gatherTyped(const KernelEnv &env, const void *data, const void *indices,
                   bool wide, int64_t n, int64_t inner, int64_t axisDim,
                   void *out, int64_t total) {
  gatherKernel<T><<<gridFor(env, total, kThreads), kThreads, 0, env.stream>>>(
      static_cast<const T *>(data), indices, wide, n, inner, axisDim,
      static_cast<T *>(out), total, env.errors, env.instruction);
  return launchStatus("gather");
}

template <typename T>
Status gatherElementsTyped(const KernelEnv &env, const void *data,
                           const void *indices, bool wide, const Dims &d,
                           int rank, int axis, int64_t axisDim, void *out,
                           int64_t total) {
  gatherElementsKernel<T>
      <<<gridFor(env, total, kThreads), kThreads, 0, env.stream>>>(
          static_cast<const T *>(data), indices, wide, d, rank, axis, axisDim,
          static_cast<T *>(out), total, env.errors, env.instruction);
  return launchStatus("gather_elements");
}

} // namespace

Status launchGather(const KernelEnv &env, const void *data, const void *indices,
                    bool wideIndices, int64_t n, int64_t inner, int64_t axisDim,
                    void *out, int elementBytes, int64_t total) {
  if (total <= 0)
    return Status::ok();
  switch (elementBytes) {
  case 1:
    return gatherTyped<uint8_t>(env, data, indices, wideIndices, n, inner,
                                axisDim, out, total);
  case 2:
    return gatherTyped<uint16_t>(env, data, indices, wideIndices, n, inner,
                                 axisDim, out, total);
  case 4:
    return gatherTyped<uint32_t>(env, data, indices, wideIndices, n, inner,
                                 axisDim, out, total);
  case 8:
    return gatherTyped<uint64_t>(env, data, indices, wideIndices, n, inner,
                                 axisDim, out, total);
  default:
    return internalError("gather: unsupported element size " +
                         std::to_string(elementBytes));
  }
}

Status launchGatherElements(const KernelEnv &env, const void *data,
                            const void *indices, bool wideIndices,
                            const int64_t *dims, const int64_t *dataStrides,
                            int rank, int axis, int64_t axisDim, void *out,
                            int elementBytes, int64_t total) {
  if (total <= 0)
    return Status::ok();
  if (rank > 8)
    return internalError("gather_elements: rank above 8");
  Dims d = {};
  for (int i = 0; i < rank; ++i) {
    d.dims[i] = dims[i];
    d.strides[i] = dataStrides[i];
  }
  switch (elementBytes) {
  case 1:
    return gatherElementsTyped<uint8_t>(env, data, indices, wideIndices, d,
                                        rank, axis, axisDim, out, total);
  case 2:
    return gatherElementsTyped<uint16_t>(env, data, indices, wideIndices, d,
                                         rank, axis, axisDim, out, total);
  case 4:
    return gatherElementsTyped<uint32_t>(env, data, indices, wideIndices, d,
                                         rank, axis, axisDim, out, total);
  case 8:
    return gatherElementsTyped<uint64_t>(env, data, indices, wideIndices, d,
                                         rank, axis, axisDim, out, total);
  default:
    return internalError("gather_elements: unsupported element size " +
                         std::to_string(elementBytes));
  }
}

} // namespace ember::cuda::dense
