//===- trace_events.cpp - Timelines of Ember runs as trace events ---------===//
//
// A part is a header line, "ember-trace-part 1 RANK WORLD", then one event
// per line: "BEGIN_NS<TAB>DUR_NS<TAB>MEMBERS", where MEMBERS are the JSON
// members of the event other than ts and dur ("-" for what an event lacks:
// metadata has neither, flow events no dur). The merge turns the times into
// microseconds from the earliest begin over all parts.
//
//===----------------------------------------------------------------------===//
#include "ember/trace.h"

#include "core/json_string.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace ember {

namespace {

const char *kPartHeader = "ember-trace-part 1";

bool isCollective(const SessionTrace &t, int instruction) {
  return instruction >= 0 &&
         instruction < static_cast<int>(t.instructions.size()) &&
         t.instructions[instruction].collectiveSequence >= 0;
}

const TracedInstruction &described(const SessionTrace &t, int instruction) {
  static const TracedInstruction unknown{"unknown", "", -1};
  if (instruction < 0 || instruction >= static_cast<int>(t.instructions.size()))
    return unknown;
  return t.instructions[instruction];
}

} // namespace

TraceSplit summarizeTrace(const SessionTrace &trace) {
  TraceSplit split;
  for (const std::vector<TraceSlice> &run : trace.runs) {
    if (run.empty())
      continue;
    int64_t first = std::numeric_limits<int64_t>::max(), last = 0;
    // A pipelined run's two communication threads may both be in a
    // collective: comm is the time with at least one in flight.
    std::vector<std::pair<int64_t, int64_t>> collectives;
    for (const TraceSlice &s : run) {
      first = std::min(first, s.beginNs);
      last = std::max(last, s.endNs);
      double ms = static_cast<double>(s.endNs - s.beginNs) / 1e6;
      bool collective = !s.wait && isCollective(trace, s.instruction);
      if (s.wait) {
        if (s.track == 0)
          split.exposedCommMs += ms;
      } else if (collective) {
        collectives.emplace_back(s.beginNs, s.endNs);
        if (s.track == 0)
          split.exposedCommMs += ms;
      } else {
        split.computeMs += ms;
      }
    }
    std::sort(collectives.begin(), collectives.end());
    int64_t coveredUntil = std::numeric_limits<int64_t>::min();
    for (const auto &[begin, end] : collectives) {
      if (end > coveredUntil)
        split.commMs +=
            static_cast<double>(end - std::max(begin, coveredUntil)) / 1e6;
      coveredUntil = std::max(coveredUntil, end);
    }
    split.stepMs += static_cast<double>(last - first) / 1e6;
    ++split.runs;
  }
  if (split.runs > 0) {
    double n = split.runs;
    split.stepMs /= n;
    split.computeMs /= n;
    split.commMs /= n;
    split.exposedCommMs /= n;
  }
  return split;
}

std::string encodeTracePart(const SessionTrace &trace, bool batchArgs) {
  std::ostringstream out;
  const int rank = trace.rank, world = trace.worldSize;
  out << kPartHeader << ' ' << rank << ' ' << world << '\n';
  out << "-\t-\t\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << rank
      << ",\"args\":{\"name\":\"rank " << rank << "\"}\n";
  out << "-\t-\t\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << rank
      << ",\"tid\":0,\"args\":{\"name\":\"stream 0 (compute)\"}\n";
  out << "-\t-\t\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << rank
      << ",\"tid\":1,\"args\":{\"name\":\"stream 1 (communication)\"}\n";
  bool collectiveTrack = false;
  for (const std::vector<TraceSlice> &run : trace.runs)
    for (const TraceSlice &s : run)
      collectiveTrack = collectiveTrack || s.track == 2;
  if (collectiveTrack)
    out << "-\t-\t\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << rank
        << ",\"tid\":2,\"args\":{\"name\":\"stream 1 (output "
           "collectives, pipelined)\"}\n";
  for (size_t batch = 0; batch < trace.runs.size(); ++batch) {
    for (const TraceSlice &s : trace.runs[batch]) {
      const TracedInstruction &in = described(trace, s.instruction);
      const int64_t dur = std::max<int64_t>(0, s.endNs - s.beginNs);
      std::string where = "\"pid\":" + std::to_string(rank) +
                          ",\"tid\":" + std::to_string(s.track);
      std::string batchArg =
          batchArgs ? ",\"batch\":" + std::to_string(batch) : "";
      out << s.beginNs << '\t' << dur << "\t\"ph\":\"X\"," << where;
      if (s.wait) {
        out << ",\"name\":" << jsonString("wait " + in.kernel)
            << ",\"cat\":\"wait\",\"args\":{\"instruction\":" << s.instruction
            << batchArg << "}\n";
        continue;
      }
      const bool collective = in.collectiveSequence >= 0;
      out << ",\"name\":" << jsonString(in.kernel) << ",\"cat\":\""
          << (collective ? "collective" : "compute")
          << "\",\"args\":{\"instruction\":" << s.instruction
          << ",\"bytes\":" << s.bytes
          << ",\"location\":" << jsonString(in.location) << batchArg << "}\n";
      if (!collective || world < 2)
        continue;
      // The flow that links this collective across the ranks.
      const char *ph = rank == 0 ? "s" : rank == world - 1 ? "f" : "t";
      const int64_t id =
          in.collectiveSequence + static_cast<int64_t>(batch) * 1000000;
      out << s.beginNs + dur / 2 << "\t-\t\"ph\":\"" << ph << "\"," << where
          << ",\"id\":" << id
          << ",\"cat\":\"collective\",\"name\":" << jsonString(in.kernel)
          << (rank == world - 1 ? ",\"bp\":\"e\"" : "") << "\n";
    }
  }
  return out.str();
}

