//===- test_kernel_context.h - A KernelContext for kernel unit tests -*- C++ -*-===//
//
// Runs one kernel outside an executor: inputs are given as Tensors, outputs
// are allocated on the heap, attributes are set directly.
//
//   TestKernelContext ctx;
//   ctx.addInput(table).addInput(ids).addInput(offsets).setNumOutputs(1);
//   ctx.attrs().set("pooling", std::string("sum"));
//   ASSERT_TRUE(runKernel("embedding_bag", ctx).isOk());
//   const Tensor &out = ctx.output(0);
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_TEST_KERNEL_CONTEXT_H
#define EMBER_TESTS_TEST_KERNEL_CONTEXT_H

#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"
#include "threading/thread_pool.h"

#include <cstdlib>
#include <memory>
#include <vector>

namespace ember::testing {

class TestKernelContext : public KernelContext {
public:
  explicit TestKernelContext(int threads = 1,
                             BoundsCheckMode mode = BoundsCheckMode::kFatal)
      : pool_(std::make_unique<ThreadPool>(threads)), mode_(mode) {}

  TestKernelContext &addInput(Tensor t) {
    inputs_.push_back(std::move(t));
    return *this;
  }
  /// An optional input left out.
  TestKernelContext &addAbsentInput() { return addInput(Tensor()); }
  TestKernelContext &setNumOutputs(int n) {
    outputs_.assign(n, Tensor());
    return *this;
  }
  Attributes &attrs() { return attrs_; }
  const Tensor &output(int i) const { return outputs_.at(i); }
  int64_t invalidIds() const { return invalidIds_; }
  void setBoundsCheck(BoundsCheckMode mode) { mode_ = mode; }

  // KernelContext
  int numInputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor &input(int i) const override { return inputs_.at(i); }
  int numOutputs() const override { return static_cast<int>(outputs_.size()); }
  Result<Tensor *> allocateOutput(int i, DType dtype, const Shape &shape) override {
    if (i < 0 || i >= numOutputs())
      return internalError("output index " + std::to_string(i) + " out of range");
    EMBER_ASSIGN_OR_RETURN(outputs_[i], Tensor::allocate(dtype, shape));
    return &outputs_[i];
  }
  Status setOutput(int i, const Tensor &tensor) override {
    if (i < 0 || i >= numOutputs())
      return internalError("output index " + std::to_string(i) + " out of range");
    outputs_[i] = tensor;
    return Status::ok();
  }
  Result<void *> scratch(size_t bytes) override {
    EMBER_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kUInt8,
                                                      {static_cast<int64_t>(bytes)}));
    scratch_.push_back(t);
    return t.data();
  }
  const Attributes &attrs() const override { return attrs_; }
  ThreadPool &threadPool() override { return *pool_; }
  BoundsCheckMode boundsCheck() const override { return mode_; }
  /// The process default (tests switch it with setQuantizedSumsOverride).
  embedding::QuantizedSums quantizedSums() const override {
    return embedding::quantizedSums();
  }
  void reportInvalidIds(int64_t count) override { invalidIds_ += count; }
  std::string location() const override { return "test kernel"; }

private:
  std::unique_ptr<ThreadPool> pool_;
  BoundsCheckMode mode_;
  std::vector<Tensor> inputs_, outputs_, scratch_;
  Attributes attrs_;
  int64_t invalidIds_ = 0;
};

/// Validates as the plan loader does (arity, the kernel contract's
/// attributes with their defaults filled in, the validate hook) and runs
/// the named CPU kernel.
inline Status runKernel(const std::string &name, TestKernelContext &ctx) {
  const KernelDef *def = cpuKernels().find(name);
  if (!def)
    return notFound("no CPU kernel '" + name + "'");
  int ni = ctx.numInputs(), no = ctx.numOutputs();
  if (ni < def->minInputs || ni > def->maxInputs || no < def->minOutputs ||
      no > def->maxOutputs)
    return invalidArgument("kernel '" + name + "': wrong number of inputs/outputs");
  EMBER_RETURN_IF_ERROR(prepareKernelAttributes(*def, ctx.attrs(), ni, no));
  return def->run(ctx);
}

} // namespace ember::testing

#endif // EMBER_TESTS_TEST_KERNEL_CONTEXT_H
