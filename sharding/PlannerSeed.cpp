//===- PlannerSeed.cpp - the planner's greedy seed placements -------------===//
//
// Step 2 of the search: greedy passes that place the tables one by one
// (user-fixed tables first, then largest first) under three policies:
// "balanced" (the option and ranks that raise the running maximum cost
// least; device-resident kernels before UVM caching), "cheapest" (the option
// with the least total cost, on the least loaded ranks) and "memory" (the
// option with the smallest shards, on the ranks with the most free memory).
// "cheapest" and "replicas first" (balanced otherwise) place the tables whose
// cheapest option is a budgeted replica before the others: a replica needs
// room on every rank, and placed after the large tables it finds none on the
// fullest rank (1,000 tables on 64 ranks: 18 of 279 budgeted replicas placed
// otherwise). State::place is the greedy placement of one table that the seeds,
// the re-sharding step and the exact search all use.
//
//===----------------------------------------------------------------------===//

#include "sharding/PlannerInternal.h"
#include <limits>
#include <numeric>

using namespace ember::sharding;
using namespace ember::sharding::detail;

namespace {

/// Options with at least this many free shards are placed over all the
/// ranks sorted by key (State::chooseRanks); fewer over the first
/// kRanksPerShard per shard.
constexpr int kSortedPlacementShards = 16;
constexpr int64_t kRanksPerShard = 4;

} // namespace

bool State::place(int table, int index, bool byMemory) {
  std::vector<int64_t> ranks;
  if (!chooseRanks(table, index, byMemory, ranks))
    return false;
  placeAt(table, index, ranks);
  return true;
}

double State::heldMaxAfter(int table, int index, ArrayRef<int64_t> ranks) {
  const Option &option = tables[table].options[index];
  double result = 0;
  for (int shard = 0, e = ranks.size(); shard < e; ++shard)
    addExtra(ranks[shard], option, shard);
  for (int64_t rank : ranks)
    result = std::max(result, held[rank] + extraCost[rank]);
  clearExtra();
  return result;
}

bool State::chooseRanks(int table, int index, bool byMemory,
                        std::vector<int64_t> &ranks) {
  const Option &option = tables[table].options[index];
  if (option.budgeted &&
      replicaUsed + static_cast<double>(option.replicaBytes) > replicaBudget)
    return false;
  int numShards = option.shards.size();
  ranks.assign(numShards, -1);
  switch (option.placement) {
  case Placement::Fixed: {
    if (option.shardsOnDistinctRanks) {
      for (int shard = 0; shard < numShards; ++shard) {
        int64_t rank = option.shards[shard].rank;
        if (!fits(rank, option.unitDevice(shard), option.unitHost(shard)))
          return false;
        ranks[shard] = rank;
      }
      break;
    }
    // Several shards may share a rank (pinned column-wise): add them up.
    bool ok = true;
    for (int shard = 0; shard < numShards && ok; ++shard) {
      int64_t rank = option.shards[shard].rank;
      ok = fitsWithExtra(rank, option, shard);
      addExtra(rank, option, shard);
      ranks[shard] = rank;
    }
    clearExtra();
    if (!ok)
      return false;
    break;
  }
  case Placement::Free: {
    // Each shard goes to the rank that fits it with the lowest key (cost,
    // or device bytes when byMemory; ties to the lower rank), preferring a
    // rank this option does not use yet. Those ranks' keys do not change
    // while the option is placed, so the ranks are put in key order once
    // (all of them for many shards, else the first few: O(W) to select)
    // and each shard takes the first unused one that fits; a shard that no
    // unused rank in that order fits is placed by the scan below, over all
    // ranks, which prefers unused ones too.
    int64_t world = topology->worldSize;
    if (numShards == 1) {
      // Nothing is used yet: the fitting rank with the lowest key.
      const UnitLoad &unit = option.unit(0);
      int64_t best = -1;
      double bestKey = 0;
      for (int64_t rank = 0; rank < world; ++rank) {
        if (!fits(rank, unit.device, unit.host))
          continue;
        double key = byMemory ? static_cast<double>(device[rank]) : held[rank];
        if (best < 0 || key < bestKey) {
          best = rank;
          bestKey = key;
        }
      }
      if (best < 0)
        return false;
      ranks[0] = best;
      break;
    }
    auto isUsed = [&](int64_t rank) {
      return extraCost[rank] != 0 || extraDevice[rank] != 0 ||
             extraHost[rank] != 0;
    };
    auto keyOf = [&](int64_t rank) {
      return byMemory ? static_cast<double>(device[rank] + extraDevice[rank])
                      : held[rank] + extraCost[rank];
    };
    std::vector<int64_t> order(world);
    std::iota(order.begin(), order.end(), 0);
    std::vector<double> keys(world);
    for (int64_t rank = 0; rank < world; ++rank)
      keys[rank] = keyOf(rank);
    auto byKey = [&](int64_t a, int64_t b) {
      return keys[a] < keys[b] || (keys[a] == keys[b] && a < b);
    };
    int64_t prefix = numShards >= kSortedPlacementShards
                         ? world
                         : std::min<int64_t>(world, kRanksPerShard * numShards);
    if (prefix < world) {
      std::nth_element(order.begin(), order.begin() + prefix, order.end(),
                       byKey);
      order.resize(prefix);
    }
    std::sort(order.begin(), order.end(), byKey);
    std::vector<char> used(world, 0);
    size_t firstFree = 0; // order[0, firstFree) are all used
    bool ok = true;
    for (int shard = 0; shard < numShards && ok; ++shard) {
      while (firstFree < order.size() && used[order[firstFree]])
        ++firstFree;
      int64_t pick = -1;
      for (size_t i = firstFree; i < order.size(); ++i) {
        int64_t rank = order[i];
        if (!used[rank] && fitsWithExtra(rank, option, shard)) {
          pick = rank;
          break;
        }
      }
      if (pick >= 0) {
        ranks[shard] = pick;
        addExtra(pick, option, shard);
        used[pick] = isUsed(pick);
        continue;
      }
      int64_t best = -1;
      double bestKey = 0;
      bool bestUsed = true;
      for (int64_t rank = 0; rank < world; ++rank) {
        if (!fitsWithExtra(rank, option, shard))
          continue;
        double key = keyOf(rank);
        bool rankUsed = isUsed(rank);
        if (best < 0 || (bestUsed && !rankUsed) ||
            (bestUsed == rankUsed && key < bestKey)) {
          best = rank;
          bestKey = key;
          bestUsed = rankUsed;
        }
      }
      if (best < 0) {
        ok = false;
        break;
      }
      ranks[shard] = best;
      addExtra(best, option, shard);
      used[best] = isUsed(best);
    }
    clearExtra();
    if (!ok)
      return false;
    break;
  }
  case Placement::Node:
    return placeOnBestNode(
        option,
        [&](int64_t rank, int64_t shard) {
          return byMemory ? static_cast<double>(device[rank] +
                                                option.unitDevice(shard))
                          : held[rank] + option.unitCost(shard);
        },
        ranks);
  }
  return true;
}

