//===- PlannerCollectives.cpp - the step as its collectives see it --------===//
//
// Steps 6 and 7 of the search, on the best plan. Step 6: the per-rank
// score adds each rank's lookups and its share of the input and output
// all-to-alls, but a step waits for the slowest rank of each collective in
// turn. Here the plan's "collective step" (the sum over the cost parts, lookup,
// input all-to-all, output all-to-all and backward, of the busiest rank's part,
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
// The final pass (step 7b, Planner::finish) runs step 6 with more moves:
// table-row-wise tables moved to, or swapped with those of, another node;
// steps that keep the collective step but leave fewer ranks at a part's
// maximum; none above the busiest rank's all-to-all bytes; and, once, with
// the score free to rise. Step 8 (lowerPeakMemory) gives back device memory
// that lowers none of those figures.
//
//===----------------------------------------------------------------------===//

#include "sharding/PlannerInternal.h"
#include <array>
#include <limits>
#include <optional>

using namespace ember::sharding;
using namespace ember::sharding::detail;

std::pair<double, double>
ember::sharding::detail::shardPeerBytes(const TableSpec &table,
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
  double ids =
      batch * (idsPerSample(table) * rho * idBytes +
               static_cast<double>(table.features.size()) * kLengthBytes);
  double rowsPerSample =
      table.sequence ? idsPerSample(table) * rho : outputRowsPerSample(table);
  double rows =
      batch * rowsPerSample * static_cast<double>(shard.cols) * kOutputBytes;
  return {ids, rows};
}

namespace {

/// The cost parts (lookup, input all-to-all, output all-to-all, backward).
constexpr int kParts = 4;
/// A shard's cost parts, then its side of the three all-to-alls (the last
/// three parts: ShardLoad::exchange).
constexpr int kEntries = kParts + kExchanges;
using PartArray = std::array<double, kEntries>;

/// What a rank's parts (and memory) change by.
struct RankChange {
  int64_t rank;
  PartArray parts;
  int64_t device = 0, host = 0;
};

/// Parts within this fraction of their maximum sit at it.
constexpr double kTie = 1e-9;

/// A plan's collective step and how many ranks sit at a part's maximum
/// (counted among each part's largest ranks that CollectiveLoads keeps).
/// Of two equal steps the one with fewer ranks at a maximum is nearer a
/// lower step: each of them must come down before that maximum does.
struct StepValue {
  double step = 0;
  int atMax = 0;
  /// Whether this step is lower than `other`'s by more than `tolerance`
  /// or, with `ties`, within it with fewer ranks at a maximum.
  bool below(const StepValue &other, bool ties, double tolerance) const {
    return step < other.step - tolerance ||
           (ties && step <= other.step + tolerance && atMax < other.atMax);
  }
};

/// A node-placed (table-row-wise) table's shards moved to the same
/// positions of another node or, when otherTable >= 0, swapped with those
/// of a node-placed table of that node.
struct NodeShift {
  int table;
  int64_t targetNode;
  int otherTable;
};

PartArray partsOf(const ShardLoad &load) {
  const CostParts &cost = load.cost;
  const CostParts &exchange = load.exchange;
  return {cost.lookup,      cost.inputDist,     cost.outputDist,
          cost.backward,    exchange.inputDist, exchange.outputDist,
          exchange.backward};
}

/// What `parts` add to a rank's cost and its side of the all-to-alls.
UnitDelta unitDeltaOf(const PartArray &parts) {
  UnitDelta delta;
  for (int k = 0; k < kParts; ++k)
    delta.cost += parts[k];
  for (int c = 0; c < kExchanges; ++c)
    delta.exchange[c] = parts[kParts + c];
  return delta;
}

/// Per-rank cost parts of a plan and the largest ranks of each part. An
/// all-to-all's part on a rank is what its shards cost plus what every rank's
/// requests exceed its holder side of it by (full-duplex links; the requests do
/// not change while shards move).
class CollectiveLoads {
public:
  /// `nodes`: enough ranks kept to know a part's maximum once the ranks of
  /// two nodes change (else two ranks).
  CollectiveLoads(const State &state, ArrayRef<TableOptions> tables,
                  bool nodes = false)
      : world(state.topology->worldSize), requested(state.requested),
        keep(std::min<int64_t>(
            world, nodes ? 2 * state.topology->ranksPerNode + 2 : 3)) {
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
    std::vector<std::pair<double, int64_t>> &values = scratch;
    values.resize(world);
    auto larger = [](const std::pair<double, int64_t> &a,
                     const std::pair<double, int64_t> &b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    };
    for (int k = 0; k < kParts; ++k) {
      for (int64_t rank = 0; rank < world; ++rank)
        values[rank] = {partAfter(k, rank, PartArray{}, 0.0), rank};
      std::partial_sort(values.begin(), values.begin() + keep, values.end(),
                        larger);
      top[k].assign(values.begin(), values.begin() + keep);
    }
  }

