//===- stream_schedule.cpp - A program's streams, checked for the CPU -----===//
#include "executor/stream_schedule.h"

#include "kernels/kernel_registry.h"

#include <algorithm>
#include <utility>

namespace ember {

namespace {

using Range = std::pair<int64_t, int64_t>; // [begin, end) of the static arena

bool overlaps(const std::vector<Range> &a, const std::vector<Range> &b) {
  for (const Range &x : a)
    for (const Range &y : b)
      if (x.first < y.second && y.first < x.second)
        return true;
  return false;
}

/// Checks and happens-before bookkeeping over the streams a program uses.
class ScheduleBuilder {
public:
  explicit ScheduleBuilder(const Program &program) : program_(program) {}

  Result<StreamSchedule> build();

private:
  Status computeAwaits();
  void computeClocks();
  Status checkReads() const;
  Status checkStaticArena() const;
  /// Whether instruction `before` (on stream s) is known complete when
  /// instruction `after` starts.
  bool happensBefore(int before, int after) const {
    int s = denseStream_[program_.instructions[before].stream];
    return clockBefore_[after * numDense_ + s] >= before;
  }

  const Program &program_;
  StreamSchedule schedule_;
  std::vector<int> denseStream_; // plan stream -> 0..numDense_-1
  int numDense_ = 0;
  /// clockBefore_[i * numDense_ + s]: the latest instruction of stream s
  /// known complete when instruction i starts (-1: none).
  std::vector<int> clockBefore_;
};

Result<StreamSchedule> ScheduleBuilder::build() {
  const int n = static_cast<int>(program_.instructions.size());
  schedule_.awaits.assign(n, {});
  schedule_.awaited.assign(n, 0);
  schedule_.collectiveSequence.assign(n, -1);
  schedule_.slotUses.assign(program_.slots.size(), 0);
  int collectives = 0;
  bool onStream1 = false, onlyTwo = true;
  denseStream_.assign(std::max(program_.numStreams, 1), -1);
  for (int i = 0; i < n; ++i) {
    const InstructionInfo &in = program_.instructions[i];
    if (in.collective >= 0)
      schedule_.collectiveSequence[i] = collectives++;
    for (int s : in.inputs)
      if (s >= 0)
        ++schedule_.slotUses[s];
    for (int s : in.outputs)
      if (s >= 0)
        ++schedule_.slotUses[s];
    onStream1 = onStream1 || in.stream == 1;
    onlyTwo = onlyTwo && in.stream <= 1;
    if (denseStream_[in.stream] < 0)
      denseStream_[in.stream] = numDense_++;
  }
  schedule_.concurrent = onStream1 && onlyTwo;
  EMBER_RETURN_IF_ERROR(computeAwaits());
  if (numDense_ > 1) {
    computeClocks();
    EMBER_RETURN_IF_ERROR(checkReads());
    EMBER_RETURN_IF_ERROR(checkStaticArena());
  }
  return std::move(schedule_);
}

Status ScheduleBuilder::computeAwaits() {
  std::vector<int> lastRecorder(program_.numEvents, -1);
  for (int i = 0; i < static_cast<int>(program_.instructions.size()); ++i) {
    const InstructionInfo &in = program_.instructions[i];
    for (int e : in.waitEvents) {
      // The loader checked that an earlier instruction records it.
      if (e < 0 || e >= program_.numEvents || lastRecorder[e] < 0)
        return internalError(in.location + ": waits for event " +
                             std::to_string(e) + ", which nothing recorded");
      int j = lastRecorder[e];
      if (program_.instructions[j].stream == in.stream)
        continue; // the stream's own order covers it
      auto &awaits = schedule_.awaits[i];
      if (std::find(awaits.begin(), awaits.end(), j) == awaits.end())
        awaits.push_back(j);
      schedule_.awaited[j] = 1;
    }
    for (int e : in.recordEvents)
      if (e >= 0 && e < program_.numEvents)
        lastRecorder[e] = i;
  }
  return Status::ok();
}

void ScheduleBuilder::computeClocks() {
  const int n = static_cast<int>(program_.instructions.size());
  clockBefore_.assign(static_cast<size_t>(n) * numDense_, -1);
  std::vector<int> previous(numDense_, -1); // latest instruction per stream
  auto after = [&](int j, int k) { // clock of j once j completed, stream k
    int s = denseStream_[program_.instructions[j].stream];
    return k == s ? j : clockBefore_[static_cast<size_t>(j) * numDense_ + k];
  };
  for (int i = 0; i < n; ++i) {
    int s = denseStream_[program_.instructions[i].stream];
    int *clock = &clockBefore_[static_cast<size_t>(i) * numDense_];
    if (previous[s] >= 0)
      for (int k = 0; k < numDense_; ++k)
        clock[k] = after(previous[s], k);
    for (int j : schedule_.awaits[i])
      for (int k = 0; k < numDense_; ++k)
        clock[k] = std::max(clock[k], after(j, k));
    previous[s] = i;
  }
}

Status ScheduleBuilder::checkReads() const {
  for (int i = 0; i < static_cast<int>(program_.instructions.size()); ++i) {
    const InstructionInfo &in = program_.instructions[i];
    for (int slot : in.inputs) {
      if (slot < 0 || program_.slots[slot].kind != SlotInfo::Kind::kInstruction)
        continue;
      int j = program_.slots[slot].definedBy;
      const InstructionInfo &writer = program_.instructions[j];
      if (writer.stream == in.stream || happensBefore(j, i))
        continue;
      return invalidArgument(
          in.location + " on stream " + std::to_string(in.stream) + " reads " +
          program_.describeSlot(slot) + ", which " + writer.location +
          " writes on stream " + std::to_string(writer.stream) +
          ", without waiting for an event recorded by it or by a later "
          "instruction of stream " +
          std::to_string(writer.stream) +
          " (a wait_events entry is missing: the read would race with the "
          "write)");
    }
  }
  return Status::ok();
}

Status ScheduleBuilder::checkStaticArena() const {
  const int n = static_cast<int>(program_.instructions.size());
  // The static-arena ranges each slot's memory may lie in: its own, or for
  // the outputs of kernels that return views, those of their inputs.
  std::vector<std::vector<Range>> ranges(program_.slots.size());
  for (size_t s = 0; s < program_.slots.size(); ++s) {
    const SlotInfo &info = program_.slots[s];
    if (info.arenaOffset >= 0)
      ranges[s].push_back(
          {info.arenaOffset,
           info.arenaOffset + std::max<int64_t>(info.arenaCapacity, 1)});
  }
  for (const InstructionInfo &in : program_.instructions)
    if (in.kernel && in.kernel->outputsAliasInputs)
      for (int out : in.outputs)
        if (out >= 0 && program_.slots[out].arenaOffset < 0)
          for (int x : in.inputs)
            if (x >= 0)
              ranges[out].insert(ranges[out].end(), ranges[x].begin(),
                                 ranges[x].end());
  std::vector<std::vector<int>> byStream(numDense_);
  for (int i = 0; i < n; ++i)
    byStream[denseStream_[program_.instructions[i].stream]].push_back(i);
  // An instruction d that defines a slot with its own place in the static
  // arena overwrites that memory: whatever an earlier instruction u of
  // another stream read or wrote there must be done first.
  for (int d = 0; d < n; ++d) {
    const InstructionInfo &def = program_.instructions[d];
    for (int b : def.outputs) {
      if (b < 0 || program_.slots[b].arenaOffset < 0)
        continue;
      for (int k = 0; k < numDense_; ++k)
        for (int u : byStream[k]) {
          const InstructionInfo &use = program_.instructions[u];
          if (u >= d)
            break;
          if (use.stream == def.stream || happensBefore(u, d))
            continue;
          for (const std::vector<int> *slots : {&use.inputs, &use.outputs})
            for (int a : *slots) {
              if (a < 0 || a == b || !overlaps(ranges[a], ranges[b]))
                continue;
              return invalidArgument(
                  def.location + " on stream " + std::to_string(def.stream) +
                  " writes " + program_.describeSlot(b) +
                  " at static arena offset " +
                  std::to_string(program_.slots[b].arenaOffset) +
                  ", over the memory of " + program_.describeSlot(a) +
                  ", which " + use.location + " uses on stream " +
                  std::to_string(use.stream) +
                  ", without waiting for an event recorded by it or by a later "
                  "instruction of stream " +
                  std::to_string(use.stream) +
                  " (the memory plan does not fit the plan's streams)");
            }
        }
    }
  }
  return Status::ok();
}

} // namespace

Result<StreamSchedule> buildStreamSchedule(const Program &program) {
  return ScheduleBuilder(program).build();
}

} // namespace ember
