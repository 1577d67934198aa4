// Tests of the planner's search state (sharding/PlannerInternal.h) against
// naive references on random states: where State::chooseRanks puts a free
// option's shards (its fast paths: one shard, a prefix of the ranks in key
// order, the full scan), the movable-unit lists trySwap reads, and states
// reused through a StatePool.

#include "sharding/PlannerInternal.h"
#include "gtest/gtest.h"
#include <random>
#include <set>

using namespace ember::sharding;
using namespace ember::sharding::detail;

namespace {

/// An option of `kind` and `placement` whose shard i adds `device[i]` bytes
/// and `cost[i]` to its rank (placed at `ranks[i]` when fixed).
Option makeOption(Placement placement, const std::vector<int64_t> &device,
                  const std::vector<double> &cost,
                  const std::vector<int64_t> &ranks = {}) {
  Option option;
  option.kind = placement == Placement::Free ? ShardingKind::ColumnWise
                                             : ShardingKind::RowWise;
  option.placement = placement;
  for (size_t i = 0; i < device.size(); ++i) {
    option.shards.push_back(
        Shard{0, 0, 1, 1, ranks.empty() ? 0 : ranks[i]});
    UnitLoad unit;
    unit.cost = cost[i];
    unit.device = device[i];
    unit.load.cost.lookup = cost[i];
    unit.load.device.weights = device[i];
    option.unitOfShard.push_back(option.units.size());
    option.units.push_back(unit);
    option.deviceBytes += device[i];
  }
  option.shardsOnDistinctRanks =
      ranks.empty() ||
      std::set<int64_t>(ranks.begin(), ranks.end()).size() == ranks.size();
  return option;
}

Topology makeTopology(int64_t world) {
  Topology topology;
  topology.worldSize = world;
  topology.ranksPerNode = 8;
  topology.deviceMemoryBytes = 1000;
  topology.reservedDeviceFraction = 0;
  return topology;
}

/// The rule chooseRanks implements, as a full scan per shard: each shard
/// goes to the rank that fits it (with the shards already placed) with the
/// lowest key, a rank the option does not use yet first, ties to the lower
/// rank.
bool referenceRanks(const State &state, const Option &option, bool byMemory,
                    std::vector<int64_t> &ranks) {
  int64_t world = state.topology->worldSize;
  std::vector<int64_t> extraDevice(world, 0);
  std::vector<double> extraCost(world, 0);
  std::vector<char> used(world, 0);
  ranks.assign(option.shards.size(), -1);
  for (size_t shard = 0; shard < option.shards.size(); ++shard) {
    const UnitLoad &unit = option.unit(shard);
    int64_t best = -1;
    double bestKey = 0;
    bool bestUsed = true;
    for (int64_t rank = 0; rank < world; ++rank) {
      if (state.device[rank] + extraDevice[rank] + unit.device >
          state.deviceCap)
        continue;
      double key =
          byMemory ? static_cast<double>(state.device[rank] + extraDevice[rank])
                   : state.held[rank] + extraCost[rank];
      if (best < 0 || (bestUsed && !used[rank]) ||
          (bestUsed == static_cast<bool>(used[rank]) && key < bestKey)) {
        best = rank;
        bestKey = key;
        bestUsed = used[rank];
      }
    }
    if (best < 0)
      return false;
    ranks[shard] = best;
    extraDevice[best] += unit.device;
    extraCost[best] += unit.cost;
    used[best] = extraDevice[best] != 0 || extraCost[best] != 0;
  }
  return true;
}

TEST(PlannerState, FreeShardsGoWhereTheFullScanPutsThem) {
  std::mt19937 rng(7);
  int checked = 0, failed = 0;
  for (int64_t world : {1, 3, 8, 37, 64}) {
    Topology topology = makeTopology(world);
    for (int trial = 0; trial < 300; ++trial) {
      // Shard counts around the fast paths' limits: 1, a prefix of
      // 4 x shards ranks (2-15), all ranks sorted (16 and more).
      int numShards = std::uniform_int_distribution<int>(1, 24)(rng);
      std::vector<int64_t> device(numShards);
      std::vector<double> cost(numShards);
      // Equal shards, or shards of a few sizes (some of zero bytes and no
      // cost, which leave a rank "unused").
      bool equal = rng() % 2;
      for (int i = 0; i < numShards; ++i) {
        device[i] = equal ? 100 : std::uniform_int_distribution<int>(0, 4)(rng) * 60;
        cost[i] = equal ? 1.0 : device[i] / 60.0;
      }
      std::vector<TableOptions> tables(1);
      tables[0].options.push_back(
          makeOption(Placement::Free, device, cost));
      State state(topology, tables, ShardLoad{}, 0);
      // Ranks from empty to nearly full, loads with ties.
      for (int64_t rank = 0; rank < world; ++rank) {
        state.device[rank] =
            std::uniform_int_distribution<int>(0, 10)(rng) * 100;
        state.held[rank] = std::uniform_int_distribution<int>(0, 5)(rng);
      }
      for (bool byMemory : {false, true}) {
        std::vector<int64_t> expected, got;
        bool expectedOk = referenceRanks(state, tables[0].options[0],
                                         byMemory, expected);
        bool ok = state.chooseRanks(0, 0, byMemory, got);
        ASSERT_EQ(ok, expectedOk) << "world " << world << " trial " << trial;
        if (ok) {
          EXPECT_EQ(got, expected) << "world " << world << " trial " << trial
                                   << " shards " << numShards;
        }
        ++checked;
        failed += !ok;
        // chooseRanks leaves no scratch behind.
        for (int64_t rank = 0; rank < world; ++rank)
          ASSERT_EQ(state.extraDevice[rank], 0);
        ASSERT_TRUE(state.touched.empty());
      }
    }
  }
  // Both outcomes were exercised.
  EXPECT_GT(failed, 0);
  EXPECT_LT(failed, checked);
}

TEST(PlannerState, MovableUnitListsFollowPlacesAndRemovals) {
  // Tables alternate between free (movable) and fixed options; after random
  // placements and removals every rank's movable list is its units of
  // movable tables, in the order of its unit list.
  std::mt19937 rng(11);
  const int64_t world = 8;
  Topology topology = makeTopology(world);
  topology.deviceMemoryBytes = 1'000'000;
  const int numTables = 40;
  std::vector<TableOptions> tables(numTables);
  for (int t = 0; t < numTables; ++t) {
    tables[t].options.push_back(
        makeOption(Placement::Free, {10, 10}, {1.0, 2.0}));
    std::vector<int64_t> ranks(world);
    for (int64_t rank = 0; rank < world; ++rank)
      ranks[rank] = rank;
    tables[t].options.push_back(makeOption(
        Placement::Fixed, std::vector<int64_t>(world, 5),
        std::vector<double>(world, 0.5), ranks));
  }
  State state(topology, tables, ShardLoad{}, 0);
  std::vector<char> placed(numTables, 0);
  for (int step = 0; step < 2000; ++step) {
    int t = rng() % numTables;
    if (placed[t]) {
      state.removeTable(t);
      placed[t] = 0;
    } else {
      ASSERT_TRUE(state.place(t, rng() % 2, /*byMemory=*/false));
      placed[t] = 1;
    }
    // Read some ranks' lists now and then (they are rebuilt on use).
    if (step % 7 == 0) {
      int64_t rank = rng() % world;
      std::vector<std::pair<int, int>> expected;
      for (auto unit : state.units[rank])
        if (state.movable[unit.first])
          expected.push_back(unit);
      ArrayRef<std::pair<int, int>> list = state.movableUnitsOn(rank);
      std::vector<std::pair<int, int>> got(list.begin(), list.end());
      ASSERT_EQ(got, expected) << "rank " << rank << " after step " << step;
    }
  }
}

TEST(PlannerState, PooledStatesAreExactCopies) {
  // A state taken from the pool is the state given to take(), whatever the
  // pooled state held before (a larger or a smaller plan).
  const int64_t world = 16;
  Topology topology = makeTopology(world);
  topology.deviceMemoryBytes = 1'000'000;
  std::vector<TableOptions> tables(6);
  for (auto &table : tables) {
    table.options.push_back(makeOption(Placement::Free, {7}, {3.0}));
    table.options.push_back(
        makeOption(Placement::Free, {4, 4, 4}, {1.0, 1.0, 1.0}));
  }
  State small(topology, tables, ShardLoad{}, 0);
  ASSERT_TRUE(small.place(0, 0, false));
  State large(topology, tables, ShardLoad{}, 0);
  for (int t = 0; t < 6; ++t)
    ASSERT_TRUE(large.place(t, 1, false));
  auto same = [&](const State &a, const State &b) {
    return a.choice == b.choice && a.ranksOf == b.ranksOf &&
           a.units == b.units && a.cost == b.cost && a.held == b.held &&
           a.device == b.device && a.movable == b.movable &&
           a.positions == b.positions && a.requested == b.requested;
  };
  StatePool pool;
  std::unique_ptr<State> copy = pool.take(large);
  EXPECT_TRUE(same(*copy, large));
  pool.give(std::move(copy));
  copy = pool.take(small);
  EXPECT_TRUE(same(*copy, small));
  // The copy is independent of what it was copied from.
  ASSERT_TRUE(copy->place(3, 1, false));
  EXPECT_FALSE(same(*copy, small));
  EXPECT_EQ(small.choice[3], -1);
  pool.give(std::move(copy));
  copy = pool.take(large);
  EXPECT_TRUE(same(*copy, large));
}

} // namespace
