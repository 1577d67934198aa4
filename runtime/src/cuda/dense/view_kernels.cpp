//===- view_kernels.cpp - identity, reshape, flatten, squeeze, unsqueeze, expand
//
// The views only make their output alias the input with a new shape
// (setOutput): CUDA registers the CPU kernels' own run functions for them,
// so no data moves to the host. reshape and expand may take their target
// shape from an int64 input instead of the attribute: that input is device
// memory here, so its few values are read through the pinned staging buffer
// (one stream synchronization) and the CPU kernel runs on a context that
// shows it the host copy. expand writes new memory: a broadcast copy kernel.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/dense_registration.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/expand_shape.h"

#include <cuda_runtime_api.h>

namespace ember::cuda::dense {
namespace {

/// Forwards everything to `inner` but shows `replacement` as input `index`.
class ReplacedInputContext : public KernelContext {
public:
  ReplacedInputContext(KernelContext &inner, int index, Tensor replacement)
      : inner_(inner), index_(index), replacement_(std::move(replacement)) {}
  int numInputs() const override { return inner_.numInputs(); }
  const Tensor &input(int i) const override {
    return i == index_ ? replacement_ : inner_.input(i);
  }
  int numOutputs() const override { return inner_.numOutputs(); }
  Result<Tensor *> allocateOutput(int i, DType dtype,
                                  const Shape &shape) override {
    return inner_.allocateOutput(i, dtype, shape);
  }
  Status setOutput(int i, const Tensor &tensor) override {
    return inner_.setOutput(i, tensor);
  }
  Result<void *> scratch(size_t bytes) override {
    return inner_.scratch(bytes);
  }
  const Attributes &attrs() const override { return inner_.attrs(); }
  ThreadPool &threadPool() override { return inner_.threadPool(); }
  BoundsCheckMode boundsCheck() const override { return inner_.boundsCheck(); }
  embedding::QuantizedSums quantizedSums() const override {
    return inner_.quantizedSums();
  }
  void reportInvalidIds(int64_t count) override {
    inner_.reportInvalidIds(count);
  }
  std::string location() const override { return inner_.location(); }
  const CollectiveInfo *collective() const override {
    return inner_.collective();
  }
  Communicator *communicator() const override { return inner_.communicator(); }
  cuda::KernelEnv *gpu() const override { return inner_.gpu(); }

private:
  KernelContext &inner_;
  int index_;
  Tensor replacement_;
};

/// Input `index` when it is an int64 [r] shape (r <= kMaxRank) that the
/// kernel will read, copied to the host staging buffer; else an undefined
/// tensor (the CPU kernel then reports what is wrong without reading data).
Result<Tensor> stagedShapeInput(KernelContext &ctx, int index) {
  if (ctx.numInputs() <= index || !ctx.input(index).defined())
    return Tensor();
  const Tensor &s = ctx.input(index);
  if (s.dtype() != DType::kInt64 || s.rank() != 1 || s.dim(0) > Shape::kMaxRank)
    return Tensor();
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  size_t bytes = s.nbytes();
  if (!env->hostStaging || env->hostStagingBytes < bytes)
    return internalError(ctx.location() +
                         ": the host staging buffer is too small for a shape");
  if (bytes > 0) {
    EMBER_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(env->hostStaging, s.data(),
                                               bytes, cudaMemcpyDeviceToHost,
                                               env->stream));
    EMBER_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(env->stream));
  }
  return Tensor::view(env->hostStaging, DType::kInt64, s.shape());
}

Status reshapeKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(const KernelDef *cpu, cpuKernelDef("reshape"));
  if (ctx.attrs().has("shape"))
    return cpu->run(ctx); // the shape input, if any, is not read
  EMBER_ASSIGN_OR_RETURN(Tensor staged, stagedShapeInput(ctx, 1));
  if (!staged.defined())
    return cpu->run(ctx);
  ReplacedInputContext host(ctx, 1, staged);
  return cpu->run(host);
}

Status expandKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(
      Shape expanded,
      cpu::expandShape(
          ctx, [&ctx](const Tensor &s) -> Result<std::vector<int64_t>> {
            if (s.dim(0) > Shape::kMaxRank)
              return cpu::kernelError(
                  ctx, "expand: the shape input " + s.describe() +
                           " has more than " + std::to_string(Shape::kMaxRank) +
                           " dims");
            EMBER_ASSIGN_OR_RETURN(Tensor staged, stagedShapeInput(ctx, 1));
            const int64_t *dims = staged.data<int64_t>();
            return std::vector<int64_t>(dims, dims + s.dim(0));
          }));
  const Shape *outShape = &expanded;
  const Tensor &x = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, x.dtype(), *outShape));
  if (out->numel() == 0)
    return Status::ok();
  Shape operand[1] = {x.shape()};
  BroadcastIndex ix =
      toBroadcastIndex(cpu::makeBroadcastLayout(*outShape, operand, 1));
  return cpu::atLocation(
      ctx, launchExpand(*env, ix, x.data(), out->data(),
                        static_cast<int>(dtypeSize(x.dtype())), out->numel()));
}

} // namespace

Status registerViewKernels(KernelRegistry &r) {
  for (const char *name : {"identity", "flatten", "squeeze", "unsqueeze"}) {
    EMBER_ASSIGN_OR_RETURN(const KernelDef *cpu, cpuKernelDef(name));
    EMBER_ASSIGN_OR_RETURN(KernelDef def,
                           cudaDefLike(name, cpu->run, "view, no copy"));
    EMBER_RETURN_IF_ERROR(r.add(std::move(def)));
  }
  return addCudaKernels(
      r, {{"reshape", reshapeKernel,
           "view, no copy; a shape input is read via host staging"},
          {"expand", expandKernel, "broadcast copy kernel"}});
}

} // namespace ember::cuda::dense
