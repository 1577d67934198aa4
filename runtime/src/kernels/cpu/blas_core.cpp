//===- blas_core.cpp - OpenBLAS kernels that fit the CPU ------------------===//
#include "kernels/cpu/blas_core.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace ember::cpu {
namespace {

using VoidFn = void (*)();
using NameFn = char *(*)();

/// OpenBLAS's own entry points, looked up so that another BLAS links too.
template <typename Fn> Fn lookup(const char *name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

const char *fittingCore() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
#endif
  return nullptr;
}

} // namespace

const char *blasCoreName() {
  static NameFn name = lookup<NameFn>("openblas_get_corename");
  return name ? name() : "";
}

void ensureBlasCoreFitsCpu() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("OPENBLAS_CORETYPE"))
      return; // the user's choice
    auto quit = lookup<VoidFn>("gotoblas_dynamic_quit");
    auto init = lookup<VoidFn>("gotoblas_dynamic_init");
    const char *core = fittingCore();
    if (!quit || !init || !core || std::strcmp(blasCoreName(), "Prescott") != 0)
      return;
    // gotoblas_dynamic_init reads OPENBLAS_CORETYPE; restore the
    // environment afterwards so that child processes choose for themselves.
    setenv("OPENBLAS_CORETYPE", core, 0);
    quit();
    init();
    unsetenv("OPENBLAS_CORETYPE");
  });
}

} // namespace ember::cpu
