//===- PlannerCollectives.cpp - the step as its collectives see it --------===//
//
// Steps 6 and 7 of the search, on the best plan. Step 6: the per-rank
// score adds each rank's lookups and its share of the input and output
// all-to-alls, but a step waits for the slowest rank of each collective in turn. Here the
// plan's "collective step" (the sum over the cost parts, lookup, input
// all-to-all, output all-to-all and backward, of the busiest rank's part,
// plus what every rank carries) is lowered by moving one shard at a time off
// the busiest rank of a part, and by swapping it with a cheaper shard of
// another rank, while no rank's cost goes above the plan's score (so the
// score never gets worse) and no rank's device memory above the fullest
// rank's (so the plan's peak memory does not grow either). Every accepted
// step lowers the collective step, so the search ends.
// Step 7 then lowers the bytes the busiest rank sends or receives in the
// all-to-alls (what the side-by-side benchmark's yardstick counts: every
// other rank's ids in, every other rank's rows out; table-row-wise shards
// reduce-scatter in their node) by moves and swaps of free shards that keep
// the score, the collective step and the peak device memory where they are.
//
//===----------------------------------------------------------------------===//

#include "sharding/PlannerInternal.h"
#include <array>
#include <optional>

using namespace ember::sharding;
using namespace ember::sharding::detail;

namespace {

/// The cost parts (lookup, input all-to-all, output all-to-all, backward).
constexpr int kParts = 4;
/// A shard's cost parts, then its side of the three all-to-alls (the last
/// three parts: ShardLoad::exchange).
constexpr int kEntries = kParts + kExchanges;
using PartArray = std::array<double, kEntries>;

PartArray partsOf(const ShardLoad &load) {
  const CostParts &cost = load.cost;
  const CostParts &exchange = load.exchange;
  return {cost.lookup,      cost.inputDist,     cost.outputDist,
          cost.backward,    exchange.inputDist, exchange.outputDist,
          exchange.backward};
}

/// Per-rank cost parts of a plan and the three largest ranks of each part
/// (enough to know a part's maximum once two ranks change). An all-to-all's
/// part on a rank is what its shards cost plus what every rank's requests
/// exceed its holder side of it by (full-duplex links; the requests do not
/// change while shards move).
class CollectiveLoads {
public:
  CollectiveLoads(const State &state, ArrayRef<TableOptions> tables)
      : world(state.topology->worldSize), requested(state.requested) {
    for (auto &part : parts)
      part.assign(world, 0);
    for (int64_t rank = 0; rank < world; ++rank)
      for (auto [table, shard] : state.units[rank]) {
        const Option &option = tables[table].options[state.choice[table]];
        add(rank, partsOf(option.load(shard)), 1.0);
      }
    refresh();
  }

  void add(int64_t rank, const PartArray &cost, double sign) {
    for (int k = 0; k < kEntries; ++k)
      parts[k][rank] += sign * cost[k];
  }

  /// Part `k` of `rank` once `sign * delta` is added to it.
  double partAfter(int k, int64_t rank, const PartArray &delta,
                   double sign) const {
    double value = parts[k][rank] + sign * delta[k];
    if (k > 0) {
      int c = k - 1;
      double exchanged = parts[kParts + c][rank] + sign * delta[kParts + c];
      value += std::max(0.0, requested[c] - exchanged);
    }
    return value;
  }

  void refresh() {
    PartArray none{};
    for (int k = 0; k < kParts; ++k) {
      top[k].fill({0.0, -1});
      for (int64_t rank = 0; rank < world; ++rank) {
        double value = partAfter(k, rank, none, 0.0);
        for (int i = 0; i < 3; ++i)
          if (top[k][i].second < 0 || value > top[k][i].first) {
            for (int j = 2; j > i; --j)
              top[k][j] = top[k][j - 1];
            top[k][i] = {value, rank};
            break;
          }
      }
    }
  }

  /// Sum over the parts of the busiest rank's part.
  double step() const {
    double sum = 0;
    for (int k = 0; k < kParts; ++k)
      sum += top[k][0].first;
    return sum;
  }

  int64_t busiest(int part) const { return top[part][0].second; }

