//===- jagged_kernels.cpp - Jagged kernel registrations (being written) -----===//
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel_registry.h"

namespace ember {

Status registerJaggedKernels(KernelRegistry &registry) { return Status::ok(); }

} // namespace ember
