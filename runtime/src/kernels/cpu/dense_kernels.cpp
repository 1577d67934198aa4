//===- dense_kernels.cpp - Dense kernel registrations (being written) -----===//
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel_registry.h"

namespace ember {

Status registerDenseKernels(KernelRegistry &registry) { return Status::ok(); }

} // namespace ember
