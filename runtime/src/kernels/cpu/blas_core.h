//===- blas_core.h - OpenBLAS kernels that fit the CPU ----------*- C++ -*-===//
//
// OpenBLAS (DYNAMIC_ARCH) picks its GEMM kernels by CPU model at load time;
// a model newer than the library (Debian 12's 0.3.21 on Emerald Rapids)
// falls back to the SSE3 "Prescott" kernels, 3-4x slower than the AVX-512
// ones the CPU runs. ensureBlasCoreFitsCpu() re-selects them once, before
// the first GEMM, from the CPU's own feature flags.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_CPU_BLAS_CORE_H
#define EMBER_KERNELS_CPU_BLAS_CORE_H

namespace ember::cpu {

/// When OpenBLAS fell back to its generic "Prescott" core on a CPU with
/// AVX-512 (F, BW, DQ, VL) or AVX2 + FMA, re-initializes it as SkylakeX or
/// Haswell (as OPENBLAS_CORETYPE would). Does nothing when the user set
/// OPENBLAS_CORETYPE, when OpenBLAS chose another core, or when the BLAS in
/// the process is not a DYNAMIC_ARCH OpenBLAS. Thread-safe; the work is
/// done once per process.
void ensureBlasCoreFitsCpu();

/// The OpenBLAS core in use ("SkylakeX", ...), or "" when unknown.
const char *blasCoreName();

} // namespace ember::cpu

#endif // EMBER_KERNELS_CPU_BLAS_CORE_H
