//===- run_trace.h - Instruction timings of one run -------------*- C++ -*-===//
//
// When a session records a trace (SessionOptions::recordTrace), each run
// notes when every instruction ran and when a thread waited for another
// (docs/trace-format.md). Each thread appends to its own list, so recording
// takes no lock; a run that does not record reads no clock.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_EXECUTOR_RUN_TRACE_H
#define EMBER_EXECUTOR_RUN_TRACE_H

#include "ember/trace.h"

#include <chrono>
#include <cstdint>
#include <vector>

namespace ember {

struct RunTrace {
  /// 0: the caller's thread; 1: the communication thread; 2: a pipelined
  /// run's collective thread (StreamExecution::collectiveThread).
  std::vector<TraceSlice> tracks[3];

  static int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

} // namespace ember

#endif // EMBER_EXECUTOR_RUN_TRACE_H
