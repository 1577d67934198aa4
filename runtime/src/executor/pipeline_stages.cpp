//===- pipeline_stages.cpp - A program's stages for pipelining ------------===//
#include "executor/pipeline_stages.h"

namespace ember {

namespace {

/// The first stream-0 instruction at or after `stageEnd` that waits for a
/// stream-1 instruction at or after `stageEnd`, or the program's size.
int findComputeAheadEnd(const Program &program, const StreamSchedule &schedule,
                        int stageEnd) {
  const int n = static_cast<int>(program.instructions.size());
  for (int i = stageEnd; i < n; ++i) {
    if (program.instructions[i].stream != 0)
      continue;
    if (static_cast<size_t>(i) < schedule.awaits.size())
      for (int j : schedule.awaits[i])
        if (j >= stageEnd)
          return i;
  }
  return n;
}

Result<int> checkInputDistribution(const Program &program) {
  const int n = static_cast<int>(program.instructions.size());
  int end = 0;
  while (end < n && program.instructions[end].inputDistribution)
    ++end;
  for (int i = end; i < n; ++i)
    if (program.instructions[i].inputDistribution)
      return invalidArgument(
          program.instructions[i].location +
          " is marked input_distribution but follows " +
          program.instructions[end].location +
          ", which is not: the input distribution must be a prefix of the "
          "program");
  if (end == 0)
    return 0;
  bool anyCollective = false;
  for (int i = 0; i < end; ++i) {
    const InstructionInfo &in = program.instructions[i];
    anyCollective = anyCollective || in.collective >= 0 || in.stream == 1;
    for (int s : in.inputs) {
      if (s < 0)
        continue;
      const SlotInfo &slot = program.slots[s];
      if (slot.kind == SlotInfo::Kind::kInstruction &&
          (slot.definedBy < 0 || slot.definedBy >= end))
        return invalidArgument(
            in.location + " is marked input_distribution but reads " +
            program.describeSlot(s) + ", which " +
            (slot.definedBy >= 0
                 ? program.instructions[slot.definedBy].location
                 : std::string("no instruction")) +
            " writes outside the input distribution");
    }
  }
  if (!anyCollective)
    return invalidArgument(
        "the input distribution (the first " + std::to_string(end) +
        " instructions, marked input_distribution) has no collective");
  return end;
}

} // namespace

Result<PipelineStages> findPipelineStages(const Program &program,
                                          const StreamSchedule &schedule) {
  EMBER_ASSIGN_OR_RETURN(int end, checkInputDistribution(program));
  PipelineStages stages;
  stages.inputDistributionEnd = end;
  stages.computeAheadEnd =
      end == 0 ? 0 : findComputeAheadEnd(program, schedule, end);
  for (int i = 0; i < end; ++i)
    if (program.instructions[i].stream == 1 ||
        program.instructions[i].collective >= 0)
      stages.lastInputCollective = i;
  return stages;
}

} // namespace ember