  /// The step after `delta` leaves rank `a` and arrives at rank `b`.
  double stepAfter(int64_t a, int64_t b, const PartArray &delta) const {
    double sum = 0;
    for (int k = 0; k < kParts; ++k) {
      double value =
          std::max(partAfter(k, a, delta, -1.0), partAfter(k, b, delta, 1.0));
      for (int i = 0; i < 3; ++i)
        if (top[k][i].second >= 0 && top[k][i].second != a &&
            top[k][i].second != b) {
          value = std::max(value, top[k][i].first);
          break;
        }
      sum += value;
    }
    return sum;
  }

private:
  int64_t world;
  Exchanges requested;
  std::array<std::vector<double>, kEntries> parts;
  std::array<std::array<std::pair<double, int64_t>, 3>, kParts> top;
};

/// A move of shard (table, shard) off rank `from` to rank `target`, or, when
/// otherTable >= 0, a swap with shard (otherTable, otherShard) of `target`.
struct Candidate {
  int table, shard;
  int64_t target;
  int otherTable, otherShard;
  const ShardLoad &load;
  const ShardLoad *otherLoad; // null for a move
  const PartArray &cost;      // partsOf(load)
};

/// The moves and swaps steps 6 and 7 search over: free shards that are not
/// user-fixed, with no rank's cost going above the plan's score and no
/// rank's device memory above the fullest rank's.
class MoveSearch {
public:
  MoveSearch(const State &state, ArrayRef<TableOptions> tableOptions)
      : state(state), tableOptions(tableOptions),
        world(state.topology->worldSize),
        ceiling(*std::max_element(state.cost.begin(), state.cost.end())),
        slack(1e-12 * std::max(1.0, ceiling)),
        deviceCeiling(
            *std::max_element(state.device.begin(), state.device.end())) {}

  /// For each feasible move of a movable shard of `from` to any other rank,
  /// and each feasible swap of it with a movable shard of a rank in
  /// `partners`, in that order, calls `evaluate(candidate)`; a swap's memory
  /// fit is checked only once `evaluate` gave a value (as a move's is checked
  /// before). `take(candidate, value)` then keeps the candidate.
  template <typename Evaluate, typename Take>
  void forEach(int64_t from, ArrayRef<int64_t> partners, Evaluate evaluate,
               Take take) const {
    for (auto [table, shard] : state.units[from]) {
      if (!movable(table))
        continue;
      const Option &option = state.optionOf(table);
      const ShardLoad &load = option.load(shard);
      PartArray cost = partsOf(load);
      // Moves.
      for (int64_t rank = 0; rank < world; ++rank) {
        if (rank == from ||
            state.costAfter(rank, option, shard, 1.0) > ceiling + slack ||
            !fitsUnder(rank, load))
          continue;
        Candidate move{table, shard, rank, -1, -1, load, nullptr, cost};
        if (std::optional<double> value = evaluate(move))
          take(move, *value);
      }
      // Swaps with a shard of a partner rank.
      for (int64_t rank : partners) {
        if (rank == from)
          continue;
        for (auto [otherTable, otherShard] : state.units[rank]) {
          if (!movable(otherTable) || otherTable == table)
            continue;
          const Option &otherOption = state.optionOf(otherTable);
          const ShardLoad &otherLoad = otherOption.load(otherShard);
          UnitDelta intoRank;
          intoRank.add(option, shard, 1.0).add(otherOption, otherShard, -1.0);
          UnitDelta intoFromRank;
          intoFromRank.add(otherOption, otherShard, 1.0)
              .add(option, shard, -1.0);
          if (state.costAfter(rank, intoRank) > ceiling + slack ||
              state.costAfter(from, intoFromRank) > ceiling + slack)
            continue;
          Candidate swap{table, shard,     rank, otherTable,
                         otherShard, load, &otherLoad, cost};
          std::optional<double> value = evaluate(swap);
          if (!value)
            continue;
          ShardLoad intoFrom = otherLoad;
          intoFrom -= load;
          ShardLoad intoOther = load;
          intoOther -= otherLoad;
          if (!fitsUnder(from, intoFrom) || !fitsUnder(rank, intoOther))
            continue;
          take(swap, *value);
        }
      }
    }
  }

private:
  bool movable(int table) const { return state.movable[table]; }
  bool fitsUnder(int64_t rank, const ShardLoad &delta) const {
    return state.fits(rank, delta) &&
           state.device[rank] + delta.device.total() <= deviceCeiling;
  }

