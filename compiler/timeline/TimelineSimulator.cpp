//===- TimelineSimulator.cpp - a plan's predicted schedule ----------------===//
#include "timeline/TimelineSimulator.h"

#include <algorithm>

namespace ember::timeline {
namespace {

namespace pb = ::ember::plan;

llvm::Error makeError(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// One rank's progress through its program.
struct RankState {
  const pb::RankProgram *program = nullptr;
  std::vector<InstructionCost> costs;
  int next = 0;
  /// When each stream is free.
  double streamFree[2] = {0, 0};
  /// When each event was recorded (-1: not yet), and by which instruction.
  std::vector<double> eventTime;
  std::vector<int> eventRecorder;
};

class Simulator {
public:
  Simulator(const pb::Plan &plan, Timeline &out) : plan(plan), out(out) {}

  llvm::Error run(const ::ember::sharding::Topology &topology,
                  const SizeAssumptions &sizes) {
    const int ranks = plan.programs_size();
    out.ranks = ranks;
    states.resize(ranks);
    for (int r = 0; r < ranks; ++r) {
      RankState &s = states[r];
      s.program = &plan.programs(r);
      s.costs = costInstructions(plan, r, topology, sizes);
      s.eventTime.assign(std::max(0, s.program->num_events()), -1.0);
      s.eventRecorder.assign(s.eventTime.size(), -1);
      out.streamsPerRank.push_back(s.program->num_streams() >= 2 ? 2 : 1);
    }
    for (int k = 0; k < plan.collectives_size(); ++k) {
      std::vector<double> ready(ranks, 0);
      double start = 0, longest = 0;
      for (int r = 0; r < ranks; ++r) {
        RankState &s = states[r];
        runComputeUntilCollective(r);
        if (s.next >= s.program->instructions_size())
          return makeError("rank " + std::to_string(r) + " runs " +
                           std::to_string(k) + " collectives, the plan lists " +
                           std::to_string(plan.collectives_size()));
        const pb::Instruction &in = s.program->instructions(s.next);
        if (in.collective() != k + 1)
          return makeError("instruction " + std::to_string(s.next) +
                           " of rank " + std::to_string(r) + " ('" +
                           in.kernel() + "') runs collective " +
                           std::to_string(in.collective() - 1) +
                           " where collective " + std::to_string(k) +
                           " comes next");
        ready[r] = issue(r, in);
        start = std::max(start, ready[r]);
        longest = std::max(longest, s.costs[s.next].seconds);
      }
      CollectiveSpan span;
      span.collective = k;
      span.transferStart = start;
      span.transferEnd = start + longest;
      for (int r = 0; r < ranks; ++r) {
        RankState &s = states[r];
        const pb::Instruction &in = s.program->instructions(s.next);
        span.kernel = in.kernel();
        span.streams.push_back(streamOf(r, in));
        Slice slice = sliceOf(r, s.next, ready[r], span.transferEnd);
        slice.kind = SliceKind::Collective;
        slice.collective = k;
        finish(r, in, slice);
        ++s.next;
      }
      out.collectives.push_back(span);
    }
    for (int r = 0; r < ranks; ++r) {
      runComputeUntilCollective(r);
      RankState &s = states[r];
      if (s.next < s.program->instructions_size())
        return makeError("instruction " + std::to_string(s.next) + " of rank " +
                         std::to_string(r) + " ('" +
                         s.program->instructions(s.next).kernel() +
                         "') runs a collective the plan does not list");
    }
    std::stable_sort(out.slices.begin(), out.slices.end(),
                     [](const Slice &a, const Slice &b) {
                       if (a.rank != b.rank)
                         return a.rank < b.rank;
                       if (a.stream != b.stream)
                         return a.stream < b.stream;
                       return a.start < b.start;
                     });
    return llvm::Error::success();
  }

private:
  int streamOf(int r, const pb::Instruction &in) const {
    return out.streamsPerRank[r] == 2 && in.stream() == 1 ? 1 : 0;
  }

  Slice sliceOf(int r, int index, double start, double end) const {
    const RankState &s = states[r];
    const pb::Instruction &in = s.program->instructions(index);
    Slice slice;
    slice.rank = r;
    slice.stream = streamOf(r, in);
    slice.start = start;
    slice.end = end;
    slice.kernel = in.kernel();
    slice.instruction = index;
    slice.bytes = s.costs[index].bytes;
    slice.flops = s.costs[index].flops;
    slice.location = in.name();
    return slice;
  }

  /// When `in` can start on its stream: after its stream's earlier work and
  /// the events it waits for (a wait slice covers the time blocked).
  double issue(int r, const pb::Instruction &in) {
    RankState &s = states[r];
    int stream = streamOf(r, in);
    double t = s.streamFree[stream];
    double until = t;
    int awaited = -1;
    for (int e : in.wait_events())
      if (e >= 0 && e < static_cast<int>(s.eventTime.size()) &&
          s.eventTime[e] > until) {
        until = s.eventTime[e];
        awaited = s.eventRecorder[e];
      }
    if (awaited >= 0 && until > t) {
      Slice wait = sliceOf(r, awaited, t, until);
      wait.stream = stream;
      wait.kind = SliceKind::Wait;
      wait.bytes = 0;
      wait.flops = 0;
      out.slices.push_back(wait);
    }
    return until;
  }

  void finish(int r, const pb::Instruction &in, const Slice &slice) {
    RankState &s = states[r];
    s.streamFree[slice.stream] = slice.end;
    for (int e : in.record_events())
      if (e >= 0 && e < static_cast<int>(s.eventTime.size())) {
        s.eventTime[e] = slice.end;
        s.eventRecorder[e] = slice.instruction;
      }
    out.slices.push_back(slice);
  }

  void runComputeUntilCollective(int r) {
    RankState &s = states[r];
    while (s.next < s.program->instructions_size() &&
           s.program->instructions(s.next).collective() == 0) {
      const pb::Instruction &in = s.program->instructions(s.next);
      double start = issue(r, in);
      finish(r, in, sliceOf(r, s.next, start, start + s.costs[s.next].seconds));
      ++s.next;
    }
  }

  const pb::Plan &plan;
  Timeline &out;
  std::vector<RankState> states;
};

} // namespace

llvm::Expected<Timeline> simulatePlan(const pb::Plan &plan,
                                      const ::ember::sharding::Topology &topology,
                                      const SizeAssumptions &sizes) {
  Timeline timeline;
  Simulator simulator(plan, timeline);
  if (llvm::Error error = simulator.run(topology, sizes))
    return error;
  return timeline;
}

} // namespace ember::timeline
