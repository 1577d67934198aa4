//===- PlannerInternal.h - what the planner's files share -------*- C++ -*-===//
//
// The sharding planner's internals: the shardings a table may take
// (Option), the search state (State) and the Planner that drives the steps.
// Each step has its file:
//   Planner.cpp            inputs, the run (seeds, improvement, the best),
//                          the result and the infeasibility report
//   PlannerCandidates.cpp  1. the shardings each table may take
//   PlannerSeed.cpp        2. greedy seed placements (and State::place)
//   PlannerMemory.cpp      2b. memory before UVM: room made for the tables
//                          a seed could not place or served from host memory
//   PlannerSearch.cpp      3. local improvement (on the additive bound, then
//                          the duplex cost); 3b. re-shard and improve;
//                          exact search of tiny cases
//   PlannerCollectives.cpp 6. the best plan's collective step lowered;
//                          7. its busiest rank's all-to-all bytes lowered;
//                          7b. on the plan chosen, 6 and 7 again with
//                          table-row-wise tables moved between nodes;
//                          8. its fullest rank's device memory lowered
//   PlannerLean.cpp        9. training-lean: the inference plan's replicas
//                          sharded within its bytes
// Not part of the library's interface (Planner.h is).
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_SHARDING_PLANNERINTERNAL_H
#define EMBER_SHARDING_PLANNERINTERNAL_H

#include "sharding/CostModel.h"
#include "sharding/Planner.h"
#include "sharding/ShardingTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace ember::sharding::detail {

using llvm::ArrayRef;

/// Device memory the tables' shards may fill on average, of what the
/// replicas and the baseline leave each rank (shards do not pack exactly):
/// the spill seed spills until the rest fit it, and auto replicas stop where
/// the sharded tables would no longer fit it (PlannerSeed.cpp,
/// PlannerCandidates.cpp).
constexpr double kPackingMargin = 0.92;

/// Host memory is the last resort: of two plans, the one that serves at most
/// kHostFirstFraction of the other's host bytes wins unless its score is
/// more than kHostFirstSlack times the other's (Planner::preferred).
constexpr double kHostFirstFraction = 0.1;
constexpr double kHostFirstSlack = 1.5;

/// The all-to-alls whose sides meet in a duplex max (ShardLoad::exchange):
/// input (ids), output (rows) and, in training, the gradients'.
constexpr int kExchanges = 3;
using Exchanges = std::array<double, kExchanges>;
inline Exchanges exchangesOf(const CostParts &parts) {
  return {parts.inputDist, parts.outputDist, parts.backward};
}

/// std::stable_sort's order (by `less`, ties as they were) without the
/// temporary buffer libstdc++'s stable_sort asks for through
/// std::get_temporary_buffer, deprecated under clang 22.
template <typename T, typename Less>
void stableSort(std::vector<T> &items, Less less) {
  std::vector<size_t> index(items.size());
  std::iota(index.begin(), index.end(), size_t(0));
  std::sort(index.begin(), index.end(), [&](size_t a, size_t b) {
    if (less(items[a], items[b]))
      return true;
    if (less(items[b], items[a]))
      return false;
    return a < b;
  });
  std::vector<T> sorted;
  sorted.reserve(items.size());
  for (size_t i : index)
    sorted.push_back(std::move(items[i]));
  items.swap(sorted);
}

