//===- TraceJson.h - a timeline as Chrome trace-event JSON ------*- C++ -*-===//
//
// Writes a Timeline in the trace format that `ember-run --trace` also
// writes (docs/trace-format.md): one process per rank, one thread per
// stream, a complete event per instruction and per wait, flow events
// linking each collective across the ranks, and `otherData` saying what
// the figures are ("kind": "predicted", the topology and sizes assumed).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_TIMELINE_TRACEJSON_H
#define EMBER_COMPILER_TIMELINE_TRACEJSON_H

#include "timeline/TimelineSimulator.h"

#include <string>

namespace ember::timeline {

/// Provenance written into otherData.
struct TraceProvenance {
  std::string model;       // the input file
  std::string target;      // cpu | cuda
  std::string topologyFile;
};

/// The JSON text of `timeline`.
std::string traceJson(const Timeline &timeline,
                      const ::ember::sharding::Topology &topology,
                      const SizeAssumptions &sizes,
                      const TraceProvenance &provenance);

} // namespace ember::timeline

#endif // EMBER_COMPILER_TIMELINE_TRACEJSON_H