std::unique_ptr<State> Planner::newState() const {
  auto state = std::make_unique<State>(options.topology, tableOptions,
                                       baseline, replicaBudget);
  state->replicaUsed = fixedReplicaBytes;
  return state;
}

std::vector<int> Planner::seed(State &state, Policy policy) const {
  int numTables = specs.size();
  // User-fixed tables first, then by weight, largest first.
  std::vector<double> weight(numTables, 0);
  for (int t = 0; t < numTables; ++t) {
    const auto &opts = tableOptions[t].options;
    double w = std::numeric_limits<double>::max();
    for (const Option &option : opts)
      w = std::min(w, policy == Policy::Memory || policy == Policy::Spill
                          ? static_cast<double>(option.maxShardDeviceBytes) *
                                static_cast<double>(option.shards.size())
                          : option.totalCost);
    weight[t] = w;
  }
  // Cheapest and ReplicasFirst: the tables whose cheapest option is a
  // budgeted replica next (a replica needs room on every rank).
  std::vector<char> replicaFirst(numTables, 0);
  if (policy == Policy::Cheapest || policy == Policy::ReplicasFirst)
    for (int t = 0; t < numTables; ++t)
      replicaFirst[t] = replicaIsCheapest(t);
  std::vector<int> order(numTables);
  std::iota(order.begin(), order.end(), 0);
  stableSort(order, [&](int a, int b) {
    if (tableOptions[a].userFixed != tableOptions[b].userFixed)
      return tableOptions[a].userFixed;
    if (replicaFirst[a] != replicaFirst[b])
      return replicaFirst[a] > replicaFirst[b];
    return weight[a] > weight[b];
  });

  std::vector<int> failed;
  std::vector<int64_t> ranks, bestRanks;
  double runningMax = *std::max_element(state.held.begin(), state.held.end());
  for (int t : order) {
    const auto &opts = tableOptions[t].options;
    int chosen = -1;
    if (policy == Policy::Balanced || policy == Policy::ReplicasFirst) {
      // Device-resident kernels first; UVM only when none of them fits.
      for (bool uvm : {false, true}) {
        double bestMax = 0, bestTotal = 0;
        for (int i = 0, e = opts.size(); i < e; ++i) {
          if ((opts[i].kernel == ComputeKernel::FusedUvmCaching) != uvm)
            continue;
          // The weight below is at least runningMax plus the option's
          // requests: an option that cannot beat the best one even then is
          // not placed (`better` is monotone in the maximum).
          if (chosen >= 0 && !better(runningMax + opts[i].everyRankCost,
                                     opts[i].totalCost, bestMax, bestTotal))
            continue;
          if (!state.chooseRanks(t, i, /*byMemory=*/false, ranks))
            continue;
          // The tables placed later will add their requests to every rank,
          // which the duplex cost would hide on the ranks that hold the
          // most: a seed weighs an option by the additive bound instead
          // (what its shards add to their ranks, plus its requests on
          // every rank), as the local search then lowers the exact cost.
          double newMax =
              std::max(runningMax, state.heldMaxAfter(t, i, ranks)) +
              opts[i].everyRankCost;
          if (chosen < 0 ||
              better(newMax, opts[i].totalCost, bestMax, bestTotal)) {
            chosen = i;
            bestMax = newMax;
            bestTotal = opts[i].totalCost;
            bestRanks.swap(ranks);
          }
        }
        if (chosen >= 0)
          break;
      }
      if (chosen >= 0)
        state.placeAt(t, chosen, bestRanks);
    } else {
      std::vector<int> byPreference(opts.size());
      std::iota(byPreference.begin(), byPreference.end(), 0);
      bool uvmFirst = policy == Policy::Spill && spilled[t];
      stableSort(byPreference, [&](int a, int b) {
        bool uvmA = opts[a].kernel == ComputeKernel::FusedUvmCaching;
        bool uvmB = opts[b].kernel == ComputeKernel::FusedUvmCaching;
        if (uvmA != uvmB)
          return uvmFirst ? uvmA : uvmB;
        if (policy == Policy::Memory)
          return opts[a].maxShardDeviceBytes < opts[b].maxShardDeviceBytes;
        // Spill: the least device memory in all (split tables carry
        // buffers on every shard's rank).
        if (policy == Policy::Spill)
          return opts[a].deviceBytes < opts[b].deviceBytes;
        return opts[a].totalCost < opts[b].totalCost;
      });
      for (int i : byPreference)
        if (state.place(t, i, policy != Policy::Cheapest)) {
          chosen = i;
          break;
        }
    }
    if (chosen < 0) {
      failed.push_back(t);
      continue;
    }
    for (int64_t rank : state.ranksOf[t])
      runningMax = std::max(runningMax, state.held[rank]);
  }
  return failed;
}

