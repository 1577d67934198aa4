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

#include <cstdint>
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

/// EMBER_BENCH_HUGEPAGES=0 turns huge pages off (default on).
inline bool hugePagesRequested() {
  const char *env = std::getenv("EMBER_BENCH_HUGEPAGES");
  return !(env && std::strcmp(env, "0") == 0);
}

} // namespace ember::bench

#endif // EMBER_BENCH_BENCH_TABLE_MEMORY_H