inline llvm::Error makeError(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

enum class Placement {
  /// Every shard may go to any rank (table_wise, column_wise).
  Free,
  /// The shards' ranks are given (row_wise, data_parallel, pinned, imported).
  Fixed,
  /// The shards go to the ranks of one node, shard i to its i-th rank
  /// (table_row_wise); the search chooses the node.
  Node,
};

/// What one shard adds to the rank that holds it, with the totals the
/// search adds up.
struct UnitLoad {
  ShardLoad load;
  /// load.cost.total().
  double cost = 0;
  /// The holder's side of the all-to-alls (ShardLoad::exchange).
  Exchanges exchange{};
  /// load.device.total(), load.host.total().
  int64_t device = 0, host = 0;
};

/// One way to shard a table: kind, kernel and shard geometry.
struct Option {
  ShardingKind kind = ShardingKind::TableWise;
  ComputeKernel kernel = ComputeKernel::Fused;
  Placement placement = Placement::Free;
  /// Shard blocks (data_parallel: one whole-table block per replica). Their
  /// ranks matter for Fixed placement; Node placement uses them as positions
  /// in the node.
  std::vector<Shard> shards;
  /// What each shard adds to its rank: shards of one size load a rank alike,
  /// so each distinct load is kept once (`units`) and each shard names its
  /// own (`unitOfShard`). A 512-rank row-wise or data_parallel option has
  /// one or two; kept per shard they made options most of the planner's
  /// memory (~1 GB at 1,000 tables x 512 ranks).
  std::vector<UnitLoad> units;
  std::vector<uint32_t> unitOfShard;
  /// Device and host bytes of every shard together.
  int64_t deviceBytes = 0, hostBytes = 0;
  double totalCost = 0;
  /// What the option costs every rank (ShardLoad::everyRank of its shards):
  /// in all, and by all-to-all.
  double everyRankCost = 0;
  Exchanges everyRankParts{};
  int64_t maxShardDeviceBytes = 0;
  int64_t replicaBytes = 0;
  /// Uses the data_parallel replica budget (auto choice).
  bool budgeted = false;
  /// Each shard's holder cost is at least its side of the all-to-alls, so
  /// adding a shard to a rank never lowers that rank's cost (the duplex
  /// model subtracts the holder side from the requests): what lets
  /// tryReshard bound a re-shard before placing it.
  bool shardsNeverLowerCost = true;
  /// No two shards name the same rank (their ranks matter for Fixed
  /// placement only).
  bool shardsOnDistinctRanks = false;

  const UnitLoad &unit(int shard) const { return units[unitOfShard[shard]]; }
  const ShardLoad &load(int shard) const { return unit(shard).load; }
  double unitCost(int shard) const { return unit(shard).cost; }
  const Exchanges &unitExchange(int shard) const {
    return unit(shard).exchange;
  }
  int64_t unitDevice(int shard) const { return unit(shard).device; }
  int64_t unitHost(int shard) const { return unit(shard).host; }
};

struct TableOptions {
  std::vector<Option> options;
  /// Fixed by the user (imported or pinned): placed first, never moved.
  bool userFixed = false;
};

/// What moving shards adds to (or takes off) a rank: their holder cost and
/// their side of the all-to-alls.
struct UnitDelta {
  double cost = 0;
  Exchanges exchange{};
  UnitDelta &add(const Option &option, int shard, double sign) {
    const UnitLoad &unit = option.unit(shard);
    cost += sign * unit.cost;
    for (int c = 0; c < kExchanges; ++c)
      exchange[c] += sign * unit.exchange[c];
    return *this;
  }
};

/// Search state: where every table's shards are and what each rank carries.
/// A rank's cost is what it holds (`held`) plus, for each all-to-all, what
/// its requests (the same on every rank: `requested`) exceed its holder's
/// side of it (`exchange`): full-duplex links, so the larger of sent and
/// received counts (docs/sharding.md, "Cost model"). With `duplex` off the
/// requests are added whole instead: the additive bound the seeds and the
/// first local search work on (Planner::run).
class State {
public:
  State(const Topology &topology, ArrayRef<TableOptions> tables,
        const ShardLoad &baseline, double replicaBudget)
      : topology(&topology), tables(tables), replicaBudget(replicaBudget) {
    int64_t world = topology.worldSize;
    cost.assign(world, baseline.cost.total());
    held = cost;
    for (auto &part : exchange)
      part.assign(world, 0);
    device.assign(world, baseline.device.total());
    host.assign(world, baseline.host.total());
    units.assign(world, {});
    choice.assign(tables.size(), -1);
    ranksOf.assign(tables.size(), {});
    positions.assign(tables.size(), {});
    movable.assign(tables.size(), 0);
    movableUnits.assign(world, {});
    movableStale.assign(world, 1);
    deviceCap = topology.usableDeviceMemory();
    hostCap = topology.hostMemoryBytes;
    extraCost.assign(world, 0);
    extraDevice.assign(world, 0);
    extraHost.assign(world, 0);
  }

  /// A pointer, not a reference, so that a state of the same planner can be
  /// assigned (re-shard copies reuse their storage).
  const Topology *topology;
  ArrayRef<TableOptions> tables;
  double replicaBudget;
  double replicaUsed = 0;
  int64_t deviceCap, hostCap;
  /// Each rank's cost (held plus what its requests exceed; kept current).
  std::vector<double> cost;
  /// What each rank's shards cost it (ShardLoad::cost summed).
  std::vector<double> held;
  /// Each rank's holder side of each all-to-all.
  std::array<std::vector<double>, kExchanges> exchange;
  /// Every rank's requester side of each all-to-all (the placed shards'
  /// ShardLoad::everyRank summed).
  Exchanges requested{};
  std::vector<int64_t> device, host;
  /// (table, shard) pairs on each rank.
  std::vector<std::vector<std::pair<int, int>>> units;
  std::vector<int> choice;
  /// Whether a table's shards may move to other ranks: placed with a free
  /// option and not fixed by the user (kept with `choice`: the searches
  /// test it for every unit of the ranks they scan).
  std::vector<char> movable;
  /// Each rank's units of movable tables, in the order of `units`, rebuilt
  /// on use once the rank's units changed (movableUnitsOn): trySwap scans
  /// the lists of 32 ranks per step, most of whose units are replicas.
  std::vector<std::vector<std::pair<int, int>>> movableUnits;
  std::vector<char> movableStale;
  std::vector<std::vector<int64_t>> ranksOf;
  std::vector<std::vector<size_t>> positions;
  /// Scratch of place(): what the shards placed so far add to each rank.
  std::vector<double> extraCost;
  std::vector<int64_t> extraDevice, extraHost;
  std::vector<int64_t> touched;

  ArrayRef<std::pair<int, int>> movableUnitsOn(int64_t rank) {
    if (movableStale[rank]) {
      std::vector<std::pair<int, int>> &list = movableUnits[rank];
      list.clear();
      for (std::pair<int, int> unit : units[rank])
        if (movable[unit.first])
          list.push_back(unit);
      movableStale[rank] = 0;
    }
    return movableUnits[rank];
  }

  const Option &optionOf(int table) const {
    return tables[table].options[choice[table]];
  }

  bool fits(int64_t rank, const ShardLoad &load) const {
    return device[rank] + load.device.total() <= deviceCap &&
           host[rank] + load.host.total() <= hostCap;
  }
  bool fits(int64_t rank, int64_t deviceBytes, int64_t hostBytes) const {
    return device[rank] + deviceBytes <= deviceCap &&
           host[rank] + hostBytes <= hostCap;
  }
  /// Whether shard `shard` of `option` fits on `rank` next to the shards
  /// already put there by the current place().
  bool fitsWithExtra(int64_t rank, const Option &option, int shard) const {
    const UnitLoad &unit = option.unit(shard);
    return fits(rank, extraDevice[rank] + unit.device,
                extraHost[rank] + unit.host);
  }
  void addExtra(int64_t rank, const Option &option, int shard) {
    if (extraDevice[rank] == 0 && extraHost[rank] == 0 && extraCost[rank] == 0)
      touched.push_back(rank);
    const UnitLoad &unit = option.unit(shard);
    extraCost[rank] += unit.cost;
    extraDevice[rank] += unit.device;
    extraHost[rank] += unit.host;
  }
  void clearExtra() {
    for (int64_t rank : touched) {
      extraCost[rank] = 0;
      extraDevice[rank] = 0;
      extraHost[rank] = 0;
    }
    touched.clear();
  }

  /// Scratch of reshardAndImprove: the busiest rank's all-to-all bytes.
  double trafficBytes = 0;
  /// Whether costs are the duplex model's (else the additive bound).
  bool duplex = true;
  /// A rank's cost with `held` and `exchange` as given.
  double rankCost(double heldCost, const Exchanges &exchanged) const {
    double result = heldCost;
    for (int c = 0; c < kExchanges; ++c)
      result +=
          duplex ? std::max(0.0, requested[c] - exchanged[c]) : requested[c];
    return result;
  }
  void setDuplex(bool on) {
    duplex = on;
    for (int64_t rank = 0, e = cost.size(); rank < e; ++rank)
      refreshCost(rank);
  }
  /// The cost of `rank` once `delta` is added to it (placements as they
  /// are otherwise).
  double costAfter(int64_t rank, const UnitDelta &delta) const {
    Exchanges exchanged;
    for (int c = 0; c < kExchanges; ++c)
      exchanged[c] = exchange[c][rank] + delta.exchange[c];
    return rankCost(held[rank] + delta.cost, exchanged);
  }
  double costAfter(int64_t rank, const Option &option, int shard,
                   double sign) const {
    return costAfter(rank, UnitDelta().add(option, shard, sign));
  }
  void refreshCost(int64_t rank) { cost[rank] = costAfter(rank, UnitDelta()); }
  double maxCost() const { return *std::max_element(cost.begin(), cost.end()); }
  double totalCost() const {
    return std::accumulate(cost.begin(), cost.end(), 0.0);
  }
  /// Host memory used by every rank together (UVM kernels).
  int64_t hostBytes() const {
    return std::accumulate(host.begin(), host.end(), int64_t(0));
  }
  int64_t maxRank() const {
    return std::max_element(cost.begin(), cost.end()) - cost.begin();
  }

  void addUnit(int table, int shard, int64_t rank) {
    const Option &option = tables[table].options[choice[table]];
    const UnitLoad &unit = option.unit(shard);
    held[rank] += unit.cost;
    for (int c = 0; c < kExchanges; ++c)
      exchange[c][rank] += unit.exchange[c];
    refreshCost(rank);
    device[rank] += unit.device;
    host[rank] += unit.host;
    ranksOf[table][shard] = rank;
    positions[table][shard] = units[rank].size();
    units[rank].push_back({table, shard});
    movableStale[rank] = 1;
  }

  void removeUnit(int table, int shard) {
    const Option &option = tables[table].options[choice[table]];
    int64_t rank = ranksOf[table][shard];
    const UnitLoad &unit = option.unit(shard);
    held[rank] -= unit.cost;
    for (int c = 0; c < kExchanges; ++c)
      exchange[c][rank] -= unit.exchange[c];
    refreshCost(rank);
    device[rank] -= unit.device;
    host[rank] -= unit.host;
    movableStale[rank] = 1;
    size_t position = positions[table][shard];
    auto &list = units[rank];
    std::pair<int, int> last = list.back();
    list[position] = last;
    positions[last.first][last.second] = position;
    list.pop_back();
    ranksOf[table][shard] = -1;
  }

  void removeTable(int table) {
    const Option &option = optionOf(table);
    for (int shard = 0, e = option.shards.size(); shard < e; ++shard)
      removeUnit(table, shard);
    if (option.budgeted)
      replicaUsed -= static_cast<double>(option.replicaBytes);
    request(option, -1.0);
    choice[table] = -1;
    movable[table] = 0;
  }

  /// Places `table` with its option `index` at `ranks` (one per shard),
  /// without checks.
  void placeAt(int table, int index, ArrayRef<int64_t> ranks) {
    choice[table] = index;
    const Option &option = tables[table].options[index];
    movable[table] =
        !tables[table].userFixed && option.placement == Placement::Free;
    ranksOf[table].assign(option.shards.size(), -1);
    positions[table].assign(option.shards.size(), 0);
    for (int shard = 0, e = option.shards.size(); shard < e; ++shard)
      addUnit(table, shard, ranks[shard]);
    if (option.budgeted)
      replicaUsed += static_cast<double>(option.replicaBytes);
    request(option, 1.0);
  }

  /// Adds (sign 1) or removes (-1) the requester side of `option` on every
  /// rank.
  void request(const Option &option, double sign) {
    bool changed = false;
    for (int c = 0; c < kExchanges; ++c)
      if (option.everyRankParts[c] != 0) {
        requested[c] += sign * option.everyRankParts[c];
        changed = true;
      }
    if (changed)
      for (int64_t rank = 0, e = cost.size(); rank < e; ++rank)
        refreshCost(rank);
  }

  /// Places `table` with option `index` greedily: free shards on the least
  /// loaded ranks (or the ones with most free memory when `byMemory`), a
  /// node-placed table on the node whose ranks end least loaded. Returns
  /// false (state unchanged) when it does not fit. (PlannerSeed.cpp)
  bool place(int table, int index, bool byMemory);
  /// The ranks place() would put the shards of `table`'s option `index` on
  /// (false when it does not fit), without placing them.
  bool chooseRanks(int table, int index, bool byMemory,
                   std::vector<int64_t> &ranks);
  /// A node-placed `option` (shard i on the node's rank option.shards[i].rank)
  /// on the node where its shards fit and the largest `key(rank, shard)` of
  /// them is lowest (ties to the lower node): its ranks into `ranks`. False
  /// when no node fits it.
  template <typename Key>
  bool placeOnBestNode(const Option &option, Key key,
                       std::vector<int64_t> &ranks) const {
    int64_t perNode = topology->ranksPerNode;
    int64_t numShards = option.shards.size();
    int64_t bestNode = -1;
    double bestKey = 0;
    for (int64_t node = 0; node < topology->numNodes(); ++node) {
      int64_t first = node * perNode;
      if (first + numShards > topology->worldSize)
        continue;
      bool ok = true;
      double nodeKey = 0;
      for (int64_t shard = 0; shard < numShards && ok; ++shard) {
        int64_t rank = first + option.shards[shard].rank;
        ok = fits(rank, option.unitDevice(shard), option.unitHost(shard));
        nodeKey = std::max(nodeKey, key(rank, shard));
      }
      if (ok && (bestNode < 0 || nodeKey < bestKey)) {
        bestNode = node;
        bestKey = nodeKey;
      }
    }
    if (bestNode < 0)
      return false;
    ranks.resize(numShards);
    for (int64_t shard = 0; shard < numShards; ++shard)
      ranks[shard] = bestNode * perNode + option.shards[shard].rank;
    return true;
  }
  /// The most any of `ranks` would hold (ShardLoad::cost) with the shards
  /// of `table`'s option `index` on them (shard i on ranks[i]).
  double heldMaxAfter(int table, int index, ArrayRef<int64_t> ranks);
};

/// A table's placement (option and ranks), to put it back.
struct Placed {
  int table = -1;
  int choice = -1;
  std::vector<int64_t> ranks;
};

/// States to copy plans into, kept for reuse; safe to use from several
/// threads. A state taken is a copy of the one given; one given back keeps
/// its storage for the next copy (vectors assigned in place allocate
/// nothing when they are large enough).
class StatePool {
public:
  std::unique_ptr<State> take(const State &from) {
    std::unique_ptr<State> state;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!free.empty()) {
        state = std::move(free.back());
        free.pop_back();
      }
    }
    if (!state)
      return std::make_unique<State>(from);
    *state = from;
    return state;
  }
  void give(std::unique_ptr<State> state) {
    std::lock_guard<std::mutex> lock(mutex);
    free.push_back(std::move(state));
  }

