//===- memory_plan.cpp - Validating the compiler's memory plan ------------===//
#include "plan/memory_plan.h"

#include "kernels/kernel_registry.h"
#include "plan/ember_plan.pb.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <string>
#include <utility>

namespace ember {

namespace {

constexpr int64_t kMaxArenaBytes = int64_t{1} << 46;
constexpr int64_t kArenaAlignment = 64;

/// Union-find over slots: views and what they view share storage.
class StorageGroups {
public:
  explicit StorageGroups(size_t n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int find(int s) {
    while (parent_[s] != s) {
      parent_[s] = parent_[parent_[s]];
      s = parent_[s];
    }
    return s;
  }
  void unite(int a, int b) { parent_[find(a)] = find(b); }

private:
  std::vector<int> parent_;
};

} // namespace

std::vector<SlotLifetime> computeStorageLifetimes(const Program &program) {
  const int numSlots = static_cast<int>(program.slots.size());
  const int numInstrs = static_cast<int>(program.instructions.size());
  StorageGroups groups(numSlots);
  std::vector<int> last(numSlots, -1);
  for (int i = 0; i < numInstrs; ++i) {
    const InstructionInfo &in = program.instructions[i];
    for (int s : in.inputs)
      if (s >= 0)
        last[s] = i;
    // Output -1 is an optional output the plan leaves out (an unweighted
    // KJT's weights).
    for (int s : in.outputs)
      if (s >= 0)
        last[s] = std::max(last[s], i);
    if (in.kernel && in.kernel->outputsAliasInputs)
      for (int out : in.outputs)
        for (int s : in.inputs)
          if (s >= 0 && out >= 0)
            groups.unite(out, s);
  }
  std::vector<int> groupLast(numSlots, -1);
  for (int s = 0; s < numSlots; ++s) {
    int end = program.slots[s].isOutput ? numInstrs : last[s];
    int g = groups.find(s);
    groupLast[g] = std::max(groupLast[g], end);
  }
  std::vector<SlotLifetime> lifetimes(numSlots);
  for (int s = 0; s < numSlots; ++s) {
    const SlotInfo &info = program.slots[s];
    if (info.kind != SlotInfo::Kind::kInstruction)
      continue;
    lifetimes[s].first = info.definedBy;
    lifetimes[s].last = groupLast[groups.find(s)];
  }
  return lifetimes;
}

Status validateMemoryPlan(const plan::RankProgram &rp, Program &program) {
  const uint64_t arenaBytes = rp.arena_bytes();
  if (arenaBytes > static_cast<uint64_t>(kMaxArenaBytes) ||
      arenaBytes % kArenaAlignment != 0)
    return invalidArgument("arena_bytes " + std::to_string(arenaBytes) +
                           " is not a multiple of 64 below 2^46");
  program.staticArenaBytes = static_cast<int64_t>(arenaBytes);

  struct Planned {
    int slot;
    int64_t offset, capacity;
  };
  std::vector<Planned> planned;
  for (int s = 0; s < rp.slots_size(); ++s) {
    if (!rp.slots(s).has_arena_offset())
      continue;
    SlotInfo &info = program.slots[s];
    std::string what = program.describeSlot(s);
    uint64_t offset = rp.slots(s).arena_offset();
    if (info.kind != SlotInfo::Kind::kInstruction)
      return invalidArgument(what +
                             " has an arena offset but is not the result of "
                             "an instruction");
    const InstructionInfo &def = program.instructions[info.definedBy];
    if (def.kernel && def.kernel->outputsAliasInputs)
      return invalidArgument(what + " has an arena offset but its kernel '" +
                             def.kernelName +
                             "' makes it a view of an input (views need no "
                             "memory of their own)");
    if (offset % kArenaAlignment != 0)
      return invalidArgument(what + " has arena offset " +
                             std::to_string(offset) + ", not a multiple of 64");
    unsigned __int128 bytes = dtypeSize(info.dtype);
    for (int d = 0; d < info.rank; ++d) {
      const DimSpec &spec = info.dims[d];
      int64_t size = spec.size;
      if (spec.isSymbolic()) {
        int64_t bound = program.symbolMax[spec.symbol];
        if (bound < 0)
          return invalidArgument(what +
                                 " has an arena offset but its size "
                                 "depends on '" +
                                 program.symbols[spec.symbol] +
                                 "', which has no bound in the plan");
        size = bound * spec.factor;
      }
      bytes *= static_cast<uint64_t>(size);
      if (bytes > static_cast<unsigned __int128>(kMaxArenaBytes))
        return invalidArgument(what + " is too large for the static arena");
    }
    auto capacity = static_cast<int64_t>(bytes);
    if (offset > arenaBytes ||
        capacity > static_cast<int64_t>(arenaBytes - offset))
      return invalidArgument(what + " needs bytes [" + std::to_string(offset) +
                             ", " + std::to_string(offset + capacity) +
                             ") of a static arena of " +
                             std::to_string(arenaBytes) + " bytes");
    info.arenaOffset = static_cast<int64_t>(offset);
    info.arenaCapacity = capacity;
    if (capacity > 0)
      planned.push_back({s, static_cast<int64_t>(offset), capacity});
  }
  if (planned.empty())
    return Status::ok();

  // Slots alive at the same time must not share bytes. Sweep the slots in
  // order of definition, keeping the live ones ordered by offset (they are
  // disjoint, so each new one need only be checked against its neighbours).
  // Ties in slot order (planned is in slot order; std::sort, not
  // std::stable_sort, whose temporary buffer clang 22 warns about in
  // libstdc++ 12).
  std::vector<SlotLifetime> life = computeStorageLifetimes(program);
  std::sort(planned.begin(), planned.end(),
            [&](const Planned &a, const Planned &b) {
              return std::make_pair(life[a.slot].first, a.slot) <
                     std::make_pair(life[b.slot].first, b.slot);
            });
  std::map<int64_t, const Planned *> live; // by offset
  using Expiry = std::pair<int, const Planned *>; // (last use, slot)
  auto later = [](const Expiry &a, const Expiry &b) { return a.first > b.first; };
  std::priority_queue<Expiry, std::vector<Expiry>, decltype(later)> expiries(
      later);
  auto conflict = [&](const Planned &a, const Planned &b) {
    return invalidArgument(
        "the memory plan overlaps " + program.describeSlot(a.slot) +
        " (arena bytes [" + std::to_string(a.offset) + ", " +
        std::to_string(a.offset + a.capacity) + "), alive in instructions " +
        std::to_string(life[a.slot].first) + ".." +
        std::to_string(life[a.slot].last) + ") with " +
        program.describeSlot(b.slot) + " (bytes [" + std::to_string(b.offset) +
        ", " + std::to_string(b.offset + b.capacity) + "), instructions " +
        std::to_string(life[b.slot].first) + ".." +
        std::to_string(life[b.slot].last) + ")");
  };
  // In place: `p` takes exactly the bytes of `x`, an input of the
  // instruction defining p that dies there, with the same dtype and shape,
  // and the kernel declares that it computes elementwise in place.
  auto inPlace = [&](const Planned &x, const Planned &p) {
    const SlotInfo &xs = program.slots[x.slot], &ps = program.slots[p.slot];
    const InstructionInfo &def = program.instructions[ps.definedBy];
    if (!def.kernel || !def.kernel->elementwiseInPlace || def.outputs.empty() ||
        def.outputs[0] != p.slot || x.offset != p.offset ||
        x.capacity != p.capacity || life[x.slot].last != ps.definedBy ||
        xs.dtype != ps.dtype || xs.rank != ps.rank ||
        std::find(def.inputs.begin(), def.inputs.end(), x.slot) ==
            def.inputs.end())
      return false;
    for (int d = 0; d < xs.rank; ++d)
      if (xs.dims[d].size != ps.dims[d].size ||
          xs.dims[d].symbol != ps.dims[d].symbol ||
          xs.dims[d].factor != ps.dims[d].factor)
        return false;
    return true;
  };
  for (const Planned &p : planned) {
    int now = life[p.slot].first;
    while (!expiries.empty() && expiries.top().first < now) {
      const Planned *gone = expiries.top().second;
      auto it = live.find(gone->offset);
      if (it != live.end() && it->second == gone)
        live.erase(it);
      expiries.pop();
    }
    auto next = live.lower_bound(p.offset);
    if (next != live.end() && next->first < p.offset + p.capacity) {
      if (!inPlace(*next->second, p))
        return conflict(*next->second, p);
      next = live.erase(next); // x dies here; p takes its bytes
    }
    if (next != live.begin()) {
      const Planned &prev = *std::prev(next)->second;
      if (prev.offset + prev.capacity > p.offset)
        return conflict(prev, p);
    }
    live.emplace(p.offset, &p);
    expiries.push({life[p.slot].last, &p});
  }
  return Status::ok();
}

} // namespace ember