Result<std::string> mergeTraceParts(
    const std::vector<std::string> &parts,
    const std::vector<std::pair<std::string, std::string>> &provenance) {
  struct Line {
    int64_t ts = -1, dur = -1; // -1: absent
    std::string members;
  };
  std::vector<Line> lines;
  int64_t origin = std::numeric_limits<int64_t>::max();
  int world = -1;
  std::set<int> ranks;
  for (size_t p = 0; p < parts.size(); ++p) {
    std::istringstream in(parts[p]);
    std::string header;
    std::getline(in, header);
    int rank = -1, w = -1;
    std::string prefix = std::string(kPartHeader) + ' ';
    auto bad = [&](const std::string &why) {
      return invalidArgument("trace part " + std::to_string(p) + ": " + why);
    };
    if (header.rfind(prefix, 0) != 0 ||
        std::sscanf(header.c_str() + prefix.size(), "%d %d", &rank, &w) != 2 ||
        w < 1 || rank < 0 || rank >= w)
      return bad("not an Ember trace part (header '" + header.substr(0, 60) +
                 "')");
    if (world >= 0 && w != world)
      return bad("is of a run of " + std::to_string(w) + " ranks, not " +
                 std::to_string(world));
    world = w;
    if (!ranks.insert(rank).second)
      return bad("rank " + std::to_string(rank) + " appears twice");
    std::string text;
    while (std::getline(in, text)) {
      size_t t1 = text.find('\t');
      size_t t2 = t1 == std::string::npos ? t1 : text.find('\t', t1 + 1);
      if (t2 == std::string::npos)
        return bad("malformed event line '" + text.substr(0, 60) + "'");
      Line line;
      auto number = [&](const std::string &f, int64_t &v) {
        if (f == "-")
          return true;
        char *end = nullptr;
        long long x = std::strtoll(f.c_str(), &end, 10);
        if (f.empty() || *end != '\0' || x < 0)
          return false;
        v = x;
        return true;
      };
      if (!number(text.substr(0, t1), line.ts) ||
          !number(text.substr(t1 + 1, t2 - t1 - 1), line.dur))
        return bad("malformed times in '" + text.substr(0, 60) + "'");
      line.members = text.substr(t2 + 1);
      if (line.ts >= 0)
        origin = std::min(origin, line.ts);
      lines.push_back(std::move(line));
    }
  }
  if (world < 0)
    return invalidArgument("no trace parts to merge");
  if (static_cast<int>(ranks.size()) != world)
    return invalidArgument("trace parts of " + std::to_string(ranks.size()) +
                           " of " + std::to_string(world) +
                           " ranks: every rank's part is needed");
  if (origin == std::numeric_limits<int64_t>::max())
    origin = 0;
  std::string json = "{\"traceEvents\": [\n";
  char buf[64];
  for (size_t i = 0; i < lines.size(); ++i) {
    const Line &l = lines[i];
    json += "{";
    if (l.ts >= 0) {
      std::snprintf(buf, sizeof(buf), "\"ts\":%.3f,",
                    static_cast<double>(l.ts - origin) / 1e3);
      json += buf;
    }
    if (l.dur >= 0) {
      std::snprintf(buf, sizeof(buf), "\"dur\":%.3f,",
                    static_cast<double>(l.dur) / 1e3);
      json += buf;
    }
    json += l.members;
    json += i + 1 < lines.size() ? "},\n" : "}\n";
  }
  json +=
      "],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": {\"ember_trace\": 1, "
      "\"kind\": \"measured\", \"ranks\": " +
      std::to_string(world);
  for (const auto &[name, value] : provenance)
    json += ", " + jsonString(name) + ": " + value;
  json += "}\n}\n";
  return json;
}

} // namespace ember