  const State &state;
  ArrayRef<TableOptions> tableOptions;
  int64_t world;
  double ceiling, slack;
  int64_t deviceCeiling;
};

} // namespace

bool Planner::improveCollectives(State &state) const {
  int64_t world = state.topology->worldSize;
  if (world < 2)
    return false;
  bool changed = false;
  // No rank may go above the plan's score (its largest per-rank cost), nor
  // above the fullest rank's device memory.
  MoveSearch search(state, tableOptions);
  CollectiveLoads loads(state, tableOptions);
  // Swap partners: the ranks with the most room under the ceiling.
  constexpr size_t kSwapRanks = 16;
  int64_t limit = 2 * static_cast<int64_t>(specs.size()) + 64;
  for (int64_t step = 0; step < limit; ++step) {
    double current = loads.step();
    double bestStep = current - 1e-9 * std::max(current, 1e-12);
    std::pair<int, int> bestUnit{-1, -1}, bestOther{-1, -1};
    int64_t bestTarget = -1;
    std::vector<int64_t> partners(world);
    std::iota(partners.begin(), partners.end(), 0);
    if (partners.size() > kSwapRanks) {
      std::nth_element(partners.begin(), partners.begin() + kSwapRanks,
                       partners.end(), [&](int64_t a, int64_t b) {
                         return state.cost[a] < state.cost[b] ||
                                (state.cost[a] == state.cost[b] && a < b);
                       });
      partners.resize(kSwapRanks);
    }
    for (int part = 0; part < kParts; ++part) {
      int64_t from = loads.busiest(part);
      if (from < 0)
        continue;
      search.forEach(
          from, partners,
          [&](const Candidate &c) -> std::optional<double> {
            PartArray delta = c.cost;
            if (c.otherLoad) {
              PartArray back = partsOf(*c.otherLoad);
              for (int k = 0; k < kEntries; ++k)
                delta[k] -= back[k];
            }
            double after = loads.stepAfter(from, c.target, delta);
            if (after >= bestStep)
              return std::nullopt;
            return after;
          },
          [&](const Candidate &c, double after) {
            bestStep = after;
            bestUnit = {c.table, c.shard};
            bestOther = {c.otherTable, c.otherShard};
            bestTarget = c.target;
          });
    }
    if (bestTarget < 0)
      return changed;
    changed = true;
    int64_t from = state.ranksOf[bestUnit.first][bestUnit.second];
    const Option &option = state.optionOf(bestUnit.first);
    PartArray cost = partsOf(option.load(bestUnit.second));
    loads.add(from, cost, -1.0);
    loads.add(bestTarget, cost, 1.0);
    state.removeUnit(bestUnit.first, bestUnit.second);
    if (bestOther.first >= 0) {
      const Option &other = state.optionOf(bestOther.first);
      PartArray back = partsOf(other.load(bestOther.second));
      loads.add(bestTarget, back, -1.0);
      loads.add(from, back, 1.0);
      state.removeUnit(bestOther.first, bestOther.second);
      state.addUnit(bestOther.first, bestOther.second, from);
    }
    state.addUnit(bestUnit.first, bestUnit.second, bestTarget);
    loads.refresh();
  }
  return changed;
}

namespace {

/// Per-rank all-to-all bytes of a plan as the side-by-side benchmark's
/// yardstick counts them (docs/sharding.md): what each rank sends and
/// receives in the input (ids, lengths) and output (pooled rows)
/// distributions together. A table-, column- or row-wise shard on rank h
/// receives every other rank's ids for it and sends every other rank its
/// rows; a table-row-wise shard reduce-scatters inside its node, then sends
/// the reduced rows to their owners.
class TrafficLoads {
public:
  TrafficLoads(const State &state, ArrayRef<TableSpec> specs,
               ArrayRef<TableOptions> tables, const PlannerOptions &options)
      : world(state.topology->worldSize), sent(world, 0), recv(world, 0) {
    double w = static_cast<double>(world);
    double everySends = 0, everyReceives = 0;
    for (int t = 0, e = specs.size(); t < e; ++t) {
      const Option &option = tables[t].options[state.choice[t]];
      if (option.kind == ShardingKind::DataParallel)
        continue;
      int64_t n = option.shards.size();
      for (int64_t s = 0; s < n; ++s) {
        auto [ids, rows] = perPeer(specs[t], option, s, options);
        int64_t holder = state.ranksOf[t][s];
        everySends += ids;
        sent[holder] -= ids;
        recv[holder] += (w - 1) * ids;
        if (option.kind == ShardingKind::TableRowWise && n > 1) {
          // Reduce-scatter of the node's partial sums: 1/n of the global
          // batch's rows to each other shard; then the reduced rows of the
          // batches of ranks q = position mod n to their owners.
          double part = rows * w / static_cast<double>(n);
          for (int64_t i = 0; i < n; ++i) {
            int64_t peer = state.ranksOf[t][i];
            if (peer == holder)
              continue;
            sent[holder] += part;
            recv[peer] += part;
          }
          for (int64_t q = s; q < world; q += n)
            if (q != holder) {
              sent[holder] += rows;
              recv[q] += rows;
            }
          continue;
        }
        everyReceives += rows;
        recv[holder] -= rows;
        sent[holder] += (w - 1) * rows;
      }
    }
    for (int64_t rank = 0; rank < world; ++rank) {
      sent[rank] += everySends;
      recv[rank] += everyReceives;
    }
  }

