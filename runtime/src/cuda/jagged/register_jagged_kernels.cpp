//===- register_jagged_kernels.cpp - CUDA jagged kernels ------------------===//
//
// Each CUDA jagged/KJT kernel is the CPU kernel's definition (name, arity,
// attribute validation, summary) with the CUDA run function.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_kernels.h"
#include "cuda/jagged/jagged_kernels.h"
#include "kernels/cpu/jagged_kernel_defs.h"

namespace ember::cuda {

Status registerJaggedKernels(KernelRegistry &r) {
  struct Entry {
    KernelDef (*cpuDef)();
    KernelFn run;
    /// Reads output sizes back from the device (in some or all cases): never
    /// captured into a CUDA graph (KernelDef::syncsHost).
    bool syncsHost;
  };
  const Entry entries[] = {
      {ember::jagged::lengthsToOffsetsKernelDef, jagged::runLengthsToOffsets,
       false},
      {ember::jagged::jaggedToPaddedKernelDef, jagged::runJaggedToPadded,
       false},
      {ember::jagged::paddedToJaggedKernelDef, jagged::runPaddedToJagged, true},
      {ember::jagged::kjtPermuteKernelDef, jagged::runKjtPermute, true},
      {ember::jagged::kjtSplitKernelDef, jagged::runKjtSplit, true},
      {ember::jagged::kjtConcatKernelDef, jagged::runKjtConcat, false},
      {ember::jagged::kjtBucketizeKernelDef, jagged::runKjtBucketize, false},
      {ember::jagged::kjtFromBagsKernelDef, jagged::runKjtFromBags, true},
  };
  for (const Entry &e : entries) {
    KernelDef def = e.cpuDef();
    def.run = e.run;
    def.syncsHost = e.syncsHost;
    EMBER_RETURN_IF_ERROR(r.add(std::move(def)));
  }
  return Status::ok();
}

} // namespace ember::cuda