  /// Sum over the parts of the busiest rank's part.
  double step() const {
    double sum = 0;
    for (int k = 0; k < kParts; ++k)
      sum += top[k].empty() ? 0.0 : top[k][0].first;
    return sum;
  }

  int64_t busiest(int part) const {
    return top[part].empty() ? -1 : top[part][0].second;
  }

  /// The step after `delta` leaves rank `a` and arrives at rank `b` (the
  /// moves' hot path: valueAfter without its general bookkeeping).
  double stepAfter(int64_t a, int64_t b, const PartArray &delta) const {
    double sum = 0;
    for (int k = 0; k < kParts; ++k) {
      double value =
          std::max(partAfter(k, a, delta, -1.0), partAfter(k, b, delta, 1.0));
      for (const auto &[part, rank] : top[k])
        if (rank != a && rank != b) {
          value = std::max(value, part);
          break;
        }
      sum += value;
    }
    return sum;
  }

  /// The step and (with `countTies`) the ranks at a part's maximum once
  /// each rank of `changes` gets its delta (a rank at most once).
  StepValue valueAfter(ArrayRef<RankChange> changes, bool countTies) const {
    auto changed = [&](int64_t rank) {
      return llvm::any_of(changes, [&](const RankChange &change) {
        return change.rank == rank;
      });
    };
    StepValue result;
    for (int k = 0; k < kParts; ++k) {
      double value = 0;
      for (const RankChange &change : changes)
        value = std::max(value, partAfter(k, change.rank, change.parts, 1.0));
      // The largest part of the ranks that do not change: the first of the
      // top ones that is not among them, else a scan of every rank.
      auto unchanged =
          llvm::find_if(top[k], [&](const std::pair<double, int64_t> &entry) {
            return !changed(entry.second);
          });
      if (unchanged != top[k].end())
        value = std::max(value, unchanged->first);
      else
        for (int64_t rank = 0; rank < world; ++rank)
          if (!changed(rank))
            value = std::max(value, partAfter(k, rank, PartArray{}, 0.0));
      result.step += value;
      if (!countTies || value <= 0)
        continue;
      double level = value * (1 - kTie);
      for (const RankChange &change : changes)
        result.atMax += partAfter(k, change.rank, change.parts, 1.0) >= level;
      for (const auto &[part, rank] : top[k])
        result.atMax += part >= level && !changed(rank);
    }
    return result;
  }

private:
  int64_t world;
  Exchanges requested;
  /// How many of each part's largest ranks `top` keeps.
  int64_t keep;
  /// refresh()'s ranks by value.
  std::vector<std::pair<double, int64_t>> scratch;
  std::array<std::vector<double>, kEntries> parts;
  /// Each part's largest ranks, largest first: enough to know a part's
  /// maximum once the ranks of two nodes change.
  std::array<std::vector<std::pair<double, int64_t>>, kParts> top;
};

/// The `count` ranks first by `before` (all of them when there are fewer):
/// the partners a move search tries swaps with.
template <typename Before>
std::vector<int64_t> swapPartners(int64_t world, size_t count, Before before) {
  std::vector<int64_t> partners(world);
  std::iota(partners.begin(), partners.end(), 0);
  if (partners.size() > count) {
    std::nth_element(partners.begin(), partners.begin() + count, partners.end(),
                     before);
    partners.resize(count);
  }
  return partners;
}

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
  /// `keepScore`: no rank may go above the plan's score (else only memory
  /// bounds the moves).
  MoveSearch(const State &state, ArrayRef<TableOptions> tableOptions,
             bool keepScore = true)
      : state(state), tableOptions(tableOptions),
        world(state.topology->worldSize),
        ceiling(keepScore
                    ? *std::max_element(state.cost.begin(), state.cost.end())
                    : std::numeric_limits<double>::infinity()),
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
        if (auto value = evaluate(move))
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
          auto value = evaluate(swap);
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

