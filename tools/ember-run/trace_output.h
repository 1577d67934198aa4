//===- trace_output.h - ember-run --trace and --stats ------------*- C++
//-*-===//
//
// --trace FILE: each rank encodes the trace of its timed runs
// (docs/trace-format.md); with several ranks each writes FILE.rankR.part
// (whole or not at all) before the final barrier, and rank 0 merges the
// parts into FILE, published with the other outputs, and removes them.
// --stats: each rank prints its step / collectives / exposed split.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_EMBER_RUN_TRACE_OUTPUT_H
#define EMBER_TOOLS_EMBER_RUN_TRACE_OUTPUT_H

#include "ember/status.h"
#include "ember/trace.h"

#include <string>
#include <utility>
#include <vector>

namespace ember::tools {

/// Refuses, before anything runs, a trace path where no file can be
/// written (a missing or read-only directory, a directory of that name).
Status checkTraceDestination(const std::string &path);

/// "FILE.rankR.part".
std::string tracePartPath(const std::string &path, int rank);

/// Writes this rank's part, whole or not at all.
Status writeTracePart(const std::string &path, int rank,
                      const std::string &part);

/// Removes this rank's part (when the run failed after writing it).
void removeTracePart(const std::string &path, int rank);

/// Rank 0: reads the parts of ranks 0..world-1, removes them and returns
/// the merged trace.
Result<std::string> mergeRankParts(
    const std::string &path, int world,
    const std::vector<std::pair<std::string, std::string>> &provenance);

/// "rank R: step 1.234 ms, compute ..., collectives ..., exposed
/// communication ... (P% of collectives), overlap streams, N run(s)".
std::string formatTraceSplit(const SessionTrace &trace);

} // namespace ember::tools

#endif // EMBER_TOOLS_EMBER_RUN_TRACE_OUTPUT_H
