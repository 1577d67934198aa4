//===- register_jagged_kernels.cpp - Registering the jagged/KJT kernels ---===//
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/jagged_kernel_defs.h"
#include "kernels/kernel_registry.h"

namespace ember {

Status registerJaggedKernels(KernelRegistry &registry) {
  using namespace jagged;
  return addKernels(registry,
                    {lengthsToOffsetsKernelEntry(), jaggedToPaddedKernelEntry(),
                     paddedToJaggedKernelEntry(), jaggedSumKernelEntry(),
                     kjtPermuteKernelEntry(), kjtSplitKernelEntry(),
                     kjtConcatKernelEntry(), kjtBucketizeKernelEntry(),
                     kjtFromBagsKernelEntry()});
}

} // namespace ember