private:
  std::mutex mutex;
  std::vector<std::unique_ptr<State>> free;
};

/// Bytes shard `s` of `option` exchanges with each other rank of the world
/// in the all-to-alls, as the side-by-side benchmark's yardstick counts them:
/// its ids and lengths (input) and its pooled rows (output).
/// (PlannerCollectives.cpp)
std::pair<double, double> shardPeerBytes(const TableSpec &table,
                                         const Option &option, int64_t s,
                                         const PlannerOptions &options);

/// Whether one plan is better than another: lower maximum, then lower total.
inline bool better(double maxA, double totalA, double maxB, double totalB) {
  double tolerance = 1e-12 * std::max(1.0, std::fabs(maxB));
  if (maxA < maxB - tolerance)
    return true;
  if (maxA > maxB + tolerance)
    return false;
  return totalA < totalB - 1e-12 * std::max(1.0, std::fabs(totalB));
}

/// The moves step 6 (Planner::improveCollectives) may take. During the
/// search: free shards' moves and swaps that lower the collective step. On
/// the plan chosen (Planner::finish) also moves and swaps of table-row-wise
/// tables between nodes, and steps that keep the collective step but lower
/// the number of ranks at a part's maximum (where two ranks tie, no single
/// step lowers it); none may take a rank above the busiest rank's
/// all-to-all bytes; within the score or beyond it.
enum class CollectiveMoves { Search, WithinScore, BeyondScore };

