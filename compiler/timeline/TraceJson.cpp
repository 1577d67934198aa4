//===- TraceJson.cpp - a timeline as Chrome trace-event JSON --------------===//
#include "timeline/TraceJson.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <vector>

namespace ember::timeline {
namespace {

/// Seconds to the trace's microseconds, rounded to the picosecond (no
/// 2.9999999999999996 in the file).
double micros(double seconds) { return std::round(seconds * 1e12) / 1e6; }

const char *categoryOf(SliceKind kind) {
  switch (kind) {
  case SliceKind::Compute:
    return "compute";
  case SliceKind::Collective:
    return "collective";
  case SliceKind::Wait:
    return "wait";
  }
  return "compute";
}

const char *streamName(int stream) {
  return stream == 1 ? "stream 1 (communication)" : "stream 0 (compute)";
}

/// One event (or any object) as compact JSON.
template <typename Body> std::string objectText(Body body) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os);
  json.object([&] { body(json); });
  return text;
}

} // namespace

std::string traceJson(const Timeline &timeline,
                      const ::ember::sharding::Topology &topology,
                      const SizeAssumptions &sizes,
                      const TraceProvenance &provenance) {
  // One event a line (readable, and what lit tests match).
  std::vector<std::string> events;
  using llvm::json::OStream;
  for (int r = 0; r < timeline.ranks; ++r) {
    events.push_back(objectText([&](OStream &json) {
      json.attribute("ph", "M");
      json.attribute("name", "process_name");
      json.attribute("pid", r);
      json.attributeObject("args", [&] {
        json.attribute("name", "rank " + std::to_string(r));
      });
    }));
    for (int s = 0; s < timeline.streamsPerRank[r]; ++s)
      events.push_back(objectText([&](OStream &json) {
        json.attribute("ph", "M");
        json.attribute("name", "thread_name");
        json.attribute("pid", r);
        json.attribute("tid", s);
        json.attributeObject("args",
                             [&] { json.attribute("name", streamName(s)); });
      }));
  }
  for (const Slice &slice : timeline.slices)
    events.push_back(objectText([&](OStream &json) {
      json.attribute("ph", "X");
      json.attribute("pid", slice.rank);
      json.attribute("tid", slice.stream);
      json.attribute("ts", micros(slice.start));
      json.attribute("dur", micros(slice.end) - micros(slice.start));
      json.attribute("name", slice.kind == SliceKind::Wait
                                 ? "wait " + slice.kernel
                                 : slice.kernel);
      json.attribute("cat", categoryOf(slice.kind));
      json.attributeObject("args", [&] {
        json.attribute("instruction", slice.instruction);
        json.attribute("bytes", slice.bytes);
        json.attribute("location", slice.location);
        if (slice.kind == SliceKind::Compute)
          json.attribute("flops", slice.flops);
        if (slice.collective >= 0)
          json.attribute("collective", slice.collective);
      });
    }));
  // One flow chain per collective: s on rank 0, t on the middle ranks, f
  // (binding to its enclosing slice) on the last, each inside that rank's
  // slice of the collective.
  if (timeline.ranks > 1)
    for (const CollectiveSpan &span : timeline.collectives) {
      double ts = micros((span.transferStart + span.transferEnd) / 2);
      for (int r = 0; r < timeline.ranks; ++r)
        events.push_back(objectText([&](OStream &json) {
          json.attribute("ph", r == 0                    ? "s"
                               : r == timeline.ranks - 1 ? "f"
                                                         : "t");
          if (r == timeline.ranks - 1)
            json.attribute("bp", "e");
          json.attribute("id", span.collective);
          json.attribute("cat", "collective");
          json.attribute("name", span.kernel);
          json.attribute("pid", r);
          json.attribute("tid", span.streams[r]);
          json.attribute("ts", ts);
        }));
    }
  std::string other = objectText([&](OStream &json) {
    json.attribute("ember_trace", 1);
    json.attribute("kind", "predicted");
    json.attribute("ranks", timeline.ranks);
    json.attribute("model", provenance.model);
    json.attribute("target", provenance.target);
    bool streams = false;
    for (int s : timeline.streamsPerRank)
      streams |= s == 2;
    json.attribute("overlap", streams ? "comm-stream" : "program-order");
    json.attribute("batch_per_rank", sizes.batchPerRank);
    json.attribute("ids_per_bag", sizes.idsPerBag);
    json.attribute("cost_model", "docs/timeline.md");
    json.attributeObject("topology", [&] {
      if (!provenance.topologyFile.empty())
        json.attribute("file", provenance.topologyFile);
      json.attribute("world_size", topology.worldSize);
      json.attribute("ranks_per_node", topology.ranksPerNode);
      json.attribute("device_bandwidth_gb_per_s",
                     topology.deviceBandwidth / 1e9);
      json.attribute("lookup_efficiency", topology.lookupEfficiency);
      json.attribute("device_tflops", topology.deviceFlops / 1e12);
      json.attribute("intra_node_bandwidth_gb_per_s",
                     topology.intraNodeBandwidth / 1e9);
      json.attribute("inter_node_bandwidth_gb_per_s",
                     topology.interNodeBandwidth / 1e9);
      json.attribute("kernel_launch_us", topology.kernelLaunchSeconds * 1e6);
      json.attribute("collective_latency_us",
                     topology.collectiveLatencySeconds * 1e6);
    });
  });
  std::string text = "{\"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i)
    text += events[i] + (i + 1 < events.size() ? ",\n" : "\n");
  text += "],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": " + other + "\n}\n";
  return text;
}

} // namespace ember::timeline
