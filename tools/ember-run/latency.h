//===- latency.h - Latency statistics and the JSON report -------*- C++ -*-===//
#ifndef EMBER_TOOLS_EMBER_RUN_LATENCY_H
#define EMBER_TOOLS_EMBER_RUN_LATENCY_H

#include "core/json_string.h" // jsonString, for the JSON report

#include <cstdint>
#include <string>
#include <vector>

namespace ember::tools {

struct LatencyStats {
  int64_t runs = 0;
  double minMs = 0, medianMs = 0, p90Ms = 0, p99Ms = 0, meanMs = 0, maxMs = 0;
  double samplesPerSecond = 0; // batch * runs / total time
  /// The process's CPU time (user + system, every thread: the caller's, the
  /// communication threads', Gloo's) over the timed runs, per run: what a
  /// run costs the machine, without startup and warm-up.
  double cpuMsPerRun = 0;
};

/// CPU time (user + system) this process has used so far, all its threads,
/// in milliseconds.
double processCpuMs();

/// Nearest-rank percentiles over per-run latencies in milliseconds.
LatencyStats computeLatencyStats(std::vector<double> latenciesMs,
                                 int64_t batchSize);

} // namespace ember::tools

#endif // EMBER_TOOLS_EMBER_RUN_LATENCY_H