bool Planner::replicaIsCheapest(int table) const {
  const Option *cheapest = nullptr;
  for (const Option &option : tableOptions[table].options)
    if (!cheapest || option.totalCost < cheapest->totalCost)
      cheapest = &option;
  return cheapest && cheapest->budgeted;
}

bool Planner::chooseSpills() {
  // Device bytes every table needs at least, on device memory and when
  // served from host memory, and the cost of each.
  struct Candidate {
    int table;
    double costPerByte;
    double saved;
  };
  const Topology &topo = options.topology;
  double capacity = static_cast<double>(topo.worldSize) *
                    static_cast<double>(topo.usableDeviceMemory() -
                                        baseline.device.total());
  double demand = 0;
  std::vector<Candidate> candidates;
  spilled.assign(specs.size(), 0);
  for (size_t t = 0; t < tableOptions.size(); ++t) {
    double fusedBytes = -1, fusedCost = 0, uvmBytes = -1, uvmCost = 0;
    for (const Option &option : tableOptions[t].options) {
      double bytes = static_cast<double>(option.deviceBytes);
      bool uvm = option.kernel == ComputeKernel::FusedUvmCaching ||
                 option.kernel == ComputeKernel::FusedUvm;
      double &best = uvm ? uvmBytes : fusedBytes;
      if (best < 0 || bytes < best) {
        best = bytes;
        (uvm ? uvmCost : fusedCost) = option.totalCost;
      }
    }
    if (fusedBytes < 0) {
      demand += std::max(uvmBytes, 0.0);
      continue;
    }
    demand += fusedBytes;
    if (uvmBytes >= 0 && uvmBytes < fusedBytes && !tableOptions[t].userFixed)
      candidates.push_back({static_cast<int>(t),
                            (uvmCost - fusedCost) / (fusedBytes - uvmBytes),
                            fusedBytes - uvmBytes});
  }
  // Leave a margin for shards that do not pack exactly.
  double target = kPackingMargin * capacity;
  if (demand <= target || candidates.empty())
    return false;
  stableSort(candidates, [](const Candidate &a, const Candidate &b) {
    return a.costPerByte < b.costPerByte;
  });
  for (const Candidate &candidate : candidates) {
    if (demand <= target)
      break;
    spilled[candidate.table] = 1;
    demand -= candidate.saved;
  }
  return true;
}