/// Plans one set of tables (planSharding makes one per call).
class Planner {
public:
  /// `roomForLargestWhole`: auto replicas leave every rank room for the
  /// largest table whole (selectReplicas).
  Planner(ArrayRef<TableSpec> tables, const PlannerOptions &options,
          bool roomForLargestWhole = false)
      : specs(tables), options(options), model(options),
        roomForLargestWhole(roomForLargestWhole) {}

  /// Checks the inputs, builds every table's options, runs the seeds and
  /// improves them, and returns the best plan or the infeasibility report.
  llvm::Expected<ShardingPlan> run();
  /// planSharding: run() with the replicas selectReplicas keeps against all
  /// the memory, and again with room left for the largest table whole when
  /// that keeps fewer; the second plan wins unless the first is preferred
  /// and its busiest rank moves no more all-to-all bytes.
  static llvm::Expected<ShardingPlan> plan(ArrayRef<TableSpec> tables,
                                           const PlannerOptions &options);
  /// The training-lean objective (PlannerOptions::leanTraffic): the
  /// inference plan, re-costed for training, with the replicas sharded that
  /// lower the training score while no rank's bytes exceed the inference
  /// plan's busiest (PlannerLean.cpp).
  static llvm::Expected<ShardingPlan> planLean(ArrayRef<TableSpec> tables,
                                               const PlannerOptions &options);

private:
  // Planner.cpp
  /// checkInputs, buildOptions and the baseline.
  llvm::Error prepare();
  /// Seeds, their improvement and steps 3b to 7: the best plan, or null
  /// (fewestFailed and failedState say why).
  std::unique_ptr<State> search();
  /// The plan of `best` after the final pass (step 7b) and step 8, with
  /// its notes, or the infeasibility report.
  llvm::Expected<ShardingPlan> finish(std::unique_ptr<State> best);
  llvm::Error checkInputs();
  /// Whether plan `a` is preferred to plan `b`: the one that keeps nearly
  /// every table on device memory (kHostFirstFraction of the other's host
  /// bytes) unless it costs more than kHostFirstSlack times as much, else
  /// the lower score, then the lower total.
  bool preferred(const State &a, const State &b) const;
  /// Why `table` fits nowhere in `state`: the option that comes closest.
  std::string shortfall(const State &state, int table) const;
  ShardingPlan toPlan(const State &state) const;
  /// Notes why each table the plan serves from host memory is there and
  /// what it costs.
  void noteSpills(const State &state);