  /// Bytes one shard of `option` exchanges with each other rank: its ids
  /// (input) and its rows (output).
  static std::pair<double, double> perPeer(const TableSpec &table,
                                           const Option &option, int64_t s,
                                           const PlannerOptions &options) {
    const Shard &shard = option.shards[s];
    bool rowSharded = option.kind == ShardingKind::RowWise ||
                      option.kind == ShardingKind::TableRowWise;
    double rho = rowSharded ? static_cast<double>(shard.rows) /
                                  static_cast<double>(table.rows)
                            : 1.0;
    double batch = static_cast<double>(options.batchSizePerRank);
    double idBytes =
        static_cast<double>(kIdBytes + (table.weighted ? kWeightBytes : 0));
    double ids = batch * (idsPerSample(table) * rho * idBytes +
                          static_cast<double>(table.features.size()) *
                              kLengthBytes);
    double rowsPerSample =
        table.sequence ? idsPerSample(table) * rho : outputRowsPerSample(table);
    double rows = batch * rowsPerSample * static_cast<double>(shard.cols) *
                  kOutputBytes;
    return {ids, rows};
  }

  /// What moving a free (table- or column-wise) shard adds to its new rank
  /// (and takes off its old one): sent, received.
  static std::pair<double, double> holderDelta(std::pair<double, double> peer,
                                               int64_t world) {
    double w = static_cast<double>(world);
    return {(w - 1) * peer.second - peer.first,
            (w - 1) * peer.first - peer.second};
  }

  double bytes(int64_t rank) const { return std::max(sent[rank], recv[rank]); }

  void add(int64_t rank, std::pair<double, double> delta, double sign) {
    sent[rank] += sign * delta.first;
    recv[rank] += sign * delta.second;
  }

  int64_t busiest() const {
    int64_t best = 0;
    for (int64_t rank = 1; rank < world; ++rank)
      if (bytes(rank) > bytes(best))
        best = rank;
    return best;
  }
  void refreshTop() {
    top.fill({-1.0, -1});
    for (int64_t rank = 0; rank < world; ++rank) {
      double value = bytes(rank);
      for (int i = 0; i < 3; ++i)
        if (top[i].second < 0 || value > top[i].first) {
          for (int j = 2; j > i; --j)
            top[j] = top[j - 1];
          top[i] = {value, rank};
          break;
        }
    }
  }
  /// The largest bytes of any rank but `a` and `b` (after refreshTop).
  double othersMax(int64_t a, int64_t b) const {
    for (const auto &entry : top)
      if (entry.second >= 0 && entry.second != a && entry.second != b)
        return entry.first;
    return 0;
  }
  /// The busiest rank's bytes after `delta` (sent, received) moves from
  /// rank `a` to rank `b` (after refreshTop).
  double busiestAfter(int64_t a, int64_t b,
                      std::pair<double, double> delta) const {
    return std::max({sent[a] - delta.first, recv[a] - delta.second,
                     sent[b] + delta.first, recv[b] + delta.second,
                     othersMax(a, b)});
  }

