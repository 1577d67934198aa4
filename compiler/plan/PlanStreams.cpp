//===- PlanStreams.cpp - Communication on its own stream ------------------===//
#include "plan/PlanStreams.h"

#include "plan/PlanPipelineStages.h"
#include "plan/PlanSlotWriters.h"

#include <algorithm>

namespace mlir::ember::plan_emitter {

namespace pb = ::ember::plan;

namespace {
constexpr int kComputeStream = 0;
constexpr int kCommStream = 1;

/// Reorders the instructions (a topological order still) so that
/// communication starts early and what waits for it comes late: among the
/// instructions whose inputs are computed, it takes first the next
/// collective (collectives keep their order, which every rank shares), then
/// an ancestor of a collective, then other work, and last an instruction
/// that reads the result of a collective not yet waited for; ties keep the
/// original order.
void scheduleForOverlap(pb::RankProgram &program) {
  const int n = program.instructions_size();
  const int numSlots = program.slots_size();
  auto valid = [&](int s) { return s >= 0 && s < numSlots; };
  const std::vector<int> definedBy = slotWriters(program);
  std::vector<std::vector<int>> deps(n), users(n);
  for (int i = 0; i < n; ++i)
    for (int s : program.instructions(i).inputs())
      if (valid(s) && definedBy[s] >= 0 && definedBy[s] != i &&
          std::find(deps[i].begin(), deps[i].end(), definedBy[s]) ==
              deps[i].end()) {
        deps[i].push_back(definedBy[s]);
        users[definedBy[s]].push_back(i);
      }
  auto isCollective = [&](int i) {
    return program.instructions(i).stream() == kCommStream;
  };
  // Ancestors of collectives (walk the dependencies back from each one).
  std::vector<char> feedsCollective(n, 0);
  for (int i = n - 1; i >= 0; --i)
    if (isCollective(i) || feedsCollective[i])
      for (int d : deps[i])
        feedsCollective[d] = 1;

  std::vector<int> unmet(n), order;
  for (int i = 0; i < n; ++i)
    unmet[i] = static_cast<int>(deps[i].size());
  std::vector<char> done(n, 0), awaited(n, 0);
  std::vector<int> issued; // collectives in their new order
  auto rank = [&](int i) {
    if (isCollective(i))
      return 0;
    for (int d : deps[i])
      if (isCollective(d) && !awaited[d])
        return 3; // would wait for communication
    return feedsCollective[i] ? 1 : 2;
  };
  // Every rank must issue its collectives in the same order: they keep
  // their original order (a collective waits for the earlier ones).
  std::vector<int> collectives;
  for (int i = 0; i < n; ++i)
    if (isCollective(i))
      collectives.push_back(i);
  size_t nextCollective = 0;
  for (int step = 0; step < n; ++step) {
    int best = -1, bestRank = 4;
    for (int i = 0; i < n; ++i)
      if (!done[i] && unmet[i] == 0 &&
          (!isCollective(i) || collectives[nextCollective] == i)) {
        int r = rank(i);
        if (r < bestRank) {
          best = i;
          bestRank = r;
        }
      }
    if (best < 0)
      return; // not a topological order (the loader reports it): keep it
    done[best] = 1;
    order.push_back(best);
    if (isCollective(best)) {
      issued.push_back(best);
      ++nextCollective;
    } else {
      // Waiting for collective d covers those issued before it (stream 1
      // runs in order).
      for (int d : deps[best])
        if (isCollective(d) && !awaited[d])
          for (int c : issued) {
            awaited[c] = 1;
            if (c == d)
              break;
          }
    }
    for (int u : users[best])
      --unmet[u];
  }
  google::protobuf::RepeatedPtrField<pb::Instruction> reordered;
  for (int i : order)
    *reordered.Add() = program.instructions(i);
  program.mutable_instructions()->Swap(&reordered);
}
} // namespace

std::vector<int> assignCommunicationStream(pb::RankProgram &program,
                                           int inputCollectives) {
  const int numSlots = program.slots_size();
  const int numInstrs = program.instructions_size();
  std::vector<int> keepUntil(numSlots, -1);
  auto isCollective = [&](int i) {
    return program.instructions(i).stream() == kCommStream;
  };
  bool any = false;
  for (int i = 0; i < numInstrs && !any; ++i)
    any = isCollective(i);
  if (!any)
    return keepUntil;
  scheduleForOverlap(program);
  // The input distribution first, marked for cross-batch pipelining.
  markInputDistribution(program,
                        inputCollectives < 0
                            ? leadingIndependentCollectives(program)
                            : inputCollectives);

  auto valid = [&](int s) { return s >= 0 && s < numSlots; };
  // What collective c reads or writes must not be reused before `until`:
  // stream 1 may still be working on it.
  auto keepAlive = [&](int c, int until) {
    const pb::Instruction &in = program.instructions(c);
    for (auto slots : {&in.inputs(), &in.outputs()})
      for (int s : *slots)
        if (valid(s))
          keepUntil[s] = std::max(keepUntil[s], until);
  };
  std::vector<int> definedBy(numSlots, -1);
  int numEvents = program.num_events();
  // Per collective: the event it records, and whether stream 0 waited yet.
  std::vector<int> doneEvent(numInstrs, -1);
  std::vector<int> pendingCollectives; // in program order, not yet awaited
  int lastCompute = -1;                // latest stream-0 instruction
  int lastComputeEvent = -1;           // its event, when one was recorded

  for (int i = 0; i < numInstrs; ++i) {
    pb::Instruction &in = *program.mutable_instructions(i);
    if (isCollective(i)) {
      in.set_stream(kCommStream);
      if (lastCompute >= 0) {
        if (lastComputeEvent < 0) {
          lastComputeEvent = numEvents++;
          program.mutable_instructions(lastCompute)
              ->add_record_events(lastComputeEvent);
        }
        in.add_wait_events(lastComputeEvent);
      }
      doneEvent[i] = numEvents++;
      in.add_record_events(doneEvent[i]);
      pendingCollectives.push_back(i);
    } else {
      in.set_stream(kComputeStream);
      // The latest pending collective whose result this instruction reads:
      // waiting for it covers every earlier one.
      int latest = -1;
      for (int s : in.inputs())
        if (valid(s) && definedBy[s] >= 0 && isCollective(definedBy[s]) &&
            std::find(pendingCollectives.begin(), pendingCollectives.end(),
                      definedBy[s]) != pendingCollectives.end())
          latest = std::max(latest, definedBy[s]);
      if (latest >= 0) {
        in.add_wait_events(doneEvent[latest]);
        auto end = std::upper_bound(pendingCollectives.begin(),
                                    pendingCollectives.end(), latest);
        for (auto it = pendingCollectives.begin(); it != end; ++it)
          keepAlive(*it, i);
        pendingCollectives.erase(pendingCollectives.begin(), end);
      }
      lastCompute = i;
      lastComputeEvent = -1;
    }
    for (int s : in.outputs())
      if (valid(s))
        definedBy[s] = i;
  }
  // Never awaited by stream 0: the runtime joins the streams at the end.
  for (int c : pendingCollectives)
    keepAlive(c, numInstrs);
  program.set_num_streams(2);
  program.set_num_events(numEvents);
  return keepUntil;
}

} // namespace mlir::ember::plan_emitter
