//===- cuda_kernel_runner.cpp - Runs one CUDA kernel in a test ------------===//
#include "cuda_kernel_runner.h"

#include "comm/nccl/nccl_communicator.h"

#include "cuda/blas_lt.h"
#include "cuda/cuda_kernels.h"
#include "cuda/cuda_status.h"
#include "cuda/device.h"
#include "cuda/kernel_env.h"
#include "kernels/kernel_context.h"
#include "threading/thread_pool.h"

#include <cuda_runtime_api.h>

namespace ember::testing {

std::string gpuUnavailableReason() {
  auto devices = cuda::listDevices();
  if (!devices.isOk())
    return devices.status().message();
  for (const auto &d : *devices)
    if (cuda::isSupported(d))
      return "";
  return "no CUDA device of compute capability 8.0 or newer";
}

/// Device memory of one run, freed when the runner goes.
struct CudaKernelRunner::DeviceState {
  std::vector<void *> buffers;
  cudaStream_t stream = nullptr;
  cuda::DeviceErrorRecord *errors = nullptr;
  unsigned long long *invalidIds = nullptr;
  void *hostStaging = nullptr;
  std::unique_ptr<cuda::BlasLt> blas;

  ~DeviceState() {
    reset();
    if (errors)
      cudaFree(errors);
    if (invalidIds)
      cudaFree(invalidIds);
    if (hostStaging)
      cudaFreeHost(hostStaging);
    blas.reset();
    if (stream)
      cudaStreamDestroy(stream);
  }
  /// Frees the buffers of the last run (after its work is done).
  void reset() {
    if (stream)
      cudaStreamSynchronize(stream);
    for (void *p : buffers)
      cudaFree(p);
    buffers.clear();
  }
  Result<void *> alloc(size_t bytes) {
    void *p = nullptr;
    EMBER_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, bytes ? bytes : 1));
    buffers.push_back(p);
    return p;
  }
};

namespace {

class DeviceKernelContext : public KernelContext {
public:
  DeviceKernelContext(CudaKernelRunner::DeviceState &state,
                      std::vector<Tensor> inputs, int numOutputs,
                      const Attributes &attrs, BoundsCheckMode mode,
                      cuda::KernelEnv env)
      : state_(state), inputs_(std::move(inputs)), outputs_(numOutputs),
        attrs_(attrs), mode_(mode), env_(env), pool_(1) {}

  int numInputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor &input(int i) const override { return inputs_.at(i); }
  int numOutputs() const override { return static_cast<int>(outputs_.size()); }
  Result<Tensor *> allocateOutput(int i, DType dtype,
                                  const Shape &shape) override {
    if (i < 0 || i >= numOutputs())
      return internalError("output index out of range");
    size_t bytes = static_cast<size_t>(shape.numel()) * dtypeSize(dtype);
    EMBER_ASSIGN_OR_RETURN(void *p, state_.alloc(bytes));
    outputs_[i] = Tensor::view(p, dtype, shape);
    return &outputs_[i];
  }
  Status setOutput(int i, const Tensor &tensor) override {
    if (i < 0 || i >= numOutputs())
      return internalError("output index out of range");
    outputs_[i] = tensor;
    return Status::ok();
  }
  Result<void *> scratch(size_t bytes) override {
    scratchBytes += bytes;
    return state_.alloc(bytes);
  }
  const Attributes &attrs() const override { return attrs_; }
  ThreadPool &threadPool() override { return pool_; }
  BoundsCheckMode boundsCheck() const override { return mode_; }
  /// The process default (tests switch it with setQuantizedSumsOverride).
  embedding::QuantizedSums quantizedSums() const override {
    return embedding::quantizedSums();
  }
  void reportInvalidIds(int64_t count) override { reported += count; }
  std::string location() const override { return "test kernel"; }
  cuda::KernelEnv *gpu() const override { return &env_; }
  const CollectiveInfo *collective() const override { return collective_; }
  Communicator *communicator() const override { return host_; }
  const CollectiveInfo *collective_ = nullptr;
  Communicator *host_ = nullptr;

  const Tensor &output(int i) const { return outputs_[i]; }
  size_t scratchBytes = 0;
  int64_t reported = 0;

private:
  CudaKernelRunner::DeviceState &state_;
  std::vector<Tensor> inputs_, outputs_;
  const Attributes &attrs_;
  BoundsCheckMode mode_;
  mutable cuda::KernelEnv env_;
  ThreadPool pool_;
};

constexpr size_t kStagingBytes = 1 << 20;

} // namespace

CudaKernelRunner::CudaKernelRunner(BoundsCheckMode mode)
    : mode_(mode), state_(std::make_unique<DeviceState>()) {}

CudaKernelRunner::~CudaKernelRunner() = default;

