//===- latency.cpp - Latency statistics and the JSON report ---------------===//
#include "latency.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ember::tools {

LatencyStats computeLatencyStats(std::vector<double> ms, int64_t batchSize) {
  LatencyStats s;
  if (ms.empty())
    return s;
  std::sort(ms.begin(), ms.end());
  auto rank = [&](double p) {
    size_t k =
        static_cast<size_t>(std::ceil(p * static_cast<double>(ms.size())));
    return ms[std::min(ms.size() - 1, k == 0 ? 0 : k - 1)];
  };
  double total = 0;
  for (double v : ms)
    total += v;
  s.runs = static_cast<int64_t>(ms.size());
  s.minMs = ms.front();
  s.maxMs = ms.back();
  s.medianMs = rank(0.5);
  s.p90Ms = rank(0.9);
  s.p99Ms = rank(0.99);
  s.meanMs = total / static_cast<double>(ms.size());
  s.samplesPerSecond = total > 0 ? static_cast<double>(batchSize) *
                                       static_cast<double>(ms.size()) /
                                       (total / 1000.0)
                                 : 0;
  return s;
}

double processCpuMs() {
  struct rusage u {};
  if (::getrusage(RUSAGE_SELF, &u) != 0)
    return 0;
  auto ms = [](const timeval &t) {
    return static_cast<double>(t.tv_sec) * 1000.0 +
           static_cast<double>(t.tv_usec) / 1000.0;
  };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

} // namespace ember::tools