  /// For each node-placed (table-row-wise) table with a shard on `from`:
  /// its move to every other node, and its swap with each node-placed table
  /// of the nodes in `partnerNodes`, that keep every rank at or below the
  /// plan's score and in memory. Calls `evaluate(shift, changes)` with what
  /// each rank of the two nodes gains, and `take(shift, value)` for the
  /// candidates it gave a value.
  template <typename Evaluate, typename Take>
  void forEachNodeShift(int64_t from, ArrayRef<int64_t> partnerNodes,
                        Evaluate evaluate, Take take) const {
    const Topology &topo = *state.topology;
    int64_t fromNode = topo.nodeOf(from);
    std::vector<RankChange> changes;
    auto shiftOnto = [&](int table, int64_t node) {
      const Option &option = state.optionOf(table);
      for (int shard = 0, e = option.shards.size(); shard < e; ++shard) {
        int64_t rank = node * topo.ranksPerNode + option.shards[shard].rank;
        if (rank >= world)
          return false;
        change(changes, state.ranksOf[table][shard], option.load(shard), -1.0);
        change(changes, rank, option.load(shard), 1.0);
      }
      return true;
    };
    auto consider = [&](const NodeShift &shift) {
      changes.clear();
      if (!shiftOnto(shift.table, shift.targetNode) ||
          (shift.otherTable >= 0 && !shiftOnto(shift.otherTable, fromNode)) ||
          !allowed(changes))
        return;
      if (auto value = evaluate(shift, changes))
        take(shift, *value);
    };
    for (auto [table, shard] : state.units[from]) {
      if (!nodeMovable(table))
        continue;
      for (int64_t node = 0, e = topo.numNodes(); node < e; ++node)
        if (node != fromNode)
          consider({table, node, -1});
      for (int64_t node : partnerNodes) {
        if (node == fromNode)
          continue;
        // Each node-placed table of the node once: by its first shard.
        for (int64_t rank = node * topo.ranksPerNode,
                     end = std::min(world, rank + topo.ranksPerNode);
             rank < end; ++rank)
          for (auto [other, otherShard] : state.units[rank])
            if (otherShard == 0 && nodeMovable(other))
              consider({table, node, other});
      }
    }
  }

private:
  bool nodeMovable(int table) const {
    return !tableOptions[table].userFixed &&
           state.optionOf(table).placement == Placement::Node;
  }
  /// Adds `sign` times `load` to the change of `rank` in `changes`.
  void change(std::vector<RankChange> &changes, int64_t rank,
              const ShardLoad &load, double sign) const {
    auto it = llvm::find_if(
        changes, [&](const RankChange &entry) { return entry.rank == rank; });
    if (it == changes.end()) {
      changes.push_back({rank, PartArray{}, 0, 0});
      it = std::prev(changes.end());
    }
    PartArray parts = partsOf(load);
    for (int k = 0; k < kEntries; ++k)
      it->parts[k] += sign * parts[k];
    it->device += static_cast<int64_t>(sign) * load.device.total();
    it->host += static_cast<int64_t>(sign) * load.host.total();
  }
  /// Whether every rank of `changes` stays at or below the plan's score and
  /// fits its memory, at or below the fullest rank's device bytes.
  bool allowed(ArrayRef<RankChange> changes) const {
    for (const RankChange &change : changes) {
      if (state.costAfter(change.rank, unitDeltaOf(change.parts)) >
          ceiling + slack)
        return false;
      int64_t device = std::max<int64_t>(change.device, 0);
      if (!state.fits(change.rank, device, std::max<int64_t>(change.host, 0)) ||
          state.device[change.rank] + device > deviceCeiling)
        return false;
    }
    return true;
  }
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

/// Carries out a NodeShift: the table's shards to the same positions of the
/// target node and, for a swap, the other table's to those of the first
/// table's node.
void shiftTables(State &state, const NodeShift &shift) {
  const Topology &topo = *state.topology;
  int64_t fromNode = topo.nodeOf(state.ranksOf[shift.table][0]);
  auto take = [&](int table) {
    for (int shard = 0, e = state.ranksOf[table].size(); shard < e; ++shard)
      state.removeUnit(table, shard);
  };
  auto put = [&](int table, int64_t node) {
    const Option &option = state.optionOf(table);
    for (int shard = 0, e = option.shards.size(); shard < e; ++shard)
      state.addUnit(table, shard,
                    node * topo.ranksPerNode + option.shards[shard].rank);
  };
  take(shift.table);
  if (shift.otherTable >= 0) {
    take(shift.otherTable);
    put(shift.otherTable, fromNode);
  }
  put(shift.table, shift.targetNode);
}

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
    double everySends = 0, everyReceives = 0;
    for (int t = 0, e = specs.size(); t < e; ++t) {
      const Option &option = tables[t].options[state.choice[t]];
      if (option.kind == ShardingKind::DataParallel)
        continue;
      int64_t n = option.shards.size();
      ArrayRef<int64_t> ranks = state.ranksOf[t];
      for (int64_t s = 0; s < n; ++s) {
        std::pair<double, double> peer =
            shardPeerBytes(specs[t], option, s, options);
        int64_t holder = ranks[s];
        // What every rank sends (its ids) and receives (its rows; a
        // table-row-wise shard's reduced rows: the ranks q = position mod
        // n), then what the holder does beyond that.
        everySends += peer.first;
        if (reducesInNode(option))
          for (int64_t q = s; q < world; q += n)
            recv[q] += peer.second;
        else
          everyReceives += peer.second;
        int64_t peers =
            llvm::count_if(ranks, [&](int64_t rank) { return rank != holder; });
        add(holder, holderTraffic(option, s, holder, peers, peer, world), 1.0);
      }
    }
    for (int64_t rank = 0; rank < world; ++rank) {
      sent[rank] += everySends;
      recv[rank] += everyReceives;
    }
  }

  /// Whether `option`'s shards reduce-scatter in their node (table-row-wise
  /// with more than one shard).
  static bool reducesInNode(const Option &option) {
    return option.kind == ShardingKind::TableRowWise &&
           option.shards.size() > 1;
  }

  /// What the rank `holder` of shard `s` of `option` sends and receives for
  /// it beyond what every rank does (`peer`: the shard's bytes per other
  /// rank, shardPeerBytes; `peers`: the table's shards on other ranks). Every
  /// other rank's ids in, its own not sent; a table-, column- or row-wise
  /// shard's rows out to every other rank, its own not received; a
  /// table-row-wise shard's partial sums, 1/n of the global batch's rows, to
  /// and from each of its peers, then the reduced rows of the ranks q = s mod n
  /// but itself.
  static std::pair<double, double>
  holderTraffic(const Option &option, int64_t s, int64_t holder, int64_t peers,
                std::pair<double, double> peer, int64_t world) {
    auto [ids, rows] = peer;
    double w = static_cast<double>(world);
    if (!reducesInNode(option))
      return {(w - 1) * rows - ids, (w - 1) * ids - rows};
    int64_t n = option.shards.size();
    double part = rows * w / static_cast<double>(n);
    double owners = static_cast<double>((world - s + n - 1) / n);
    double ownsRows = holder >= s && (holder - s) % n == 0 ? 1.0 : 0.0;
    double reduce = static_cast<double>(peers) * part;
    return {reduce + rows * (owners - ownsRows) - ids,
            reduce + (w - 1) * ids - rows * ownsRows};
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

/// The bytes (sent, received) that the rank holding free shard `shard` of
/// table `table` moves for it (TrafficLoads::holderTraffic).
std::pair<double, double> shardTraffic(const State &state,
                                       ArrayRef<TableSpec> specs,
                                       const PlannerOptions &options,
                                       int table, int shard) {
  const Option &option = state.optionOf(table);
  return TrafficLoads::holderTraffic(
      option, shard, state.ranksOf[table][shard], 0,
      shardPeerBytes(specs[table], option, shard, options),
      state.topology->worldSize);
}

/// What a rank sends and receives more in the all-to-alls.
struct RankBytes {
  int64_t rank;
  double sent = 0, recv = 0;
};

/// What `shift` changes in the all-to-all bytes of the ranks it touches
/// (into `changes`): each shard's holder side leaves its rank for the rank
/// at the same position of the other node.
void nodeShiftTraffic(const State &state, ArrayRef<TableSpec> specs,
                      const PlannerOptions &options, const NodeShift &shift,
                      std::vector<RankBytes> &changes) {
  changes.clear();
  const Topology &topo = *state.topology;
  auto add = [&](int64_t rank, std::pair<double, double> bytes, double sign) {
    auto it = llvm::find_if(
        changes, [&](const RankBytes &change) { return change.rank == rank; });
    if (it == changes.end())
      it = changes.insert(changes.end(), RankBytes{rank});
    it->sent += sign * bytes.first;
    it->recv += sign * bytes.second;
  };
  auto move = [&](int table, int64_t node) {
    const Option &option = state.optionOf(table);
    int64_t peers = static_cast<int64_t>(option.shards.size()) - 1;
    for (int64_t s = 0, e = option.shards.size(); s < e; ++s) {
      std::pair<double, double> peer =
          shardPeerBytes(specs[table], option, s, options);
      int64_t before = state.ranksOf[table][s];
      int64_t after = node * topo.ranksPerNode + option.shards[s].rank;
      add(before,
          TrafficLoads::holderTraffic(option, s, before, peers, peer,
                                      topo.worldSize),
          -1.0);
      add(after,
          TrafficLoads::holderTraffic(option, s, after, peers, peer,
                                      topo.worldSize),
          1.0);
    }
  };
  int64_t fromNode = topo.nodeOf(state.ranksOf[shift.table][0]);
  move(shift.table, shift.targetNode);
  if (shift.otherTable >= 0)
    move(shift.otherTable, fromNode);
}

/// Carries out the move MoveSearch chose: shard `unit` (table, shard) from
/// rank `from` to `target` and, for a swap, shard `other` back, keeping
/// the collective loads and the all-to-all bytes in step with the plan.
void applyMove(State &state, CollectiveLoads &loads, TrafficLoads *traffic,
               ArrayRef<TableSpec> specs, const PlannerOptions &options,
               int64_t from, std::pair<int, int> unit,
               std::pair<int, int> other, int64_t target) {
  auto shift = [&](std::pair<int, int> shard, int64_t a, int64_t b) {
    PartArray cost = partsOf(state.optionOf(shard.first).load(shard.second));
    loads.add(a, cost, -1.0);
    loads.add(b, cost, 1.0);
    if (!traffic)
      return;
    std::pair<double, double> delta =
        shardTraffic(state, specs, options, shard.first, shard.second);
    traffic->add(a, delta, -1.0);
    traffic->add(b, delta, 1.0);
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

bool Planner::improveCollectives(State &state, CollectiveMoves moves) const {
  int64_t world = state.topology->worldSize;
  if (world < 2)
    return false;
  bool changed = false;
  bool finalPass = moves != CollectiveMoves::Search;
  // No rank may go above the fullest rank's device memory, nor, unless
  // beyond the score, above the plan's score (its largest per-rank cost).
  MoveSearch search(state, tableOptions,
                    /*keepScore=*/moves != CollectiveMoves::BeyondScore);
  CollectiveLoads loads(state, tableOptions, /*nodes=*/finalPass);
  // The all-to-all bytes, which the final pass keeps under the busiest
  // rank's.
  std::optional<TrafficLoads> traffic;
  if (finalPass)
    traffic.emplace(state, specs, tableOptions, options);
  std::vector<RankBytes> shiftBytes;
  // Swap partners: the ranks with the most room under the ceiling.
  constexpr size_t kSwapRanks = 16;
  int64_t limit = 2 * static_cast<int64_t>(specs.size()) + 64;
  for (int64_t step = 0; step < limit; ++step) {
    // A step must beat the plan by more than rounding, and the best
    // candidate so far. In the final pass it may also keep the collective
    // step and lower the ranks at a part's maximum (where two ranks tie, no
    // single step lowers the maximum), and it may not take any rank above
    // the busiest rank's all-to-all bytes.
    StepValue bestValue = loads.valueAfter({}, finalPass);
    const StepValue current = bestValue;
    const double tolerance = kTie * std::max(current.step, 1e-12);
    auto better = [&](const StepValue &after) {
      return after.below(current, finalPass, tolerance) &&
             after.below(bestValue, finalPass, 0.0);
    };
    const double bytesLimit =
        traffic ? traffic->bytes(traffic->busiest()) * (1 + 1e-12) : 0.0;
    auto withinBytes = [&](ArrayRef<RankBytes> changes) {
      return llvm::all_of(changes, [&](const RankBytes &change) {
        return std::max(traffic->sent[change.rank] + change.sent,
                        traffic->recv[change.rank] + change.recv) <= bytesLimit;
      });
    };
    std::pair<int, int> bestUnit{-1, -1}, bestOther{-1, -1};
    int64_t bestTarget = -1;
    std::vector<int64_t> partners =
        swapPartners(world, kSwapRanks, [&](int64_t a, int64_t b) {
          return state.cost[a] < state.cost[b] ||
                 (state.cost[a] == state.cost[b] && a < b);
        });
    // Node shifts (final pass): swap partners on the nodes of those ranks.
    std::vector<int64_t> partnerNodes;
    for (int64_t rank : partners)
      partnerNodes.push_back(state.topology->nodeOf(rank));
    llvm::sort(partnerNodes);
    partnerNodes.erase(std::unique(partnerNodes.begin(), partnerNodes.end()),
                       partnerNodes.end());
    std::optional<NodeShift> bestShift;
    std::vector<RankChange> bestChanges;
    for (int part = 0; part < kParts; ++part) {
      int64_t from = loads.busiest(part);
      if (from < 0)
        continue;
      search.forEach(
          from, partners,
          [&](const Candidate &c) -> std::optional<StepValue> {
            PartArray delta = c.cost;
            if (c.otherLoad) {
              PartArray back = partsOf(*c.otherLoad);
              for (int k = 0; k < kEntries; ++k)
                delta[k] -= back[k];
            }
            StepValue after;
            if (finalPass) {
              PartArray away = delta;
              for (double &value : away)
                value = -value;
              std::array<RankChange, 2> changes{RankChange{from, away},
                                                RankChange{c.target, delta}};
              after = loads.valueAfter(changes, /*countTies=*/true);
            } else {
              after.step = loads.stepAfter(from, c.target, delta);
            }
            if (!better(after))
              return std::nullopt;
            if (finalPass) {
              std::pair<double, double> bytes =
                  shardTraffic(state, specs, options, c.table, c.shard);
              if (c.otherLoad) {
                std::pair<double, double> back = shardTraffic(
                    state, specs, options, c.otherTable, c.otherShard);
                bytes.first -= back.first;
                bytes.second -= back.second;
              }
              std::array<RankBytes, 2> moved{
                  RankBytes{from, -bytes.first, -bytes.second},
                  RankBytes{c.target, bytes.first, bytes.second}};
              if (!withinBytes(moved))
                return std::nullopt;
            }
            return after;
          },
          [&](const Candidate &c, const StepValue &after) {
            bestValue = after;
            bestUnit = {c.table, c.shard};
            bestOther = {c.otherTable, c.otherShard};
            bestTarget = c.target;
            bestShift.reset();
          });
      if (!finalPass || state.topology->numNodes() < 2)
        continue;
      search.forEachNodeShift(
          from, partnerNodes,
          [&](const NodeShift &shift,
              ArrayRef<RankChange> changes) -> std::optional<StepValue> {
            StepValue after = loads.valueAfter(changes, /*countTies=*/true);
            if (!better(after))
              return std::nullopt;
            nodeShiftTraffic(state, specs, options, shift, shiftBytes);
            if (!withinBytes(shiftBytes))
              return std::nullopt;
            bestChanges.assign(changes.begin(), changes.end());
            return after;
          },
          [&](const NodeShift &shift, const StepValue &after) {
            bestValue = after;
            bestShift = shift;
            bestTarget = -1;
          });
    }
    if (bestShift) {
      nodeShiftTraffic(state, specs, options, *bestShift, shiftBytes);
      for (const RankBytes &change : shiftBytes)
        traffic->add(change.rank, {change.sent, change.recv}, 1.0);
      for (const RankChange &change : bestChanges)
        loads.add(change.rank, change.parts, 1.0);
      shiftTables(state, *bestShift);
      loads.refresh();
    } else if (bestTarget >= 0) {
      applyMove(state, loads, finalPass ? &*traffic : nullptr, specs, options,
                state.ranksOf[bestUnit.first][bestUnit.second], bestUnit,
                bestOther, bestTarget);
    } else {
      return changed;
    }
    changed = true;
  }
  return changed;
}

double Planner::collectiveStep(const State &state) const {
  return CollectiveLoads(state, tableOptions).step();
}

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
    applyMove(state, loads, &traffic, specs, options, from, bestUnit, bestOther,
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
    applyMove(state, loads, &traffic, specs, options, from, bestUnit, bestOther,
              bestTarget);
  }
  return changed;
}
