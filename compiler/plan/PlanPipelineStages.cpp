//===- PlanPipelineStages.cpp - The input distribution of a rank ----------===//
#include "plan/PlanPipelineStages.h"

#include "plan/PlanSlotWriters.h"

#include <vector>

namespace mlir::ember::plan_emitter {

namespace pb = ::ember::plan;

namespace {
/// Per instruction: whether it reads a collective's result, directly or
/// through compute (the program is in a topological order).
std::vector<char> readsCollective(const pb::RankProgram &program) {
  const int n = program.instructions_size();
  const int numSlots = program.slots_size();
  auto valid = [&](int s) { return s >= 0 && s < numSlots; };
  const std::vector<int> definedBy = slotWriters(program);
  std::vector<char> after(n, 0);
  for (int i = 0; i < n; ++i)
    for (int s : program.instructions(i).inputs())
      if (valid(s) && definedBy[s] >= 0 && definedBy[s] < i &&
          (program.instructions(definedBy[s]).stream() == 1 ||
           after[definedBy[s]]))
        after[i] = 1;
  return after;
}
} // namespace

int leadingIndependentCollectives(const pb::RankProgram &program) {
  std::vector<char> after = readsCollective(program);
  int count = 0;
  for (int i = 0; i < program.instructions_size(); ++i) {
    if (program.instructions(i).stream() != 1)
      continue;
    if (after[i])
      break;
    ++count;
  }
  return count;
}

int markInputDistribution(pb::RankProgram &program, int collectives) {
  const int n = program.instructions_size();
  const int numSlots = program.slots_size();
  auto valid = [&](int s) { return s >= 0 && s < numSlots; };
  auto isCollective = [&](int i) {
    return program.instructions(i).stream() == 1;
  };
  const std::vector<int> definedBy = slotWriters(program);
  std::vector<char> afterCollective = readsCollective(program);
  // Stage A's collectives: the first `collectives` ones, up to the first
  // that reads a collective's result.
  std::vector<char> stageA(n, 0);
  int lastCollective = -1, taken = 0;
  for (int i = 0; i < n && taken < collectives; ++i) {
    if (!isCollective(i))
      continue;
    if (afterCollective[i])
      break;
    stageA[i] = 1;
    lastCollective = i;
    ++taken;
  }
  if (lastCollective < 0)
    return 0;
  // With everything they depend on (walked back in program order).
  for (int i = lastCollective; i >= 0; --i)
    if (stageA[i])
      for (int s : program.instructions(i).inputs())
        if (valid(s) && definedBy[s] >= 0 && definedBy[s] < i)
          stageA[definedBy[s]] = 1;
  google::protobuf::RepeatedPtrField<pb::Instruction> reordered;
  int marked = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < n; ++i)
      if (static_cast<bool>(stageA[i]) == (pass == 0)) {
        pb::Instruction *in = reordered.Add();
        *in = program.instructions(i);
        in->set_input_distribution(pass == 0);
        marked += pass == 0;
      }
  program.mutable_instructions()->Swap(&reordered);
  return marked;
}

} // namespace mlir::ember::plan_emitter
