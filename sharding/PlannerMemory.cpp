//===- PlannerMemory.cpp - memory before UVM: making room -----------------===//
//
// Step 2b of the search, on every seed: host memory is the last resort.
// A greedy seed fills device memory in its own order; when a table then
// fits nowhere, or only in host memory (fused_uvm_caching), another
// arrangement of the tables already placed often has room for it. Here:
// - a table the seed could not place is placed by making room: one placed
//   table (the "victim", smallest first) is taken off, the table placed
//   (device-resident options first), and the victim placed again with any of
//   its options (any sharding type, column split and ranks that fit device
//   memory; host memory only when none does), keeping the cheapest
//   arrangement, then the one that serves least from host memory;
// - a table the seed serves from host memory is brought onto device memory
//   the same way when that lowers the host bytes of the plan without
//   raising its score.
// Every accepted change places every table and lowers the host bytes (or
// places a table that had no place), so the repair ends. The improvement
// step that follows never moves a device-resident table to host memory.
//
//===----------------------------------------------------------------------===//

#include "sharding/PlannerInternal.h"
#include "llvm/ADT/STLExtras.h"
#include <limits>

using namespace ember::sharding;
using namespace ember::sharding::detail;

namespace {

/// Victims tried per table to make room for (smallest first).
constexpr size_t kMaxVictims = 64;

bool isHostServed(ComputeKernel kernel) {
  return kernel == ComputeKernel::FusedUvmCaching ||
         kernel == ComputeKernel::FusedUvm;
}

/// The option indices of `options`, device-resident first, each group by
/// the least device memory in all (then the least cost).
std::vector<int> byDeviceBytes(ArrayRef<Option> options, bool deviceOnly) {
  std::vector<int> order;
  for (int i = 0, e = options.size(); i < e; ++i)
    if (!deviceOnly || !isHostServed(options[i].kernel))
      order.push_back(i);
  stableSort(order, [&](int a, int b) {
    bool hostA = isHostServed(options[a].kernel);
    bool hostB = isHostServed(options[b].kernel);
    if (hostA != hostB)
      return hostB;
    if (hostA && options[a].hostBytes != options[b].hostBytes)
      return options[a].hostBytes < options[b].hostBytes;
    int64_t bytesA = options[a].deviceBytes;
    int64_t bytesB = options[b].deviceBytes;
    if (bytesA != bytesB)
      return bytesA < bytesB;
    return options[a].totalCost < options[b].totalCost;
  });
  return order;
}

Placed takeOff(State &state, int table) {
  Placed placed{table, state.choice[table], state.ranksOf[table]};
  state.removeTable(table);
  return placed;
}

void putBack(State &state, const Placed &placed) {
  state.placeAt(placed.table, placed.choice, placed.ranks);
}

} // namespace

bool Planner::placeByMemory(State &state, int table, bool deviceOnly) const {
  for (int i : byDeviceBytes(tableOptions[table].options, deviceOnly))
    if (state.place(table, i, /*byMemory=*/true))
      return true;
  return false;
}

bool Planner::makeRoom(State &state, int table, bool deviceOnly,
                       int64_t hostLimit, Placed *moved) const {
  // Victims: tables the search may move, smallest on device first (what a
  // victim sent to host memory costs grows with its size).
  std::vector<std::pair<int64_t, int>> victims;
  for (int t = 0, e = specs.size(); t < e; ++t) {
    if (t == table || state.choice[t] < 0 || tableOptions[t].userFixed)
      continue;
    const Option &option = state.optionOf(t);
    if (isHostServed(option.kernel))
      continue;
    victims.push_back({option.deviceBytes, t});
  }
  llvm::sort(victims);
  if (victims.size() > kMaxVictims)
    victims.resize(kMaxVictims);

  int bestVictim = -1;
  int64_t bestHost = std::numeric_limits<int64_t>::max();
  double bestMax = 0, bestTotal = 0;
  Placed bestTable, bestVictimPlaced;
  for (auto [bytes, victim] : victims) {
    Placed old = takeOff(state, victim);
    if (placeByMemory(state, table, deviceOnly)) {
      if (placeByMemory(state, victim, /*deviceOnly=*/false)) {
        int64_t host = state.hostBytes();
        // Only arrangements that serve less from host memory than the
        // caller's limit count; of those the cheapest, then the one that
        // serves least from host memory.
        bool cheaper = bestVictim < 0 ||
                       better(state.maxCost(), state.totalCost(), bestMax,
                              bestTotal) ||
                       (!better(bestMax, bestTotal, state.maxCost(),
                                state.totalCost()) &&
                        host < bestHost);
        if (host < hostLimit && cheaper) {
          bestVictim = victim;
          bestHost = host;
          bestMax = state.maxCost();
          bestTotal = state.totalCost();
          bestTable = {table, state.choice[table], state.ranksOf[table]};
          bestVictimPlaced = {victim, state.choice[victim],
                              state.ranksOf[victim]};
        }
        state.removeTable(victim);
      }
      state.removeTable(table);
    }
    putBack(state, old);
  }
  if (bestVictim < 0)
    return false;
  if (moved)
    *moved = {bestVictim, state.choice[bestVictim], state.ranksOf[bestVictim]};
  state.removeTable(bestVictim);
  putBack(state, bestTable);
  putBack(state, bestVictimPlaced);
  return true;
}

void Planner::repairMemory(State &state, std::vector<int> &failed) const {
  // Tables with no place yet: directly (device first), else by making room.
  // A seed that left most tables out is not worth repairing (the others
  // are), and once one table finds no room the rest stay out too.
  if (failed.size() * 2 > specs.size())
    return;
  for (size_t i = 0; i < failed.size(); ++i) {
    int table = failed[i];
    if (placeByMemory(state, table, /*deviceOnly=*/false) ||
        makeRoom(state, table, /*deviceOnly=*/false,
                 std::numeric_limits<int64_t>::max(), nullptr))
      continue;
    failed.erase(failed.begin(), failed.begin() + i);
    return;
  }
  failed.clear();

  // Tables served from host memory: onto device memory when the plan then
  // serves less from host memory. Largest host share first; each accepted
  // change lowers the plan's host bytes.
  int64_t limit = 4 * static_cast<int64_t>(specs.size()) + 16;
  for (int64_t step = 0; step < limit; ++step) {
    std::vector<std::pair<int64_t, int>> hosted;
    for (int t = 0, e = specs.size(); t < e; ++t)
      if (!tableOptions[t].userFixed &&
          isHostServed(state.optionOf(t).kernel))
        hosted.push_back({state.optionOf(t).hostBytes, t});
    llvm::sort(hosted, [](auto &a, auto &b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    bool lowered = false;
    for (auto [bytes, table] : hosted) {
      int64_t hostBefore = state.hostBytes();
      double maxBefore = state.maxCost();
      Placed old = takeOff(state, table);
      Placed victim;
      if (placeByMemory(state, table, /*deviceOnly=*/true) ||
          makeRoom(state, table, /*deviceOnly=*/true, hostBefore, &victim)) {
        // Worth it only when the plan's score does not get worse (a table
        // in host memory that few lookups reach costs little there).
        if (state.maxCost() <= maxBefore * (1 + 1e-9)) {
          lowered = true;
          break;
        }
        state.removeTable(table);
        if (victim.table >= 0) {
          state.removeTable(victim.table);
          putBack(state, victim);
        }
        putBack(state, old);
        continue;
      }
      putBack(state, old);
    }
    if (!lowered)
      return;
  }
}