  // PlannerCandidates.cpp
  llvm::Error buildOptions();
  void finishOption(const TableSpec &table, Option &option);
  void addOptionsOfKind(const TableSpec &table, ShardingKind kind,
                        ArrayRef<ComputeKernel> kernels,
                        ArrayRef<int64_t> pinned, bool autoChoice,
                        std::vector<Option> &out);
  /// Decides the replica budget by benefit per byte: candidates (tables
  /// with an auto data_parallel option) by what their replica saves per
  /// byte against their cheapest sharded option, largest first; one keeps
  /// its replica when that saving beats what its bytes on every rank cost
  /// the sharded tables (their cheapest options that still fit the device
  /// memory the replicas leave) and those tables still fit it with
  /// kPackingMargin; the others lose the option. Sets replicaBudget.
  void selectReplicas();

  // PlannerSeed.cpp
  std::unique_ptr<State> newState() const;
  /// Spill: the memory policy with the tables chooseSpills() picked served
  /// from host memory first (the seed of last resort when device memory
  /// cannot hold every table). ReplicasFirst: the balanced policy with the
  /// tables whose cheapest option is a budgeted replica placed first (so
  /// does Cheapest): a replica needs room on every rank, which a seed that
  /// places it after the large tables finds gone on the fullest rank.
  enum class Policy { Balanced, Cheapest, Memory, Spill, ReplicasFirst };
  /// Whether the cheapest option of `table` (by total cost) is a budgeted
  /// replica.
  bool replicaIsCheapest(int table) const;
  /// Picks the tables to serve from host memory (fused_uvm_caching) when
  /// their device-resident options together need more than the ranks'
  /// device memory: those that lose the least cost per device byte saved,
  /// until the rest fit with a margin. Returns false when none would help.
  bool chooseSpills();
  /// Runs one greedy seed; returns the tables that could not be placed.
  std::vector<int> seed(State &state, Policy policy) const;

