//===- PlanMemoryPlanner.cpp - Static arena offsets for plan slots --------===//
#include "plan/PlanMemoryPlanner.h"

#include "kernel_contract/kernel_contract.h"
#include "plan/PlanDataTypes.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

namespace mlir::ember::plan_emitter {

namespace pb = ::ember::plan;

namespace {

constexpr int64_t kAlignment = 64;
constexpr int64_t kMaxBytes = int64_t{1} << 46;

int64_t alignUp(int64_t v) {
  return (v + kAlignment - 1) / kAlignment * kAlignment;
}

/// The slot's size with every symbol at its bound; -1 when unbounded.
int64_t boundedBytes(const pb::Slot &slot,
                     const std::map<std::string, int64_t> &bounds) {
  int64_t bytes = planDtypeBytes(slot.dtype());
  if (bytes == 0)
    return -1;
  for (const pb::Dim &d : slot.shape()) {
    int64_t size;
    if (d.kind_case() == pb::Dim::kSize) {
      size = d.size();
    } else if (d.kind_case() == pb::Dim::kSymbol) {
      auto it = bounds.find(d.symbol());
      if (it == bounds.end())
        return -1;
      size = it->second * (d.factor() == 0 ? 1 : d.factor());
    } else {
      return -1;
    }
    if (size < 0)
      return -1;
    if (size != 0 && bytes > kMaxBytes / size)
      return -1;
    bytes *= size;
  }
  return bytes;
}

class Groups {
public:
  explicit Groups(size_t n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int find(int s) {
    while (parent_[s] != s)
      s = parent_[s] = parent_[parent_[s]];
    return s;
  }
  void unite(int a, int b) { parent_[find(a)] = find(b); }

private:
  std::vector<int> parent_;
};

/// Slots that share one place in the arena: a slot and the results
/// computed in place over it, in a chain.
struct Candidate {
  std::vector<int> slots;
  int first, last; // lifetime, inclusive instruction indices
  int64_t bytes;
  int64_t offset = -1;
};

bool sameType(const pb::Slot &a, const pb::Slot &b) {
  if (a.dtype() != b.dtype() || a.shape_size() != b.shape_size())
    return false;
  for (int d = 0; d < a.shape_size(); ++d) {
    const pb::Dim &x = a.shape(d), &y = b.shape(d);
    if (x.kind_case() != y.kind_case() || x.size() != y.size() ||
        x.symbol() != y.symbol() ||
        (x.factor() == 0 ? 1 : x.factor()) !=
            (y.factor() == 0 ? 1 : y.factor()))
      return false;
  }
  return true;
}

} // namespace

namespace {
const ::ember::contract::KernelContract *contractFor(llvm::StringRef kernel) {
  return ::ember::contract::findKernelContract(
      std::string_view(kernel.data(), kernel.size()));
}
} // namespace

bool isViewKernel(llvm::StringRef kernel) {
  const ::ember::contract::KernelContract *c = contractFor(kernel);
  return c && c->outputsAliasInputs();
}

bool isInPlaceKernel(llvm::StringRef kernel) {
  const ::ember::contract::KernelContract *c = contractFor(kernel);
  return c && c->elementwiseInPlace();
}

std::vector<std::string> batchSymbols(const pb::Plan &plan) {
  auto leading = [](const pb::TensorSpec &spec) -> std::string {
    if (spec.shape_size() > 0 && spec.shape(0).kind_case() == pb::Dim::kSymbol)
      return spec.shape(0).symbol();
    return "";
  };
  // A dim 0 shared by an input and an output is the batch (a 1-D input's
  // dim 0 alone may be an id count).
  std::set<std::string> outputs, symbols;
  for (const pb::TensorSpec &out : plan.signature().outputs())
    if (std::string s = leading(out); !s.empty())
      outputs.insert(s);
  for (const pb::TensorSpec &in : plan.signature().inputs())
    if (std::string s = leading(in); !s.empty() && outputs.count(s))
      symbols.insert(s);
  for (const pb::KjtSpec &kjt : plan.signature().kjt_inputs())
    symbols.insert(kjt.batch_symbol().empty() ? "B" : kjt.batch_symbol());
  return {symbols.begin(), symbols.end()};
}

MemoryPlanStats planMemory(pb::RankProgram &program,
                           const std::map<std::string, int64_t> &bounds,
                           const std::vector<int> &keepUntil) {
  const int numSlots = program.slots_size();
  const int numInstrs = program.instructions_size();
  std::vector<int> definedBy(numSlots, -1), last(numSlots, -1);
  std::vector<bool> isView(numSlots, false), isOutput(numSlots, false);
  Groups groups(numSlots);
  auto valid = [&](int s) { return s >= 0 && s < numSlots; };
  for (int i = 0; i < numInstrs; ++i) {
    const pb::Instruction &in = program.instructions(i);
    bool view = isViewKernel(in.kernel());
    for (int s : in.inputs())
      if (valid(s))
        last[s] = i;
    for (int s : in.outputs()) {
      if (!valid(s))
        continue;
      definedBy[s] = i;
      last[s] = std::max(last[s], i);
      isView[s] = view;
      if (view)
        for (int x : in.inputs())
          if (valid(x))
            groups.unite(s, x);
    }
  }
  for (int s : program.output_slots())
    if (valid(s))
      isOutput[s] = true;
  for (int s = 0; s < numSlots && s < static_cast<int>(keepUntil.size()); ++s)
    if (definedBy[s] >= 0 && keepUntil[s] > last[s])
      last[s] = keepUntil[s];
  std::vector<int> groupLast(numSlots, -1);
  for (int s = 0; s < numSlots; ++s) {
    int g = groups.find(s);
    groupLast[g] = std::max(groupLast[g], isOutput[s] ? numInstrs : last[s]);
  }

  MemoryPlanStats stats;
  std::vector<Candidate> candidates;
  std::vector<int> candidateOf(numSlots, -1);
  for (int s = 0; s < numSlots; ++s) {
    program.mutable_slots(s)->clear_arena_offset();
    if (definedBy[s] < 0 || isView[s])
      continue;
    int64_t bytes = boundedBytes(program.slots(s), bounds);
    if (bytes <= 0) { // unbounded (or empty: nothing to place)
      ++stats.dynamicSlots;
      continue;
    }
    candidateOf[s] = static_cast<int>(candidates.size());
    candidates.push_back({{s}, definedBy[s], groupLast[groups.find(s)], bytes});
  }

  // In place: the result of an elementwise kernel takes the place of an
  // input of the same type that dies at that instruction (and has no view
  // alive after it), so chains like tanh(sigmoid(x)) use one buffer.
  std::vector<bool> merged(candidates.size(), false);
  for (int i = 0; i < numInstrs; ++i) {
    const pb::Instruction &in = program.instructions(i);
    if (in.outputs_size() == 0 || !isInPlaceKernel(in.kernel()))
      continue;
    int out = in.outputs(0);
    if (!valid(out) || candidateOf[out] < 0)
      continue;
    for (int x : in.inputs()) {
      if (!valid(x) || candidateOf[x] < 0 || candidateOf[x] == candidateOf[out])
        continue;
      Candidate &host = candidates[candidateOf[x]];
      if (host.last != i || !sameType(program.slots(x), program.slots(out)))
        continue;
      Candidate &guest = candidates[candidateOf[out]];
      host.slots.push_back(out);
      host.last = guest.last;
      merged[candidateOf[out]] = true;
      candidateOf[out] = candidateOf[x];
      break;
    }
  }

  // Largest first; each at the lowest aligned offset that no already placed
  // slot with an overlapping lifetime occupies.
  std::vector<Candidate *> order;
  for (size_t c = 0; c < candidates.size(); ++c)
    if (!merged[c])
      order.push_back(&candidates[c]);
  std::stable_sort(order.begin(), order.end(),
                   [](const Candidate *a, const Candidate *b) {
                     return a->bytes > b->bytes;
                   });
  std::vector<const Candidate *> placed;
  int64_t arenaBytes = 0;
  for (Candidate *c : order) {
    std::vector<std::pair<int64_t, int64_t>> busy; // [begin, end)
    for (const Candidate *p : placed)
      if (p->first <= c->last && c->first <= p->last && p->bytes > 0)
        busy.push_back({p->offset, p->offset + alignUp(p->bytes)});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + c->bytes <= begin)
        break;
      offset = std::max(offset, end);
    }
    c->offset = offset;
    placed.push_back(c);
    arenaBytes = std::max(arenaBytes, alignUp(offset + c->bytes));
    stats.sumBytes += alignUp(c->bytes) * static_cast<int64_t>(c->slots.size());
    stats.plannedSlots += static_cast<int>(c->slots.size());
  }
  for (const Candidate *c : order)
    for (int slot : c->slots)
      program.mutable_slots(slot)->set_arena_offset(
          static_cast<uint64_t>(c->offset));
  stats.arenaBytes = arenaBytes;
  program.set_arena_bytes(static_cast<uint64_t>(arenaBytes));
  return stats;
}

} // namespace mlir::ember::plan_emitter
