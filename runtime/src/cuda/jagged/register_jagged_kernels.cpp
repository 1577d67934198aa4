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
  };
  const Entry entries[] = {
      {ember::jagged::lengthsToOffsetsKernelDef, jagged::runLengthsToOffsets},
      {ember::jagged::jaggedToPaddedKernelDef, jagged::runJaggedToPadded},
      {ember::jagged::paddedToJaggedKernelDef, jagged::runPaddedToJagged},
      {ember::jagged::kjtPermuteKernelDef, jagged::runKjtPermute},
      {ember::jagged::kjtSplitKernelDef, jagged::runKjtSplit},
      {ember::jagged::kjtConcatKernelDef, jagged::runKjtConcat},
      {ember::jagged::kjtBucketizeKernelDef, jagged::runKjtBucketize},
      {ember::jagged::kjtFromBagsKernelDef, jagged::runKjtFromBags},
  };
  for (const Entry &e : entries) {
    KernelDef def = e.cpuDef();
    def.run = e.run;
    EMBER_RETURN_IF_ERROR(r.add(std::move(def)));
  }
  return Status::ok();
}

} // namespace ember::cuda