  // PlannerMemory.cpp
  /// Places `table` with the option that needs the least device memory and
  /// fits (device-resident options first; only those when `deviceOnly`), on
  /// the ranks with the most free memory.
  bool placeByMemory(State &state, int table, bool deviceOnly) const;
  /// Places the unplaced `table` (only device-resident when `deviceOnly`)
  /// by taking one other table off, placing `table`, and placing the other
  /// again with any option that fits (device-resident first): the
  /// arrangement that serves least from host memory (below `hostLimit`),
  /// then the cheapest. False (state unchanged) when none does; `moved`
  /// (when given) gets the other table's placement before.
  bool makeRoom(State &state, int table, bool deviceOnly, int64_t hostLimit,
                Placed *moved) const;
  /// Memory before UVM, on a seed: places the tables in `failed` by making
  /// room (those still without a place stay in `failed`); when every table
  /// is placed, brings tables served from host memory onto device memory
  /// while that lowers the plan's host bytes.
  void repairMemory(State &state, std::vector<int> &failed) const;

  // PlannerSearch.cpp
  void improve(State &state) const;
  /// The local search on the additive bound (requests added whole: moves
  /// and re-shards do not stall where every rank's holder side equals its
  /// requests), then on the duplex cost the plan is judged by.
  void improveBoundThenDuplex(State &state) const;
  /// Each of the busiest rank's costliest tables re-sharded with each of
  /// its other options on a copy of the plan, improved by the local search
  /// there; the preferred copy whose busiest rank moves no more all-to-all
  /// bytes than the plan's replaces `best` (a few rounds).
  void reshardAndImprove(std::unique_ptr<State> &best) const;
  bool tryMove(State &state, int64_t maxRank) const;
  bool trySwap(State &state, int64_t maxRank) const;
  bool tryReshard(State &state, int64_t maxRank) const;
  /// Whether the case is small enough for exactSearch.
  bool isTiny() const;
  /// Tiny cases: exhaustive search (branch and bound) over every table's
  /// options and the rank of every single-shard free option; replaces `best`
  /// when it finds a better plan.
  void exactSearch(std::unique_ptr<State> &best) const;

