//===- trace.h - Timelines of Ember runs ------------------------*- C++ -*-===//
//
// A session created with SessionOptions::recordTrace notes when each
// instruction of each run ran, on which thread, and how long a thread
// waited for the other (Session::takeTrace). These functions turn that into
// the Chrome trace-event JSON of docs/trace-format.md (opens in Perfetto),
// across ranks: each rank encodes its part, one process merges the parts.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TRACE_H
#define EMBER_TRACE_H

#include "ember/status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ember {

/// One slice of a run: an instruction that ran, or a wait for one.
struct TraceSlice {
  int instruction = -1; // the instruction that ran, or (wait) the awaited one
  int track = 0;        // 0: the caller's thread (stream 0); 1: communication;
                        // 2: a pipelined run's output collectives
  bool wait = false;
  int64_t beginNs = 0; // CLOCK_MONOTONIC, nanoseconds
  int64_t endNs = 0;
  int64_t bytes = 0; // read + written; sent + received for a collective
};

/// An instruction of the rank's program, as a trace names it.
struct TracedInstruction {
  std::string kernel;          // "embedding_bag", "all_to_all"
  std::string location;        // the plan's source location ("" when none)
  int collectiveSequence = -1; // n-th collective in program order, or -1
};

struct SessionTrace {
  int rank = 0;
  int worldSize = 1;
  std::string overlap; // "streams" or "off": how the runs ran
  std::vector<TracedInstruction> instructions;
  /// The recorded runs, oldest first: each one's slices.
  std::vector<std::vector<TraceSlice>> runs;
};

/// Per-run averages of a rank's trace (docs/trace-format.md, "The split").
struct TraceSplit {
  int runs = 0;
  double stepMs = 0;        // last end minus first start
  double computeMs = 0;     // compute instructions
  double commMs = 0;        // time with a collective in flight on any
                            // thread (the union of their slices)
  double exposedCommMs = 0; // time the caller's thread spent in collectives
                            // or waiting for them
};
TraceSplit summarizeTrace(const SessionTrace &trace);

/// This rank's events, one JSON object per line with absolute timestamps
/// (a part for mergeTraceParts). Every run is a batch ("batch": i) when
/// `batchArgs` is true.
std::string encodeTracePart(const SessionTrace &trace, bool batchArgs = false);

/// The trace file of every rank's part (docs/trace-format.md): timestamps
/// from the earliest event of all parts. `provenance` adds members to
/// "otherData" (name, already JSON-encoded value). A part that is not one
/// encodeTracePart wrote is an InvalidArgument naming it (its index).
Result<std::string> mergeTraceParts(
    const std::vector<std::string> &parts,
    const std::vector<std::pair<std::string, std::string>> &provenance);

} // namespace ember

#endif // EMBER_TRACE_H
