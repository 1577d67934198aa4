//===- register_jagged_kernels.cpp - Registering the jagged/KJT kernels ---===//
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/jagged_kernel_defs.h"
#include "kernels/kernel_registry.h"

namespace ember {

Status registerJaggedKernels(KernelRegistry &registry) {
  using namespace jagged;
  for (KernelDef (*makeDef)() :
       {lengthsToOffsetsKernelDef, jaggedToPaddedKernelDef,
        paddedToJaggedKernelDef, jaggedSumKernelDef, kjtPermuteKernelDef,
        kjtSplitKernelDef, kjtConcatKernelDef, kjtBucketizeKernelDef,
        kjtFromBagsKernelDef})
    EMBER_RETURN_IF_ERROR(registry.add(makeDef()));
  return Status::ok();
}

} // namespace ember
