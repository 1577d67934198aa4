//===- cuda_kernel_runner.h - Runs one CUDA kernel in a test ---*- C++ -*-===//
//
// The GPU twin of TestKernelContext: inputs are host tensors, uploaded to the
// device; the named CUDA kernel runs on a stream of its own; its outputs are
// copied back to host tensors. Device errors (raiseDeviceError) come back as
// the run's Status, as the executor reports them.
//
//   EMBER_SKIP_WITHOUT_GPU();
//   CudaKernelRunner gpu;
//   gpu.addInput(table).addInput(ids).addInput(offsets).setNumOutputs(1);
//   gpu.attrs().set("pooling", std::string("sum"));
//   ASSERT_TRUE(gpu.run("embedding_bag").isOk());
//   const Tensor &out = gpu.output(0); // host memory
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_GPU_CUDA_KERNEL_RUNNER_H
#define EMBER_TESTS_GPU_CUDA_KERNEL_RUNNER_H

#include "ember/bounds_check.h"
#include "ember/tensor.h"
#include "kernels/attributes.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace ember {
struct CollectiveInfo;
class Communicator;
class NcclCommunicator;
} // namespace ember

namespace ember::testing {

/// Empty when a supported GPU is usable, else why not (for GTEST_SKIP).
std::string gpuUnavailableReason();

#define EMBER_SKIP_WITHOUT_GPU()                                               \
  do {                                                                         \
    std::string ember_why_ = ::ember::testing::gpuUnavailableReason();         \
    if (!ember_why_.empty())                                                   \
      GTEST_SKIP() << "no GPU: " << ember_why_;                                \
  } while (0)

class CudaKernelRunner {
public:
  explicit CudaKernelRunner(BoundsCheckMode mode = BoundsCheckMode::kFatal);
  ~CudaKernelRunner();

  /// A host tensor (copied to the device at run()).
  CudaKernelRunner &addInput(Tensor hostTensor);
  CudaKernelRunner &addAbsentInput() { return addInput(Tensor()); }
  CudaKernelRunner &setNumOutputs(int n);
  Attributes &attrs() { return attrs_; }
  void setBoundsCheck(BoundsCheckMode mode) { mode_ = mode; }
  /// Runs collective kernels as a member of `info`'s group: the host
  /// communicator for counts and the NCCL one for the payload (which also
  /// synchronizes the stream, so that a hung peer cannot hang the test).
  /// Pointers must outlive run().
  CudaKernelRunner &setCollective(const CollectiveInfo *info,
                                  Communicator *host, NcclCommunicator *nccl) {
    collective_ = info;
    host_ = host;
    nccl_ = nccl;
    return *this;
  }

  /// Validates like the plan loader, runs the CUDA kernel, synchronizes and
  /// checks the device error record, then downloads the outputs.
  Status run(const std::string &kernel);

  /// Host copies of the outputs after a successful run().
  const Tensor &output(int i) const { return outputs_.at(i); }
  int64_t invalidIds() const { return invalidIds_; }
  /// Device bytes the kernel took as scratch in the last run.
  size_t scratchBytes() const { return scratchBytes_; }

  struct DeviceState;

private:
  BoundsCheckMode mode_;
  Attributes attrs_;
  std::vector<Tensor> inputs_, outputs_;
  int numOutputs_ = 1;
  int64_t invalidIds_ = 0;
  size_t scratchBytes_ = 0;
  const CollectiveInfo *collective_ = nullptr;
  Communicator *host_ = nullptr;
  NcclCommunicator *nccl_ = nullptr;
  std::unique_ptr<DeviceState> state_;
};

} // namespace ember::testing

#endif // EMBER_TESTS_GPU_CUDA_KERNEL_RUNNER_H
