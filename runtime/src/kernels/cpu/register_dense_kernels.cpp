//===- register_dense_kernels.cpp - Registering the CPU dense math kernels ===//
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"

namespace ember {

Status registerDenseKernels(KernelRegistry &registry) {
  for (auto registerFn :
       {cpu::registerGemmKernels, cpu::registerBinaryKernels,
        cpu::registerUnaryKernels, cpu::registerCompareKernels,
        cpu::registerSoftmaxKernels, cpu::registerNormKernels,
        cpu::registerReduceKernels, cpu::registerInteractionKernels,
        cpu::registerCrossKernels})
    EMBER_RETURN_IF_ERROR(registerFn(registry));
  return Status::ok();
}

} // namespace ember
