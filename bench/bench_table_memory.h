//===- bench_table_memory.h - Table memory for benchmarks ------*- C++ -*-===//
//
// Embedding tables are read at random rows, so every lookup in a table far
// larger than the TLB reach pays a page walk (two-dimensional under a VM).
// Backing tables with transparent huge pages (madvise(MADV_HUGEPAGE) on
// anonymous memory) removes most of them. The benchmarks allocate tables here,
// with or without huge pages, to measure both.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BENCH_BENCH_TABLE_MEMORY_H
#define EMBER_BENCH_BENCH_TABLE_MEMORY_H

#include "ember/tensor.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sys/mman.h>

namespace ember::bench {

/// An owning tensor in fresh anonymous memory, with MADV_HUGEPAGE when
/// `hugePages`. Fails with ResourceExhausted when mmap does.
inline Result<Tensor> allocateTable(DType dtype, const Shape &shape,
                                    bool hugePages) {
  size_t bytes = static_cast<size_t>(shape.numel()) * dtypeSize(dtype);
  if (bytes == 0)
    return Tensor::allocate(dtype, shape);
  // Over-allocate so the table can start on a 2 MiB boundary: only aligned
  // 2 MiB ranges can become huge pages.
  constexpr size_t kHuge = size_t{2} << 20;
  size_t mapped = bytes + kHuge;
  void *p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return resourceExhausted("mmap of " + std::to_string(mapped) +
                             " bytes failed");
  auto aligned = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~uintptr_t{kHuge - 1});
#ifdef MADV_HUGEPAGE
  if (hugePages)
    madvise(aligned, bytes, MADV_HUGEPAGE);
#endif
  std::shared_ptr<void> owner(p, [mapped](void *q) { munmap(q, mapped); });
  return Tensor::view(owner, aligned, dtype, shape);
}

/// Bytes of [p, p + n) that transparent huge pages back, as far as
/// `smapsPath` (a /proc/PID/smaps file) tells: for each mapping that overlaps
/// the range, its AnonHugePages, capped at the overlap. Exact for the tables
/// allocateTable madvises (madvise splits the range into a mapping of its
/// own); 0 for a table no huge page backs. -1 when the file cannot be read
/// or has no mapping overlapping the range.
inline int64_t hugePageBytesIn(const void *p, size_t n,
                               const char *smapsPath = "/proc/self/smaps") {
  FILE *f = std::fopen(smapsPath, "r");
  if (!f)
    return -1;
  const uint64_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
  int64_t huge = 0;
  bool found = false;
  uint64_t overlap = 0; // of the current mapping with [lo, hi)
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long start = 0, end = 0, kib = 0;
    char dash = 0;
    if (std::sscanf(line, "%llx%c%llx ", &start, &dash, &end) == 3 &&
        dash == '-') {
      overlap =
          std::min<uint64_t>(end, hi) > std::max<uint64_t>(start, lo)
              ? std::min<uint64_t>(end, hi) - std::max<uint64_t>(start, lo)
              : 0;
      found = found || overlap > 0;
    } else if (overlap > 0 &&
               std::sscanf(line, "AnonHugePages: %llu kB", &kib) == 1) {
      huge += static_cast<int64_t>(std::min<uint64_t>(kib << 10, overlap));
    }
  }
  std::fclose(f);
  return found ? huge : -1;
}

/// EMBER_BENCH_HUGEPAGES=0 turns huge pages off (default on).
inline bool hugePagesRequested() {
  const char *env = std::getenv("EMBER_BENCH_HUGEPAGES");
  return !(env && std::strcmp(env, "0") == 0);
}

} // namespace ember::bench

#endif // EMBER_BENCH_BENCH_TABLE_MEMORY_H
