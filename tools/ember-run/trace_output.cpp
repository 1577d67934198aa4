//===- trace_output.cpp - ember-run --trace and --stats -------------------===//
#include "trace_output.h"

#include "io/atomic_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ember::tools {

Status checkTraceDestination(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return invalidArgument("--trace '" + path + "' is a directory");
  // Opening the temporary beside it is the real test (then discarded).
  AtomicFile probe;
  std::string error;
  if (!probe.open(path, &error))
    return invalidArgument("--trace '" + path + "': " + error);
  probe.discard();
  return Status::ok();
}

std::string tracePartPath(const std::string &path, int rank) {
  return path + ".rank" + std::to_string(rank) + ".part";
}

Status writeTracePart(const std::string &path, int rank,
                      const std::string &part) {
  AtomicFile f;
  std::string error;
  if (!f.open(tracePartPath(path, rank), &error))
    return invalidArgument("--trace: " + error);
  f.write(part.data(), part.size());
  if (!f.commit(&error))
    return invalidArgument("--trace: " + error);
  return Status::ok();
}

void removeTracePart(const std::string &path, int rank) {
  std::error_code ec;
  std::filesystem::remove(tracePartPath(path, rank), ec);
}

Result<std::string> mergeRankParts(
    const std::string &path, int world,
    const std::vector<std::pair<std::string, std::string>> &provenance) {
  std::vector<std::string> parts(world);
  Status status;
  for (int r = 0; r < world && status.isOk(); ++r) {
    std::ifstream in(tracePartPath(path, r), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in)
      status =
          invalidArgument("--trace: cannot read rank " + std::to_string(r) +
                          "'s part '" + tracePartPath(path, r) + "'");
    parts[r] = text.str();
  }
  for (int r = 0; r < world; ++r)
    removeTracePart(path, r);
  if (!status.isOk())
    return status;
  return mergeTraceParts(parts, provenance);
}

std::string formatTraceSplit(const SessionTrace &trace) {
  TraceSplit split = summarizeTrace(trace);
  char buf[320];
  double share =
      split.commMs > 0 ? 100.0 * split.exposedCommMs / split.commMs : 0.0;
  std::snprintf(buf, sizeof(buf),
                "rank %d: step %.3f ms, compute %.3f ms, collectives %.3f ms, "
                "exposed communication %.3f ms (%.1f%% of collectives); "
                "overlap %s, mean of %d run(s)",
                trace.rank, split.stepMs, split.computeMs, split.commMs,
                split.exposedCommMs, share, trace.overlap.c_str(), split.runs);
  return buf;
}

} // namespace ember::tools
