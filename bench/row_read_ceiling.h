//===- row_read_ceiling.h - The loads-only bound of a lookup ----*- C++ -*-===//
//
// How fast can any kernel bring a batch's rows into the core? The loads-only
// loop reads the rows a lookup reads, in the lookup's order, and does nothing
// else: for each id one 4-byte load per 64-byte line of the row (the row's
// first byte, every 64 bytes after it, and its last 4 bytes), summed so the
// loads happen, with the same lines prefetched `distance` ids ahead. A
// pooling kernel does all of that and its arithmetic besides, so it is
// rarely faster than this loop at its best distance; where one is, its
// prefetching gets more out of the memory system than one prefetch per line
// does. The ratio of the two says roughly how much a kernel, Ember's or a
// peer's, could still gain on this machine and table.
// Ids outside [0, rows) are skipped.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BENCH_ROW_READ_CEILING_H
#define EMBER_BENCH_ROW_READ_CEILING_H

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ember::bench {

struct RowReads {
  const uint8_t *table = nullptr;
  int64_t rows = 0;
  int64_t rowBytes = 0; // bytes per row, scale and bias included
  const int64_t *ids = nullptr;
  int64_t numIds = 0;
};

namespace detail {
/// prefetcht2 of the line at `p`. Inline asm on x86: GCC may delete a loop
/// whose only statements are __builtin_prefetch calls (see
/// runtime/src/kernels/cpu/embedding_pool_loop.h).
inline void prefetchLine(const uint8_t *p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht2 %0" : : "m"(*p));
#else
  __builtin_prefetch(p, 0, 1);
#endif
}

/// readRows for rows of kLines 64-byte lines from their first byte (0: any
/// number, `lines`). Each row's words are summed on their own before the
/// row's sum joins the total, so no row's loads wait for another's.
template <int kLines>
uint32_t readRowsOf(const RowReads &r, int64_t begin, int64_t end,
                    int64_t distance, int64_t lines) {
  const int64_t n = kLines > 0 ? kLines : lines;
  const int64_t rowBytes = r.rowBytes;
  const uint64_t rows = static_cast<uint64_t>(r.rows);
  auto word = [](const uint8_t *p) {
    uint32_t w;
    std::memcpy(&w, p, 4);
    return w;
  };
  uint32_t sum = 0;
  for (int64_t i = begin; i < end; ++i) {
    if (distance > 0 && i + distance < end) {
      const uint64_t ahead = static_cast<uint64_t>(r.ids[i + distance]);
      if (ahead < rows) {
        const uint8_t *p = r.table + ahead * rowBytes;
        for (int64_t l = 0; l < n; ++l)
          prefetchLine(p + 64 * l);
        prefetchLine(p + rowBytes - 1);
      }
    }
    const uint64_t id = static_cast<uint64_t>(r.ids[i]);
    if (id >= rows)
      continue;
    const uint8_t *p = r.table + id * rowBytes;
    // Every 64 bytes from the row's first byte but the last, whose load may
    // not fit in the row, then the row's last 4 bytes: every line the row
    // touches, whatever its alignment.
    uint32_t row = word(p + rowBytes - 4);
    for (int64_t l = 0; l + 1 < n; ++l)
      row += word(p + 64 * l);
    sum ^= row + word(p + std::min<int64_t>(64 * (n - 1), rowBytes - 4));
  }
  return sum;
}
} // namespace detail

/// Reads the rows of ids [begin, end) as described above; returns a hash
/// of the loaded words (only so the loads cannot be removed). Rows must
/// have at least 4 bytes.
inline uint32_t readRows(const RowReads &r, int64_t begin, int64_t end,
                         int64_t distance) {
  const int64_t lines = (r.rowBytes + 63) / 64;
  switch (lines) {
  case 1:
    return detail::readRowsOf<1>(r, begin, end, distance, lines);
  case 2:
    return detail::readRowsOf<2>(r, begin, end, distance, lines);
  case 3:
    return detail::readRowsOf<3>(r, begin, end, distance, lines);
  case 4:
    return detail::readRowsOf<4>(r, begin, end, distance, lines);
  case 8:
    return detail::readRowsOf<8>(r, begin, end, distance, lines);
  default:
    return detail::readRowsOf<0>(r, begin, end, distance, lines);
  }
}

/// Seconds for one pass of readRows over all ids, on this thread. (One
/// thread only: on a 2-vCPU VM a second thread's loop measured anywhere
/// from 0.6x to 1.6x of the kernels' time, no bound at all.)
inline double timeRowReads(const RowReads &r, int64_t distance) {
  static volatile uint32_t sink = 0;
  const auto start = std::chrono::steady_clock::now();
  sink = sink + readRows(r, 0, r.numIds, distance);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The prefetch distances (ids ahead) the ceiling tries: none, and 4 to 64.
inline std::vector<int64_t> ceilingDistances() { return {0, 4, 8, 16, 32, 64}; }

/// Reads the flush buffer (before every timed run, not timed), so rows of
/// the previous run are not in the caches.
inline void readFlush(const std::vector<uint64_t> &flush) {
  static volatile uint64_t sink = 0;
  uint64_t sum = 0;
  for (uint64_t v : flush)
    sum += v;
  sink = sink + sum;
}

/// The prefetch distance at which the loads-only loop is fastest: the
/// least median of three runs (each after reading `flush`) at each of
/// ceilingDistances().
inline int64_t fastestCeilingDistance(const RowReads &reads,
                                      const std::vector<uint64_t> &flush) {
  int64_t best = 0;
  double bestTime = 0;
  for (int64_t d : ceilingDistances()) {
    std::vector<double> t;
    for (int i = 0; i < 3; ++i) {
      readFlush(flush);
      t.push_back(timeRowReads(reads, d));
    }
    std::sort(t.begin(), t.end());
    if (bestTime == 0 || t[1] < bestTime) {
      bestTime = t[1];
      best = d;
    }
  }
  return best;
}

} // namespace ember::bench

#endif // EMBER_BENCH_ROW_READ_CEILING_H