  int64_t world;
  std::vector<double> sent, recv;
  std::array<std::pair<double, int64_t>, 3> top;
};

/// The bytes (sent, received) that the rank holding shard `shard` of table
/// `table` moves for it (TrafficLoads::holderDelta).
std::pair<double, double> shardTraffic(const State &state,
                                       ArrayRef<TableSpec> specs,
                                       const PlannerOptions &options,
                                       int table, int shard) {
  return TrafficLoads::holderDelta(TrafficLoads::perPeer(specs[table],
                                                         state.optionOf(table),
                                                         shard, options),
                                   state.topology->worldSize);
}

/// The `count` ranks first by `before` (all of them when there are fewer):
/// the partners a move search tries swaps with.
template <typename Before>
std::vector<int64_t> swapPartners(int64_t world, size_t count, Before before) {
  std::vector<int64_t> partners(world);
  std::iota(partners.begin(), partners.end(), 0);
  if (partners.size() > count) {
    std::nth_element(partners.begin(), partners.begin() + count,
                     partners.end(), before);
    partners.resize(count);
  }
  return partners;
}

/// Carries out the move MoveSearch chose: shard `unit` (table, shard) from
/// rank `from` to `target` and, for a swap, shard `other` back, keeping
/// the collective loads and the all-to-all bytes in step with the plan.
void applyMove(State &state, CollectiveLoads &loads, TrafficLoads &traffic,
               ArrayRef<TableSpec> specs, const PlannerOptions &options,
               int64_t from, std::pair<int, int> unit,
               std::pair<int, int> other, int64_t target) {
  auto shift = [&](std::pair<int, int> shard, int64_t a, int64_t b) {
    PartArray cost = partsOf(state.optionOf(shard.first).load(shard.second));
    std::pair<double, double> delta =
        shardTraffic(state, specs, options, shard.first, shard.second);
    loads.add(a, cost, -1.0);
    loads.add(b, cost, 1.0);
    traffic.add(a, delta, -1.0);
    traffic.add(b, delta, 1.0);
  };
  shift(unit, from, target);
  state.removeUnit(unit.first, unit.second);
  if (other.first >= 0) {
    shift(other, target, from);
    state.removeUnit(other.first, other.second);
    state.addUnit(other.first, other.second, from);
  }
  state.addUnit(unit.first, unit.second, target);
  loads.refresh();
}

} // namespace

double Planner::busiestTrafficBytes(const State &state) const {
  TrafficLoads traffic(state, specs, tableOptions, options);
  return traffic.bytes(traffic.busiest());
}

int64_t Planner::busiestTrafficRank(const State &state) const {
  return TrafficLoads(state, specs, tableOptions, options).busiest();
}

bool Planner::lowerBusiestTraffic(State &state) const {
  int64_t world = state.topology->worldSize;
  if (world < 2)
    return false;
  bool changed = false;
  MoveSearch search(state, tableOptions);
  CollectiveLoads loads(state, tableOptions);
  TrafficLoads traffic(state, specs, tableOptions, options);
  auto deltaOf = [&](int table, int shard) {
    return shardTraffic(state, specs, options, table, shard);
  };
  constexpr size_t kSwapRanks = 16;
  int64_t limit = 2 * static_cast<int64_t>(specs.size()) + 64;
  for (int64_t step = 0; step < limit; ++step) {
    traffic.refreshTop();
    int64_t from = traffic.busiest();
    double current = traffic.bytes(from);
    double bestValue = current * (1 - 1e-9);
    double collectiveStep = loads.step() * (1 + 1e-12);
    std::pair<int, int> bestUnit{-1, -1}, bestOther{-1, -1};
    int64_t bestTarget = -1;
    // Swap partners: the ranks that move the fewest bytes.
    std::vector<int64_t> partners =
        swapPartners(world, kSwapRanks, [&](int64_t a, int64_t b) {
          return traffic.bytes(a) < traffic.bytes(b) ||
                 (traffic.bytes(a) == traffic.bytes(b) && a < b);
        });
    // The moving shard's bytes, computed once per shard.
    std::pair<int, int> deltaUnit{-1, -1};
    std::pair<double, double> unitDelta;
    search.forEach(
        from, partners,
        [&](const Candidate &c) -> std::optional<double> {
          if (deltaUnit != std::make_pair(c.table, c.shard)) {
            deltaUnit = {c.table, c.shard};
            unitDelta = deltaOf(c.table, c.shard);
          }
          if (!c.otherLoad) {
            double value = traffic.busiestAfter(from, c.target, unitDelta);
            if (value >= bestValue ||
                loads.stepAfter(from, c.target, c.cost) > collectiveStep)
              return std::nullopt;
            return value;
          }
          std::pair<double, double> back = deltaOf(c.otherTable, c.otherShard);
          std::pair<double, double> net = {unitDelta.first - back.first,
                                           unitDelta.second - back.second};
          double value = traffic.busiestAfter(from, c.target, net);
          if (value >= bestValue)
            return std::nullopt;
          PartArray parts = c.cost;
          PartArray backParts = partsOf(*c.otherLoad);
          for (int k = 0; k < kEntries; ++k)
            parts[k] -= backParts[k];
          if (loads.stepAfter(from, c.target, parts) > collectiveStep)
            return std::nullopt;
          return value;
        },
        [&](const Candidate &c, double value) {
          bestValue = value;
          bestUnit = {c.table, c.shard};
          bestOther = {c.otherTable, c.otherShard};
          bestTarget = c.target;
        });
    if (bestTarget < 0)
      return changed;
    changed = true;
    applyMove(state, loads, traffic, specs, options, from, bestUnit, bestOther,
              bestTarget);
  }
  return changed;
}

