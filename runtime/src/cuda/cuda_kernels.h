//===- cuda_kernels.h - The CUDA backend's kernel registry -----*- C++ -*-===//
//
// CUDA kernels have the names, inputs, outputs and attributes of the CPU
// kernels of the same name (the plan does not change with the device); see
// kernel_env.h for what differs. A plan instruction whose kernel has no CUDA
// version runs on the CPU backend, its inputs copied to the host and its
// outputs back (the executor does it; `ember-run --device cuda --explain`
// lists them).
//
// Each family registers itself in its own file; cudaKernels() calls them all.
// Each CUDA kernel's KernelDef is the CPU kernel's (cpuKernelDef) with the
// CUDA run function.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_CUDA_KERNELS_H
#define EMBER_CUDA_CUDA_KERNELS_H

#include "kernels/kernel_registry.h"

namespace ember::cuda {

Status registerEmbeddingKernels(KernelRegistry &r);  // embedding/*.cu
Status registerJaggedKernels(KernelRegistry &r);     // jagged/*.cu (KJT too)
Status registerDenseKernels(KernelRegistry &r);      // dense/*.cu, gemm
Status registerCollectiveKernels(KernelRegistry &r); // nccl/*.cu

/// Every CUDA kernel, registered on first use (thread-safe).
const KernelRegistry &cudaKernels();

/// The CPU kernel `name` (the CUDA kernel of that name shares its contract:
/// validate hook, arity, summary). Registration fails if it does not exist.
Result<const KernelDef *> cpuKernelDef(const char *name);

/// A KernelDef with the CPU kernel's contract (name, validate, arity,
/// aliasing, in-place flag) and `run`; summary "<CPU summary> [CUDA: how]".
Result<KernelDef> cudaDefLike(const char *name, KernelFn run, const char *how);

/// One CUDA kernel as cudaDefLike makes it.
struct CudaKernelEntry {
  const char *name;
  KernelFn run;
  const char *how;
};
/// Adds cudaDefLike(name, run, how) of each entry, in order.
Status addCudaKernels(KernelRegistry &r,
                      std::initializer_list<CudaKernelEntry> entries);

} // namespace ember::cuda

#endif // EMBER_CUDA_CUDA_KERNELS_H
