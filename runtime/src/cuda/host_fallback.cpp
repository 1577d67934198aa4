//===- host_fallback.cpp - CPU kernels inside a CUDA run ------------------===//
#include "cuda/host_fallback.h"

#include "cuda/cuda_status.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"
#include "plan/program.h"

#include <vector>

namespace ember::cuda {

namespace {

/// The CPU kernel's view: host inputs, host outputs and scratch, everything
/// else forwarded to the executor's context.
class HostContext final : public KernelContext {
public:
  HostContext(KernelContext &device, std::vector<Tensor> inputs)
      : device_(device), inputs_(std::move(inputs)),
        outputs_(device.numOutputs()) {}

  int numInputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor &input(int i) const override { return inputs_.at(i); }
  int numOutputs() const override { return static_cast<int>(outputs_.size()); }
  Result<Tensor *> allocateOutput(int i, DType dtype,
                                  const Shape &shape) override {
    if (i < 0 || i >= numOutputs())
      return internalError(location() + ": output index out of range");
    EMBER_ASSIGN_OR_RETURN(outputs_[i], Tensor::allocate(dtype, shape));
    return &outputs_[i];
  }
  Status setOutput(int i, const Tensor &tensor) override {
    if (i < 0 || i >= numOutputs())
      return internalError(location() + ": output index out of range");
    outputs_[i] = tensor;
    return Status::ok();
  }
  Result<void *> scratch(size_t bytes) override {
    EMBER_ASSIGN_OR_RETURN(
        Tensor t,
        Tensor::allocate(DType::kUInt8, {static_cast<int64_t>(bytes)}));
    scratch_.push_back(t);
    return t.data();
  }
  const Attributes &attrs() const override { return device_.attrs(); }
  ThreadPool &threadPool() override { return device_.threadPool(); }
  BoundsCheckMode boundsCheck() const override { return device_.boundsCheck(); }
  embedding::QuantizedSums quantizedSums() const override {
    return device_.quantizedSums();
  }
  void reportInvalidIds(int64_t count) override {
    device_.reportInvalidIds(count);
  }
  std::string location() const override { return device_.location(); }
  const CollectiveInfo *collective() const override {
    return device_.collective();
  }
  Communicator *communicator() const override { return device_.communicator(); }

  const Tensor &output(int i) const { return outputs_[i]; }

private:
  KernelContext &device_;
  std::vector<Tensor> inputs_, outputs_, scratch_;
};

} // namespace

Status runOnHost(const Program &program, const InstructionInfo &instr,
                 KernelContext &deviceCtx, cudaStream_t stream,
                 const StreamSync &sync) {
  const std::string where = deviceCtx.location();
  // Everything the inputs depend on was enqueued on (or awaited by) this
  // stream.
  EMBER_RETURN_IF_ERROR(sync(stream, where + ": host fallback"));
  std::vector<Tensor> inputs;
  inputs.reserve(instr.inputs.size());
  for (size_t i = 0; i < instr.inputs.size(); ++i) {
    int slot = instr.inputs[i];
    const Tensor &d = deviceCtx.input(static_cast<int>(i));
    if (slot < 0 || !d.defined()) {
      inputs.emplace_back();
      continue;
    }
    if (program.slots[slot].kind == SlotInfo::Kind::kConstant) {
      inputs.push_back(program.constants[slot]); // the mapped weights
      continue;
    }
    EMBER_ASSIGN_OR_RETURN(Tensor h, Tensor::allocate(d.dtype(), d.shape()));
    if (h.nbytes())
      EMBER_RETURN_IF_ERROR(cudaStatus(
          cudaMemcpy(h.data(), d.data(), h.nbytes(), cudaMemcpyDeviceToHost),
          where + ": copying input " + std::to_string(i) + " to the host"));
    inputs.push_back(std::move(h));
  }
  HostContext host(deviceCtx, std::move(inputs));
  EMBER_RETURN_IF_ERROR(instr.kernel->run(host));
  for (int i = 0; i < host.numOutputs(); ++i) {
    const Tensor &h = host.output(i);
    if (!h.defined())
      continue; // left out by the plan; the executor checks the rest
    EMBER_ASSIGN_OR_RETURN(Tensor * d,
                           deviceCtx.allocateOutput(i, h.dtype(), h.shape()));
    if (h.nbytes())
      EMBER_RETURN_IF_ERROR(cudaStatus(
          cudaMemcpyAsync(d->data(), h.data(), h.nbytes(),
                          cudaMemcpyHostToDevice, stream),
          where + ": copying output " + std::to_string(i) + " to the device"));
  }
  // The host outputs die here: the copies must be done.
  return sync(stream, where + ": host fallback");
}

} // namespace ember::cuda