bool Planner::lowerPeakMemory(State &state) const {
  int64_t world = state.topology->worldSize;
  if (world < 2)
    return false;
  bool changed = false;
  MoveSearch search(state, tableOptions);
  CollectiveLoads loads(state, tableOptions);
  TrafficLoads traffic(state, specs, tableOptions, options);
  auto deltaOf = [&](int table, int shard) {
    return shardTraffic(state, specs, options, table, shard);
  };
  // Neither the collective step nor the busiest rank's all-to-all bytes may
  // grow (MoveSearch keeps every rank at or below the score).
  const double collectiveStep = loads.step() * (1 + 1e-12);
  traffic.refreshTop();
  const double trafficLimit = traffic.bytes(traffic.busiest()) * (1 + 1e-12);
  constexpr size_t kSwapRanks = 16;
  int64_t limit = 2 * static_cast<int64_t>(specs.size()) + 64;
  for (int64_t step = 0; step < limit; ++step) {
    traffic.refreshTop();
    int64_t from = std::max_element(state.device.begin(), state.device.end()) -
                   state.device.begin();
    // A step lowers the fuller of the two ranks it changes below the
    // fullest rank's bytes: the sorted vector of device bytes decreases, so
    // the search ends, and the peak drops once no other rank ties it.
    int64_t current = state.device[from];
    int64_t bestValue = current;
    std::pair<int, int> bestUnit{-1, -1}, bestOther{-1, -1};
    int64_t bestTarget = -1;
    // Swap partners: the ranks with the most free device memory.
    std::vector<int64_t> partners =
        swapPartners(world, kSwapRanks, [&](int64_t a, int64_t b) {
          return state.device[a] < state.device[b] ||
                 (state.device[a] == state.device[b] && a < b);
        });
    search.forEach(
        from, partners,
        [&](const Candidate &c) -> std::optional<double> {
          int64_t moved = c.load.device.total();
          std::pair<double, double> delta = deltaOf(c.table, c.shard);
          PartArray parts = c.cost;
          if (c.otherLoad) {
            moved -= c.otherLoad->device.total();
            std::pair<double, double> back =
                deltaOf(c.otherTable, c.otherShard);
            delta.first -= back.first;
            delta.second -= back.second;
            PartArray backParts = partsOf(*c.otherLoad);
            for (int k = 0; k < kEntries; ++k)
              parts[k] -= backParts[k];
          }
          int64_t value = std::max(state.device[from] - moved,
                                   state.device[c.target] + moved);
          if (moved <= 0 || value >= bestValue ||
              loads.stepAfter(from, c.target, parts) > collectiveStep ||
              traffic.busiestAfter(from, c.target, delta) > trafficLimit)
            return std::nullopt;
          return static_cast<double>(value);
        },
        [&](const Candidate &c, double value) {
          bestValue = static_cast<int64_t>(value);
          bestUnit = {c.table, c.shard};
          bestOther = {c.otherTable, c.otherShard};
          bestTarget = c.target;
        });
    if (bestTarget < 0)
      return changed;
    changed = true;
    applyMove(state, loads, traffic, specs, options, from, bestUnit, bestOther,
              bestTarget);
  }
  return changed;
}
