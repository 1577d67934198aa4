//===- stream_read.cpp - Streaming-read bandwidth of this machine ---------===//
//
// A STREAM-like read benchmark: sums a large float array (far beyond the
// caches) with 1..T threads, each thread reading its own contiguous part,
// and prints the best bandwidth of several passes. This is the ceiling the
// embedding lookups are compared with in docs/performance.md.
//
//   bench_stream_read [--mib 1024] [--threads 2] [--passes 5] [--hugepages 1]
//
// --hugepages 1 puts the array in transparent huge pages (2 MiB aligned,
// madvise(MADV_HUGEPAGE)), as the lookup benchmarks' --hugepages does with
// their tables, so a lookup in huge pages is compared with a stream read in
// huge pages; by default the array is in whatever pages new[] gets.
//
// Output: one line per thread count, e.g.
//   stream_read threads=1 mib=1024 best_gbps=21.3 (GB = 1e9 bytes)
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <vector>

namespace {

/// Sums [begin, end) with 8 independent accumulators (vectorized at -O3).
float sumRange(const float *begin, const float *end) {
  float acc[16] = {};
  const float *p = begin;
  for (; p + 16 <= end; p += 16)
    for (int k = 0; k < 16; ++k)
      acc[k] += p[k];
  float total = 0;
  for (; p < end; ++p)
    total += *p;
  for (float a : acc)
    total += a;
  return total;
}

double passSeconds(const float *data, size_t n, int threads,
                   volatile float *sink) {
  std::vector<std::thread> workers;
  std::vector<float> partial(threads);
  auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      size_t b = n * t / threads, e = n * (t + 1) / threads;
      partial[t] = sumRange(data + b, data + e);
    });
  for (auto &w : workers)
    w.join();
  auto end = std::chrono::steady_clock::now();
  float total = 0;
  for (float p : partial)
    total += p;
  *sink = total;
  return std::chrono::duration<double>(end - start).count();
}

} // namespace

int main(int argc, char **argv) {
  long mib = 1024;
  int maxThreads = 2, passes = 5;
  long hugePages = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    long value = std::strtol(argv[i + 1], nullptr, 10);
    if (flag == "--mib")
      mib = value;
    else if (flag == "--threads")
      maxThreads = static_cast<int>(value);
    else if (flag == "--passes")
      passes = static_cast<int>(value);
    else if (flag == "--hugepages")
      hugePages = value;
    else {
      std::fprintf(stderr, "bench_stream_read: unknown flag %s\n",
                   flag.c_str());
      return 2;
    }
  }
  if (mib <= 0 || maxThreads <= 0 || passes <= 0) {
    std::fprintf(
        stderr,
        "bench_stream_read: --mib, --threads and --passes must be positive\n");
    return 2;
  }
  if (hugePages != 0 && hugePages != 1) {
    std::fprintf(stderr, "bench_stream_read: --hugepages must be 0 or 1\n");
    return 2;
  }
  size_t n = static_cast<size_t>(mib) * (1 << 20) / sizeof(float);
  std::unique_ptr<float, void (*)(float *)> data(
      nullptr, [](float *p) { std::free(p); });
  constexpr size_t kHuge = size_t{2} << 20;
  if (hugePages) {
    const size_t bytes = (n * sizeof(float) + kHuge - 1) / kHuge * kHuge;
    data.reset(static_cast<float *>(std::aligned_alloc(kHuge, bytes)));
#ifdef MADV_HUGEPAGE
    if (data)
      madvise(data.get(), bytes, MADV_HUGEPAGE);
#endif
  } else {
    data.reset(static_cast<float *>(std::malloc(n * sizeof(float))));
  }
  if (!data) {
    std::fprintf(stderr, "bench_stream_read: cannot allocate %ld MiB\n", mib);
    return 1;
  }
  for (size_t i = 0; i < n; ++i) // touch every page
    data.get()[i] = static_cast<float>(i & 1023);
  volatile float sink = 0;
  for (int threads = 1; threads <= maxThreads; ++threads) {
    double best = 1e30;
    for (int p = 0; p < passes; ++p)
      best = std::min(best, passSeconds(data.get(), n, threads, &sink));
    std::printf(
        "stream_read threads=%d mib=%ld best_gbps=%.2f (GB = 1e9 bytes)\n",
        threads, mib, n * sizeof(float) / best / 1e9);
  }
  return 0;
}