  // PlannerLean.cpp
  /// `plan` (of the same tables and topology) as a state of this planner:
  /// each table on the option of the same kind, kernel and shard geometry,
  /// its shards on the plan's ranks. Null, with the table in `why`, when
  /// some table has no such option.
  std::unique_ptr<State> stateOf(const ShardingPlan &plan,
                                 std::string &why) const;
  /// Step 9: each auto replica, costliest all-reduce first, re-placed with
  /// the sharded option (device memory only) that lowers the score most
  /// while no rank looks up, exchanges (in all and across nodes) or holds
  /// more bytes than the busiest rank did before. Returns how many.
  int shardReplicasWithinBytes(State &state) const;

  // PlannerCollectives.cpp
  /// Lowers the plan's collective step (the sum over the cost parts of the
  /// busiest rank's part: each collective waits for its slowest rank) by
  /// moves and swaps of free shards that keep every rank in memory (at or
  /// below the fullest rank's device bytes) and, unless `moves` is
  /// BeyondScore, at or below the plan's score. Whether it changed the plan.
  bool
  improveCollectives(State &state,
                     CollectiveMoves moves = CollectiveMoves::Search) const;
  /// Lowers the bytes the busiest rank sends or receives in the all-to-alls
  /// (as the side-by-side benchmark counts them) by moves and swaps of free
  /// shards that keep every rank at or below the plan's score, the
  /// collective step at or below its value, and device memory at or below
  /// the fullest rank's. Whether it changed the plan.
  bool lowerBusiestTraffic(State &state) const;
  /// Steps 6 and 7 in turn until neither changes the plan (Planner.cpp);
  /// `moves` as for improveCollectives.
  void settleCollectives(State &state,
                         CollectiveMoves moves = CollectiveMoves::Search) const;
  /// The plan's collective step (improveCollectives).
  double collectiveStep(const State &state) const;
  /// The bytes the busiest rank sends or receives in the all-to-alls (as
  /// lowerBusiestTraffic counts them).
  double busiestTrafficBytes(const State &state) const;
  /// The rank that sends or receives the most all-to-all bytes.
  int64_t busiestTrafficRank(const State &state) const;
  /// Memory that buys nothing released: lowers the fullest rank's device
  /// memory by moves and swaps of free shards that keep every rank at or
  /// below the plan's score, the collective step and the busiest rank's
  /// all-to-all bytes at or below their values. Whether it changed the plan.
  bool lowerPeakMemory(State &state) const;

  ArrayRef<TableSpec> specs;
  const PlannerOptions &options;
  CostModel model;
  std::vector<TableOptions> tableOptions;
  std::vector<std::string> notes;
  ShardLoad baseline;
  /// Replica bytes per rank of the tables that are data_parallel whatever
  /// the search does (imported, pinned or forced): they count against the
  /// replica budget before the auto planner adds any.
  double fixedReplicaBytes = 0;
  /// Device bytes all replicas together may take on a rank (those the
  /// user fixed and those selectReplicas kept), set by selectReplicas.
  double replicaBudget = 0;
  /// Tables the spill seed serves from host memory first (chooseSpills).
  std::vector<char> spilled;
  bool roomForLargestWhole = false;
  /// Every auto data_parallel option kept, with no replica budget
  /// (selectReplicas skipped): planLean's training planner takes the
  /// inference plan's replicas as they are.
  bool keepEveryReplica = false;
  /// When no seed places every table: the tables the seed that placed the
  /// most left out, and that seed.
  std::vector<int> fewestFailed;
  std::unique_ptr<State> failedState;
};

} // namespace ember::sharding::detail

#endif // EMBER_SHARDING_PLANNERINTERNAL_H
