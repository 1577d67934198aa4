//===- embedding_pool.cpp - Choosing the row routines ---------------------===//
#include "kernels/cpu/embedding_pool.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ember::embedding {

std::string_view rowIsaName(RowIsa isa) {
  switch (isa) {
  case RowIsa::kPortable:
    return "portable";
  case RowIsa::kAvx2:
    return "avx2";
  case RowIsa::kAvx512:
    return "avx512";
  }
  return "unknown";
}

bool rowIsaSupported(RowIsa isa) {
  if (isa == RowIsa::kPortable)
    return true;
#if defined(__x86_64__)
  __builtin_cpu_init();
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
              __builtin_cpu_supports("f16c");
  if (isa == RowIsa::kAvx2)
    return avx2;
  return avx2 && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

static RowIsa defaultRowIsa() {
  static const RowIsa isa = [] {
    RowIsa cap = RowIsa::kAvx512;
    if (const char *env = std::getenv("EMBER_CPU_ISA")) {
      if (std::strcmp(env, "portable") == 0)
        cap = RowIsa::kPortable;
      else if (std::strcmp(env, "avx2") == 0)
        cap = RowIsa::kAvx2;
    }
    for (RowIsa isa : {RowIsa::kAvx512, RowIsa::kAvx2})
      if (isa <= cap && rowIsaSupported(isa))
        return isa;
    return RowIsa::kPortable;
  }();
  return isa;
}

/// AMD CPUs without AVX-512 (Zen 1-3): the lookups' defaults measured on a
/// Zen 3 differ from the Xeon's (defaultPrefetchBytes,
/// defaultAvx2WideRowPasses, avx2PrimesTlb).
static bool isAmdWithoutAvx512() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_is("amd") && !__builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

int64_t defaultPrefetchBytes() {
  // AMD without AVX-512 (Zen 1-3): 2 KiB of rows. On a Zen 3 (2026-11-27,
  // docs/performance.md) 2 KiB ahead measured 0.99-1.09x of 16 KiB by the
  // median on fp32 rows at L 80 in 4 KiB pages and 1.03-1.14x in huge pages
  // (interleaved A/Bs in one process, 1 thread); L 20 and int8 were level on
  // the whole (0.92-1.14x). The hint (prefetcht0/t2/nta) made no difference
  // beyond the spread there, so prefetcht2 stays. Zen 4 and later (AVX-512)
  // are not measured and keep 16 KiB.
  if (isAmdWithoutAvx512())
    return 2048;
  // Everything else: 16 KiB, measured on the AVX-512 Xeon with prefetcht2.
  return 16384;
}

int64_t prefetchBytes() {
  static const int64_t bytes = [] {
    const int64_t fallback = defaultPrefetchBytes();
    const char *env = std::getenv("EMBER_PREFETCH_BYTES");
    if (!env || !*env)
      return fallback;
    char *end = nullptr;
    long long v = std::strtoll(env, &end, 10);
    if (*end != '\0' || v < 0 || v > (1 << 20))
      return fallback;
    return static_cast<int64_t>(v);
  }();
  return bytes;
}

int defaultAvx2WideRowPasses() {
  // AMD without AVX-512 (Zen 1-3): one pass. On a Zen 3 (2026-11-27,
  // docs/performance.md) one pass measured 1.07-1.14x of two by the median
  // in 9 of 10 fp32 D 128 configurations (1M and 10M rows, L 20 and 80,
  // 4 KiB and huge pages; interleaved in one process, 1 thread) and 0.97x
  // (IQR 0.95-1.04) in the tenth (10M rows, B 16,384, L 80, huge pages).
  if (isAmdWithoutAvx512())
    return 1;
  // Elsewhere two passes, measured better on the AVX-512 Xeon.
  return 2;
}

bool avx2PrimesTlb() {
  // AMD without AVX-512 (Zen 1-3): no priming. On a Zen 3 (2026-11-28,
  // docs/performance.md) the AVX2 loops without it measured 1.04-1.37x of
  // those with it by the median in all 18 configurations (int8 D 128, fp32
  // D 32 and 64, int8 D 64; 1M and 10M rows, L 1 to 80, 4 KiB and huge
  // pages; interleaved in one process, 1 thread): there a prefetch costs
  // more than the page walk it hides. Elsewhere priming, measured on the
  // AVX-512 Xeon (1.02-1.12x on 10M x 128 fp32 rows).
  static const bool primes = !isAmdWithoutAvx512();
  return primes;
}

// 0: no override; otherwise 1 or 2.
static std::atomic<int> widePassesOverride{0};

int avx2WideRowPasses() {
  int forced = widePassesOverride.load(std::memory_order_relaxed);
  if (forced)
    return forced;
  static const int passes = [] {
    const char *env = std::getenv("EMBER_AVX2_WIDE_ROW_PASSES");
    if (env && std::strcmp(env, "1") == 0)
      return 1;
    if (env && std::strcmp(env, "2") == 0)
      return 2;
    return defaultAvx2WideRowPasses();
  }();
  return passes;
}

void setAvx2WideRowPassesOverride(std::optional<int> passes) {
  widePassesOverride.store(passes && (*passes == 1 || *passes == 2) ? *passes
                                                                    : 0,
                           std::memory_order_relaxed);
}

// -1: no override; otherwise the RowIsa value.
static std::atomic<int> rowIsaOverride{-1};

RowIsa activeRowIsa() {
  int o = rowIsaOverride.load(std::memory_order_relaxed);
  return o < 0 ? defaultRowIsa() : static_cast<RowIsa>(o);
}

void setRowIsaOverride(std::optional<RowIsa> isa) {
  // An ISA the CPU lacks falls back to portable rather than crashing.
  int value = -1;
  if (isa)
    value = static_cast<int>(rowIsaSupported(*isa) ? *isa : RowIsa::kPortable);
  rowIsaOverride.store(value, std::memory_order_relaxed);
}

PoolResult poolBags(const PoolJob &job) {
  switch (activeRowIsa()) {
  case RowIsa::kAvx512:
    return detail::poolBagsAvx512(job);
  case RowIsa::kAvx2:
    return detail::poolBagsAvx2(job);
  case RowIsa::kPortable:
    break;
  }
  return detail::poolBagsPortable(job);
}

PoolResult gatherRows(const PoolJob &job) {
  switch (activeRowIsa()) {
  case RowIsa::kAvx512:
    return detail::gatherRowsAvx512(job);
  case RowIsa::kAvx2:
    return detail::gatherRowsAvx2(job);
  case RowIsa::kPortable:
    break;
  }
  return detail::gatherRowsPortable(job);
}

} // namespace ember::embedding