CudaKernelRunner &CudaKernelRunner::addInput(Tensor hostTensor) {
  inputs_.push_back(std::move(hostTensor));
  return *this;
}

CudaKernelRunner &CudaKernelRunner::setNumOutputs(int n) {
  numOutputs_ = n;
  return *this;
}

Status CudaKernelRunner::run(const std::string &kernel) {
  outputs_.clear();
  const KernelDef *def = cuda::cudaKernels().find(kernel);
  if (!def)
    return notFound("no CUDA kernel '" + kernel + "'");
  int ni = static_cast<int>(inputs_.size());
  if (ni < def->minInputs || ni > def->maxInputs ||
      numOutputs_ < def->minOutputs || numOutputs_ > def->maxOutputs)
    return invalidArgument("kernel '" + kernel +
                           "': wrong number of inputs/outputs");
  EMBER_RETURN_IF_ERROR(
      prepareKernelAttributes(*def, attrs_, ni, numOutputs_));

  DeviceState &s = *state_;
  s.reset();
  if (!s.stream) {
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    EMBER_CUDA_RETURN_IF_ERROR(cudaMalloc(reinterpret_cast<void **>(&s.errors),
                                          sizeof(cuda::DeviceErrorRecord)));
    EMBER_CUDA_RETURN_IF_ERROR(cudaMalloc(
        reinterpret_cast<void **>(&s.invalidIds), sizeof(unsigned long long)));
    EMBER_CUDA_RETURN_IF_ERROR(cudaMallocHost(&s.hostStaging, kStagingBytes));
    EMBER_ASSIGN_OR_RETURN(s.blas, cuda::BlasLt::create());
  }
  EMBER_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(s.errors, 0, sizeof(cuda::DeviceErrorRecord), s.stream));
  EMBER_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(s.invalidIds, 0, sizeof(unsigned long long), s.stream));

  std::vector<Tensor> deviceInputs;
  for (const Tensor &t : inputs_) {
    if (!t.defined()) {
      deviceInputs.emplace_back();
      continue;
    }
    EMBER_ASSIGN_OR_RETURN(void *p, s.alloc(t.nbytes()));
    EMBER_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        p, t.data(), t.nbytes(), cudaMemcpyHostToDevice, s.stream));
    deviceInputs.push_back(Tensor::view(p, t.dtype(), t.shape()));
  }

  cuda::KernelEnv env;
  cudaGetDevice(&env.device);
  cudaDeviceProp prop;
  EMBER_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, env.device));
  env.multiprocessors = prop.multiProcessorCount;
  env.computeCapability = prop.major * 10 + prop.minor;
  env.stream = s.stream;
  env.instruction = 0;
  env.errors = s.errors;
  env.invalidIds = s.invalidIds;
  env.hostStaging = s.hostStaging;
  env.hostStagingBytes = kStagingBytes;
  env.blas = s.blas.get();
  env.nccl = nccl_;

  DeviceKernelContext ctx(s, std::move(deviceInputs), numOutputs_, attrs_,
                          mode_, env);
  ctx.collective_ = collective_;
  ctx.host_ = host_;
  Status status = def->run(ctx);
  scratchBytes_ = ctx.scratchBytes;
  if (nccl_) {
    Status synced = nccl_->synchronize(s.stream, "test kernel");
    if (!synced.isOk())
      return status.isOk() ? synced : status;
  }
  EMBER_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s.stream));
  if (!status.isOk())
    return status;

  cuda::DeviceErrorRecord record;
  unsigned long long invalid = 0;
  EMBER_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(&record, s.errors, sizeof(record), cudaMemcpyDeviceToHost));
  EMBER_CUDA_RETURN_IF_ERROR(cudaMemcpy(&invalid, s.invalidIds, sizeof(invalid),
                                        cudaMemcpyDeviceToHost));
  invalidIds_ = static_cast<int64_t>(invalid) + ctx.reported;
  if (record.code != 0)
    return Status(
        cuda::statusCodeOf(static_cast<cuda::DeviceErrorCode>(record.code)),
        "test kernel: " + cuda::describeDeviceError(record));

  for (int i = 0; i < numOutputs_; ++i) {
    const Tensor &d = ctx.output(i);
    if (!d.defined()) {
      outputs_.emplace_back();
      continue;
    }
    EMBER_ASSIGN_OR_RETURN(Tensor h, Tensor::allocate(d.dtype(), d.shape()));
    if (h.nbytes())
      EMBER_CUDA_RETURN_IF_ERROR(
          cudaMemcpy(h.data(), d.data(), h.nbytes(), cudaMemcpyDeviceToHost));
    outputs_.push_back(std::move(h));
  }
  return Status::ok();
}

} // namespace ember::testing
