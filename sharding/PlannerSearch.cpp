//===- PlannerSearch.cpp - the planner's local improvement ----------------===//
//
// Step 3 of the search, on each seed: while the most loaded rank can shed
// cost, move one of its shards to another rank, swap one with a smaller
// shard elsewhere, or re-shard one of its tables; every accepted step leaves
// every changed rank below the old maximum, so the sorted cost vector
// decreases and the search ends. Tiny cases (at most kExactMaxTables tables
// on kExactMaxRanks ranks) are then searched exhaustively.
//
//===----------------------------------------------------------------------===//

#include "sharding/PlannerInternal.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Parallel.h"
#include <functional>

using namespace ember::sharding;
using namespace ember::sharding::detail;

namespace {

/// Exhaustive search for tiny cases: at most this many tables and ranks,
/// and at most this many search nodes.
constexpr size_t kExactMaxTables = 8;
constexpr int64_t kExactMaxRanks = 4;
constexpr int64_t kExactMaxNodes = 2'000'000;

bool isHostServed(ComputeKernel kernel) {
  return kernel == ComputeKernel::FusedUvmCaching ||
         kernel == ComputeKernel::FusedUvm;
}

/// The (at most `limit`) tables with the most cost on `rank`, costliest
/// first (ties by table index), each once; `skip` leaves a table out.
template <typename Skip>
std::vector<std::pair<double, int>>
costliestTablesOn(const State &state, int64_t rank, size_t limit, Skip skip) {
  std::vector<std::pair<double, int>> candidates;
  for (auto [table, shard] : state.units[rank])
    if (!skip(table))
      candidates.push_back(
          {state.optionOf(table).load(shard).cost.total(), table});
  auto costlier = [](auto &a, auto &b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  auto sameTable = [](auto &a, auto &b) { return a.second == b.second; };
  // In that order, a table's consecutive shards once. Which survive depends
  // only on the shards before, so sorting a prefix is enough when `limit`
  // survive in it (most of a rank's units are other tables').
  size_t head = std::min(candidates.size(), 2 * limit);
  while (true) {
    std::partial_sort(candidates.begin(), candidates.begin() + head,
                      candidates.end(), costlier);
    std::vector<std::pair<double, int>> result(candidates.begin(),
                                               candidates.begin() + head);
    result.erase(std::unique(result.begin(), result.end(), sameTable),
                 result.end());
    if (result.size() >= limit || head == candidates.size()) {
      if (result.size() > limit)
        result.resize(limit);
      return result;
    }
    head = std::min(candidates.size(), 2 * head);
  }
}

} // namespace

bool Planner::tryMove(State &state, int64_t maxRank) const {
  double current = state.cost[maxRank];
  double bestValue = current;
  std::pair<int, int> bestUnit{-1, -1};
  int64_t bestTarget = -1;
  for (auto [table, shard] : state.units[maxRank]) {
    if (!state.movable[table])
      continue;
    const Option &option = state.optionOf(table);
    const ShardLoad &load = option.load(shard);
    if (option.unitCost(shard) <= 0)
      continue;
    double left = state.costAfter(maxRank, option, shard, -1.0);
    for (int64_t rank = 0; rank < state.topology->worldSize; ++rank) {
      if (rank == maxRank || !state.fits(rank, load))
        continue;
      double value = std::max(state.costAfter(rank, option, shard, 1.0), left);
      if (value < bestValue - 1e-12 * current) {
        bestValue = value;
        bestUnit = {table, shard};
        bestTarget = rank;
      }
    }
  }
  if (bestTarget < 0)
    return false;
  state.removeUnit(bestUnit.first, bestUnit.second);
  state.addUnit(bestUnit.first, bestUnit.second, bestTarget);
  return true;
}

bool Planner::trySwap(State &state, int64_t maxRank) const {
  double current = state.cost[maxRank];
  double bestValue = current;
  std::pair<int, int> bestA{-1, -1}, bestB{-1, -1};
  // Swap partners come from the least loaded ranks.
  constexpr size_t kSwapRanks = 32;
  std::vector<int64_t> partners;
  for (int64_t rank = 0; rank < state.topology->worldSize; ++rank)
    if (rank != maxRank && state.cost[rank] < current)
      partners.push_back(rank);
  auto byCost = [&](int64_t a, int64_t b) {
    return state.cost[a] < state.cost[b] ||
           (state.cost[a] == state.cost[b] && a < b);
  };
  if (partners.size() > kSwapRanks) {
    std::nth_element(partners.begin(), partners.begin() + kSwapRanks,
                     partners.end(), byCost);
    partners.resize(kSwapRanks);
  }
  llvm::sort(partners, byCost);
  // The partners' movable units, in the order of their ranks' unit lists,
  // gathered once (the scan below visits each once per unit of the max
  // rank), with the cheapest of each partner.
  struct Unit {
    int table, shard;
    double cost;
    const Option *option;
  };
  std::vector<Unit> partnerUnits;
  std::vector<size_t> firstUnit(partners.size() + 1);
  std::vector<double> cheapest(partners.size(),
                               std::numeric_limits<double>::infinity());
  for (size_t p = 0; p < partners.size(); ++p) {
    firstUnit[p] = partnerUnits.size();
    for (auto [table, shard] : state.movableUnitsOn(partners[p])) {
      const Option &option = state.optionOf(table);
      partnerUnits.push_back({table, shard, option.unitCost(shard), &option});
      cheapest[p] = std::min(cheapest[p], option.unitCost(shard));
    }
  }
  firstUnit[partners.size()] = partnerUnits.size();
  for (auto [tableA, shardA] : state.units[maxRank]) {
    if (!state.movable[tableA])
      continue;
    const Option &optionA = state.optionOf(tableA);
    const ShardLoad &loadA = optionA.load(shardA);
    double costA = optionA.unitCost(shardA);
    const Exchanges &exchangeA = optionA.unitExchange(shardA);
    for (size_t p = 0; p < partners.size(); ++p) {
      if (cheapest[p] >= costA)
        continue;
      int64_t rank = partners[p];
      // The partner's cost after the swap is at least its holder cost plus
      // costA - costB plus what its requests exceed with A's side of the
      // all-to-alls added (B's side taken off only raises that): pairs that
      // bound cannot bring below the best are skipped unevaluated.
      double otherFloor = state.held[rank] + costA;
      for (int c = 0; c < kExchanges; ++c) {
        double requested = state.requested[c];
        otherFloor += state.duplex
                          ? std::max(0.0, requested - state.exchange[c][rank] -
                                              exchangeA[c])
                          : requested;
      }
      for (size_t u = firstUnit[p]; u < firstUnit[p + 1]; ++u) {
        const Unit &b = partnerUnits[u];
        if (b.cost >= costA ||
            otherFloor - b.cost >= bestValue - 1e-12 * current)
          continue;
        double newMax =
            state.costAfter(maxRank, UnitDelta()
                                         .add(*b.option, b.shard, 1.0)
                                         .add(optionA, shardA, -1.0));
        double newOther =
            state.costAfter(rank, UnitDelta()
                                      .add(optionA, shardA, 1.0)
                                      .add(*b.option, b.shard, -1.0));
        double value = std::max(newMax, newOther);
        if (value >= bestValue - 1e-12 * current)
          continue;
        // Memory after the swap on both ranks.
        const ShardLoad &loadB = b.option->load(b.shard);
        ShardLoad intoMax = loadB;
        intoMax -= loadA;
        ShardLoad intoOther = loadA;
        intoOther -= loadB;
        if (!state.fits(maxRank, intoMax) || !state.fits(rank, intoOther))
          continue;
        bestValue = value;
        bestA = {tableA, shardA};
        bestB = {b.table, b.shard};
      }
    }
  }
  if (bestA.first < 0)
    return false;
  int64_t other = state.ranksOf[bestB.first][bestB.second];
  state.removeUnit(bestA.first, bestA.second);
  state.removeUnit(bestB.first, bestB.second);
  state.addUnit(bestA.first, bestA.second, other);
  state.addUnit(bestB.first, bestB.second, maxRank);
  return true;
}

bool Planner::tryReshard(State &state, int64_t maxRank) const {
  constexpr int kCandidates = 8;
  double current = state.cost[maxRank];
  // The tables with the most cost on the max rank.
  std::vector<std::pair<double, int>> candidates =
      costliestTablesOn(state, maxRank, kCandidates, [&](int table) {
        return tableOptions[table].userFixed &&
               tableOptions[table].options.size() < 2;
      });

  // A re-shard that raises every rank's requester side may raise the ranks
  // it does not touch too (those whose holder side of an all-to-all is
  // below the requests): the highest of those counts. Each of them rises by
  // at most the requests' growth, so the ranks most loaded before are
  // sorted once and scanned until none can come higher.
  constexpr size_t kTopRanks = 32;
  int64_t world = state.topology->worldSize;
  std::vector<int64_t> top(world);
  std::iota(top.begin(), top.end(), 0);
  auto byCostDown = [&](int64_t a, int64_t b) {
    return state.cost[a] > state.cost[b] ||
           (state.cost[a] == state.cost[b] && a < b);
  };
  if (top.size() > kTopRanks) {
    std::nth_element(top.begin(), top.begin() + kTopRanks, top.end(),
                     byCostDown);
    top.resize(kTopRanks);
  }
  llvm::sort(top, byCostDown);
  std::vector<double> before = state.cost;
  std::vector<char> affected(world, 0);
  // The largest cost, at least `floor`, of a rank in neither `a` nor `b`
  // that rose above its cost before (by at most `rise`).
  auto untouchedMax = [&](ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                          double floor, double rise) {
    for (int64_t rank : a)
      affected[rank] = 1;
    for (int64_t rank : b)
      affected[rank] = 1;
    double result = floor;
    bool settled = false;
    for (int64_t rank : top) {
      if (before[rank] + rise <= result) {
        settled = true;
        break;
      }
      if (!affected[rank] && state.cost[rank] > before[rank])
        result = std::max(result, state.cost[rank]);
    }
    if (!settled)
      for (int64_t rank = 0; rank < world; ++rank)
        if (!affected[rank] && state.cost[rank] > before[rank])
          result = std::max(result, state.cost[rank]);
    for (int64_t rank : a)
      affected[rank] = 0;
    for (int64_t rank : b)
      affected[rank] = 0;
    return result;
  };
  // A lower bound of the max rank's cost once the table (taken off) is
  // placed with `option`: what the rank holds without it, under the
  // option's requests, with the shards a fixed placement puts there.
  // Exact for fixed placements; for others a bound when shards added to a
  // rank never lower its cost (they may land there too).
  auto boundOnMaxRank = [&](const Option &option) {
    UnitDelta onRank;
    if (option.placement == Placement::Fixed)
      for (int shard = 0, e = option.shards.size(); shard < e; ++shard)
        if (option.shards[shard].rank == maxRank)
          onRank.add(option, shard, 1.0);
    double result = state.held[maxRank] + onRank.cost;
    for (int c = 0; c < kExchanges; ++c) {
      double requested = state.requested[c] + option.everyRankParts[c];
      double exchanged = state.exchange[c][maxRank] + onRank.exchange[c];
      result += state.duplex ? std::max(0.0, requested - exchanged) : requested;
    }
    return result;
  };
  for (auto [unused, table] : candidates) {
    int oldChoice = state.choice[table];
    std::vector<int64_t> oldRanks = state.ranksOf[table];
    state.removeTable(table);
    int bestChoice = -1;
    double bestValue = current, bestTotal = 0;
    std::vector<int64_t> bestRanks;
    const auto &opts = tableOptions[table].options;
    // Memory before UVM: a table on device memory stays there (its seed
    // served it from host memory only when nothing else fitted).
    bool onDevice = !isHostServed(opts[oldChoice].kernel);
    for (int i = 0, e = opts.size(); i < e; ++i) {
      if (onDevice && isHostServed(opts[i].kernel))
        continue;
      // The max rank holds the table: a re-shard that cannot bring it below
      // the maximum is not placed.
      if ((opts[i].placement == Placement::Fixed ||
           opts[i].shardsNeverLowerCost) &&
          boundOnMaxRank(opts[i]) >= current - 1e-12 * current)
        continue;
      if (!state.place(table, i, false))
        continue;
      double value = 0;
      for (int64_t rank : oldRanks)
        value = std::max(value, state.cost[rank]);
      for (int64_t rank : state.ranksOf[table])
        value = std::max(value, state.cost[rank]);
      double rise = 0;
      for (int c = 0; c < kExchanges; ++c)
        rise += std::max(0.0, opts[i].everyRankParts[c] -
                                  opts[oldChoice].everyRankParts[c]);
      if (rise > 0)
        value = untouchedMax(oldRanks, state.ranksOf[table], value, rise);
      double total = opts[i].totalCost;
      if (value < current - 1e-12 * current &&
          (bestChoice < 0 || better(value, total, bestValue, bestTotal))) {
        bestChoice = i;
        bestValue = value;
        bestTotal = total;
        bestRanks = state.ranksOf[table];
      }
      state.removeTable(table);
    }
    if (bestChoice >= 0) {
      state.placeAt(table, bestChoice, bestRanks);
      return true;
    }
    state.placeAt(table, oldChoice, oldRanks);
  }
  return false;
}

void Planner::improve(State &state) const {
  int64_t limit = 4 * static_cast<int64_t>(specs.size()) + 64;
  for (int64_t step = 0; step < limit; ++step) {
    int64_t maxRank = state.maxRank();
    if (!tryMove(state, maxRank) && !trySwap(state, maxRank) &&
        !tryReshard(state, maxRank))
      return;
  }
}

void Planner::improveBoundThenDuplex(State &state) const {
  state.setDuplex(false);
  improve(state);
  state.setDuplex(true);
  improve(state);
}

void Planner::reshardAndImprove(std::unique_ptr<State> &best) const {
  // A re-shard that pays off only once other shards have moved (a table
  // split column-wise whose shards need room that moves make) is beyond
  // tryReshard, which takes a step only when it lowers the maximum at
  // once: here the costliest tables of the busiest rank and of the rank
  // that moves the most all-to-all bytes are each re-sharded on a copy of
  // the plan with each of their other options (kept on device memory when
  // they are there), the local search is run on the copy, and the best copy
  // replaces the plan when it is preferred and its busiest rank moves no
  // more all-to-all bytes than the plan's, both after steps 6 and 7
  // (communication is not traded for compute here: a copy that splits a
  // table wider to balance lookups must not load the network more). A copy
  // the score prefers whose bytes are above the plan's may need a second
  // re-shard to bring them down (two tables split at once): the one such copy
  // with the fewest bytes gets one, of the costliest tables of its own
  // busiest ranks.
  constexpr int kTables = 4;
  constexpr int kRounds = 4;
  /// Copies over the bytes that get a second re-shard (the one with the
  /// fewest bytes: a second one cost 0.6 s more on the 1,000 tables x 512
  /// ranks of the side-by-side benchmark and did not change powerlaw-32
  /// training's plan), and copies settled
  /// by steps 6 and 7 (best first) before a round gives up.
  constexpr size_t kSecondStarts = 1;
  constexpr size_t kSettled = 3;
  auto skipFixed = [&](int table) { return tableOptions[table].userFixed; };
  // The costliest tables of `state`'s busiest rank, then those of its rank
  // that moves the most bytes.
  auto candidatesOf = [&](const State &state) {
    std::vector<std::pair<double, int>> tables =
        costliestTablesOn(state, state.maxRank(), kTables, skipFixed);
    for (auto entry : costliestTablesOn(state, busiestTrafficRank(state),
                                        kTables, skipFixed))
      if (llvm::none_of(tables,
                        [&](auto &e) { return e.second == entry.second; }))
        tables.push_back(entry);
    return tables;
  };
  // Copies are dropped into a pool whose states the next copies reuse
  // (allocating and freeing a plan's worth of vectors per copy cost more in
  // page faults than copying them).
  StatePool scratch;
  auto drop = [&](std::vector<std::unique_ptr<State>> &list) {
    for (std::unique_ptr<State> &copy : list)
      if (copy)
        scratch.give(std::move(copy));
    list.clear();
  };
  // Inserts `copy` into `list` (at most `limit`, first those `before`).
  auto keepBest = [&](std::vector<std::unique_ptr<State>> &list,
                      std::unique_ptr<State> copy, size_t limit, auto before) {
    auto at = std::find_if(list.begin(), list.end(), [&](auto &other) {
      return before(*copy, *other);
    });
    if (static_cast<size_t>(at - list.begin()) >= limit) {
      scratch.give(std::move(copy));
      return;
    }
    list.insert(at, std::move(copy));
    if (list.size() > limit) {
      scratch.give(std::move(list.back()));
      list.pop_back();
    }
  };
  for (int round = 0; round < kRounds; ++round) {
    settleCollectives(*best);
    const State &state = *best;
    double bytesLimit = busiestTrafficBytes(state) * (1 + 1e-9);
    // Copies the score prefers: within the plan's bytes before steps 6
    // and 7 (the preferred first), and above them (the fewest bytes
    // first: the closest to the plan's bytes).
    std::vector<std::unique_ptr<State>> within, over;
    auto byPreference = [&](const State &a, const State &b) {
      return preferred(a, b);
    };
    auto byBytes = [&](const State &a, const State &b) {
      return a.trafficBytes < b.trafficBytes;
    };
    auto reshardEach = [&](const State &from,
                           ArrayRef<std::pair<double, int>> tables) {
      // (table, option) re-shards to try, each on its own copy; the copies
      // are independent, so they are improved on every core, and kept in
      // this order whatever finished first.
      std::vector<std::pair<int, int>> tries;
      for (auto [unused, table] : tables) {
        const auto &opts = tableOptions[table].options;
        int current = from.choice[table];
        bool onDevice = !isHostServed(opts[current].kernel);
        for (int i = 0, e = opts.size(); i < e; ++i)
          if (i != current && !(onDevice && isHostServed(opts[i].kernel)))
            tries.push_back({table, i});
      }
      std::vector<std::unique_ptr<State>> copies(tries.size());
      llvm::parallelFor(0, tries.size(), [&](size_t k) {
        auto [table, option] = tries[k];
        std::unique_ptr<State> copy = scratch.take(from);
        copy->removeTable(table);
        bool kept = copy->place(table, option, /*byMemory=*/false);
        if (kept) {
          improve(*copy);
          kept = preferred(*copy, *best);
        }
        if (!kept) {
          scratch.give(std::move(copy));
          return;
        }
        copy->trafficBytes = busiestTrafficBytes(*copy);
        copies[k] = std::move(copy);
      });
      for (std::unique_ptr<State> &copy : copies) {
        if (!copy)
          continue;
        if (copy->trafficBytes <= bytesLimit)
          keepBest(within, std::move(copy), kSettled, byPreference);
        else
          keepBest(over, std::move(copy), kSecondStarts, byBytes);
      }
    };
    // The best copy within the plan's bytes once steps 6 and 7 ran on it.
    auto settle = [&]() -> std::unique_ptr<State> {
      for (std::unique_ptr<State> &copy : within) {
        settleCollectives(*copy);
        if (busiestTrafficBytes(*copy) <= bytesLimit) {
          std::unique_ptr<State> winner = std::move(copy);
          drop(within);
          return winner;
        }
      }
      drop(within);
      return nullptr;
    };
    reshardEach(state, candidatesOf(state));
    std::unique_ptr<State> winner = settle();
    if (!winner) {
      std::vector<std::unique_ptr<State>> starts = std::move(over);
      over.clear();
      for (const std::unique_ptr<State> &start : starts)
        reshardEach(*start, candidatesOf(*start));
      winner = settle();
      drop(starts);
    }
    drop(over);
    if (!winner)
      return;
    scratch.give(std::move(best));
    best = std::move(winner);
  }
}

bool Planner::isTiny() const {
  return specs.size() <= kExactMaxTables &&
         options.topology.worldSize <= kExactMaxRanks;
}

void Planner::exactSearch(std::unique_ptr<State> &best) const {
  int numTables = specs.size();
  std::vector<int> order(numTables);
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> weight(numTables, 0);
  for (int t = 0; t < numTables; ++t)
    for (const Option &option : tableOptions[t].options)
      weight[t] = std::max(weight[t], option.totalCost);
  stableSort(order, [&](int a, int b) { return weight[a] > weight[b]; });

  double bestMax = best->maxCost(), bestTotal = best->totalCost();
  bool deviceOnly = best->hostBytes() == 0;
  std::vector<int> bestChoice;
  std::vector<std::vector<int64_t>> bestRanks;
  std::unique_ptr<State> state = newState();
  int64_t nodes = 0;
  const double tolerance = 1e-12 * std::max(1.0, bestMax);

  std::function<void(int)> visit = [&](int depth) {
    if (++nodes > kExactMaxNodes)
      return;
    // Costs only grow as tables are added: prune at the best maximum.
    if (state->maxCost() > bestMax + tolerance)
      return;
    if (depth == numTables) {
      if (better(state->maxCost(), state->totalCost(), bestMax, bestTotal)) {
        bestMax = state->maxCost();
        bestTotal = state->totalCost();
        bestChoice = state->choice;
        bestRanks = state->ranksOf;
      }
      return;
    }
    int t = order[depth];
    const auto &opts = tableOptions[t].options;
    for (int i = 0, e = opts.size(); i < e; ++i) {
      const Option &option = opts[i];
      // Memory before UVM: when the plan found fits device memory, so must
      // the exact one.
      if (deviceOnly && isHostServed(option.kernel))
        continue;
      if (option.placement == Placement::Free && option.shards.size() == 1) {
        for (int64_t rank = 0; rank < options.topology.worldSize; ++rank) {
          if (option.budgeted &&
              state->replicaUsed + static_cast<double>(option.replicaBytes) >
                  state->replicaBudget)
            continue;
          if (!state->fits(rank, option.unitDevice(0), option.unitHost(0)))
            continue;
          state->placeAt(t, i, {rank});
          visit(depth + 1);
          state->removeTable(t);
        }
        continue;
      }
      if (!state->place(t, i, /*byMemory=*/false))
        continue;
      visit(depth + 1);
      state->removeTable(t);
    }
  };
  visit(0);
  if (bestChoice.empty())
    return;
  std::unique_ptr<State> result = newState();
  for (int t = 0; t < numTables; ++t)
    result->placeAt(t, bestChoice[t], bestRanks[t]);
  best = std::move(result);
}
