//===- register_shape_kernels.cpp - Registering the data-movement kernels -===//
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"

namespace ember {

Status registerShapeKernels(KernelRegistry &registry) {
  for (auto registerFn :
       {cpu::registerConcatKernels, cpu::registerReshapeKernels,
        cpu::registerStridedViewKernels, cpu::registerExpandKernels,
        cpu::registerGatherKernels, cpu::registerScatterKernels,
        cpu::registerFillKernels, cpu::registerCastKernels})
    EMBER_RETURN_IF_ERROR(registerFn(registry));
  return Status::ok();
}

} // namespace ember
