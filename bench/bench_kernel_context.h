//===- bench_kernel_context.h - A KernelContext for benchmarks --*- C++ -*-===//
//
// Runs one kernel the way the executor does in the steady state: outputs
// come from buffers kept across runs (as an arena would hand them out), so a
// timed iteration measures the kernel, not malloc and page faults.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BENCH_BENCH_KERNEL_CONTEXT_H
#define EMBER_BENCH_BENCH_KERNEL_CONTEXT_H

#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"
#include "threading/thread_pool.h"

#include <cstring>
#include <memory>
#include <vector>

namespace ember::bench {

class BenchKernelContext : public KernelContext {
public:
  explicit BenchKernelContext(int threads)
      : pool_(std::make_unique<ThreadPool>(threads)) {}

  void setInputs(std::vector<Tensor> inputs) { inputs_ = std::move(inputs); }
  void setNumOutputs(int n) { outputs_.resize(n); }
  Attributes &attrs() { return attrs_; }
  const Tensor &output(int i) const { return outputs_.at(i); }

  int numInputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor &input(int i) const override { return inputs_.at(i); }
  int numOutputs() const override { return static_cast<int>(outputs_.size()); }
  Result<Tensor *> allocateOutput(int i, DType dtype,
                                  const Shape &shape) override {
    Tensor &t = outputs_.at(i);
    if (!t.defined() || t.dtype() != dtype || t.shape() != shape) {
      EMBER_ASSIGN_OR_RETURN(t, Tensor::allocate(dtype, shape));
      std::memset(t.data(), 0, t.nbytes()); // touch the pages once
    }
    return &t;
  }
  Status setOutput(int i, const Tensor &tensor) override {
    outputs_.at(i) = tensor;
    return Status::ok();
  }
  Result<void *> scratch(size_t bytes) override {
    if (scratch_.size() < bytes)
      scratch_.resize(bytes);
    return static_cast<void *>(scratch_.data());
  }
  const Attributes &attrs() const override { return attrs_; }
  ThreadPool &threadPool() override { return *pool_; }
  BoundsCheckMode boundsCheck() const override {
    return BoundsCheckMode::kFatal;
  }
  /// The process default (EMBER_QUANTIZED_SUMS, else fast).
  embedding::QuantizedSums quantizedSums() const override {
    return embedding::quantizedSums();
  }
  void reportInvalidIds(int64_t) override {}
  std::string location() const override { return "bench"; }

  /// Runs the named CPU kernel (attributes checked against the kernel
  /// contract and validated once, as at plan load).
  Status run(const std::string &name) {
    const KernelDef *def = cpuKernels().find(name);
    if (!def)
      return notFound("no CPU kernel '" + name + "'");
    if (!validated_) {
      EMBER_RETURN_IF_ERROR(
          prepareKernelAttributes(*def, attrs_, numInputs(), numOutputs()));
      validated_ = true;
    }
    return def->run(*this);
  }

private:
  std::unique_ptr<ThreadPool> pool_;
  std::vector<Tensor> inputs_, outputs_;
  std::vector<uint8_t> scratch_;
  Attributes attrs_;
  bool validated_ = false;
};

} // namespace ember::bench

#endif // EMBER_BENCH_BENCH_KERNEL_CONTEXT_H
