//===- PlannerLean.cpp - training within the inference plan's bytes -------===//
//
// The training-lean objective (PlannerOptions::leanTraffic, step 9). The
// training objective weighs a replica's gradient all-reduce against what
// sharding its table costs, and at scale shards most tables: its plans
// step fastest but move more bytes per rank (ids and rows through the
// all-to-alls, lookups on the ranks that hold the large tables) than an
// inference plan, whose replicas cost no all-reduce and move nothing.
// Where bytes are what a cluster is short of (a shared network, a slower
// interconnect than the topology says), training-lean starts from the
// inference plan, re-costs it for training, and shards the replicas whose
// all-reduce costs the training step most, one table at a time, costliest
// first: each takes the sharded option (device memory only) that lowers the
// training score most while no rank's bytes exceed the inference plan's
// busiest rank's by more than the slack (PlannerOptions::leanSlack): bytes
// looked up, all-to-all bytes sent or received, the part of those that
// crosses nodes, and device memory. Those four are the
// per-rank figures of the side-by-side benchmark's yardstick
// (docs/sharding.md), counted here from the plan's shards as it counts them.
//
//===----------------------------------------------------------------------===//

#include "sharding/PlannerInternal.h"
#include "llvm/Support/FormatVariadic.h"
#include <limits>
#include <numeric>

using namespace ember::sharding;
using namespace ember::sharding::detail;

namespace {

/// The busiest rank's figure of each of the four per-rank bytes
/// (lookup time stands for the bytes looked up: the cost model's lookup
/// seconds are bytes over the lookup bandwidth).
struct BusiestBytes {
  double lookup = 0, exchanged = 0, acrossNodes = 0;
  int64_t device = 0;

  bool within(const BusiestBytes &bound) const {
    auto le = [](double value, double limit) {
      return value <= limit * (1 + 1e-9) + 1e-12;
    };
    return le(lookup, bound.lookup) && le(exchanged, bound.exchanged) &&
           le(acrossNodes, bound.acrossNodes) && device <= bound.device;
  }
};

/// Per-rank bytes of a state, counted from its shards: each table-, column-
/// or row-wise shard receives every other rank's ids and sends it its rows;
/// a table-row-wise shard reduce-scatters inside its node, then sends the
/// reduced rows of the ranks q = position mod n (the yardstick's rules). A
/// rank exchanges with the holders of its node but itself over the node's
/// links, with the others across nodes. Kept current table by table
/// (apply), O(world) per shard.
class RankBytes {
public:
  RankBytes(const State &state, ArrayRef<TableSpec> specs,
            const PlannerOptions &options)
      : specs(specs), options(options), topo(*state.topology),
        world(topo.worldSize) {
    for (auto *side : {&lookup, &sentIntra, &sentInter, &recvIntra, &recvInter})
      side->assign(world, 0);
    for (int t = 0, e = specs.size(); t < e; ++t)
      if (state.choice[t] >= 0)
        apply(t, state.optionOf(t), state.ranksOf[t], 1.0);
  }

  /// Adds (sign 1) or takes off (-1) table `t` placed with `option` on
  /// `ranks`.
  void apply(int t, const Option &option, ArrayRef<int64_t> ranks,
             double sign) {
    int64_t n = option.shards.size();
    for (int64_t s = 0; s < n; ++s)
      lookup[ranks[s]] += sign * option.load(s).cost.lookup;
    if (option.kind == ShardingKind::DataParallel)
      return;
    bool reduces = option.kind == ShardingKind::TableRowWise && n > 1;
    for (int64_t s = 0; s < n; ++s) {
      auto [ids, rows] = shardPeerBytes(specs[t], option, s, options);
      int64_t holder = ranks[s];
      int64_t node = topo.nodeOf(holder);
      // Every other rank's ids in; the rows out to every other rank unless
      // they are reduced in the node.
      for (int64_t q = 0; q < world; ++q) {
        if (q == holder)
          continue;
        bool inNode = topo.nodeOf(q) == node;
        (inNode ? sentIntra : sentInter)[q] += sign * ids;
        (inNode ? recvIntra : recvInter)[holder] += sign * ids;
        if (!reduces) {
          (inNode ? sentIntra : sentInter)[holder] += sign * rows;
          (inNode ? recvIntra : recvInter)[q] += sign * rows;
        }
      }
      if (!reduces)
        continue;
      double part = rows * static_cast<double>(world) / static_cast<double>(n);
      for (int64_t peer : ranks)
        if (peer != holder)
          move(holder, peer, sign * part);
      for (int64_t q = s; q < world; q += n)
        if (q != holder)
          move(holder, q, sign * rows);
    }
  }

  /// How close rank `q` is to `bound`: its largest figure as a share of
  /// the bound's.
  double share(const State &state, int64_t q, const BusiestBytes &bound) const {
    auto part = [](double value, double limit) {
      return limit > 0 ? value / limit : 0.0;
    };
    return std::max(
        {part(lookup[q], bound.lookup),
         part(
             std::max(sentIntra[q] + sentInter[q], recvIntra[q] + recvInter[q]),
             bound.exchanged),
         part(std::max(sentInter[q], recvInter[q]), bound.acrossNodes),
         part(static_cast<double>(state.device[q]),
              static_cast<double>(bound.device))});
  }

  /// Whether some rank could take shard `s` of `option` (table `t`) under
  /// `bound`: the least any rank looks up, sends or receives now, plus what
  /// the shard's holder at least adds (its lookups; every other rank's ids
  /// in and its rows out, or its partial sums to and from its node peers).
  /// A necessary condition, O(1) after refreshLeast.
  bool mayTake(int t, const Option &option, int64_t s,
               const BusiestBytes &bound) const {
    auto [ids, rows] = shardPeerBytes(specs[t], option, s, options);
    double w = static_cast<double>(world);
    double n = static_cast<double>(option.shards.size());
    bool reduces = option.kind == ShardingKind::TableRowWise && n > 1;
    double peersPart = reduces ? (n - 1) * rows * w / n : 0;
    double sent = reduces ? peersPart : (w - 1) * rows;
    double recv = peersPart + (w - 1) * ids;
    auto le = [](double value, double limit) {
      return value <= limit * (1 + 1e-9) + 1e-12;
    };
    return le(leastLookup + option.load(s).cost.lookup, bound.lookup) &&
           le(leastSent + sent, bound.exchanged) &&
           le(leastRecv + recv, bound.exchanged);
  }
  void refreshLeast() {
    leastLookup = *std::min_element(lookup.begin(), lookup.end());
    leastSent = leastRecv = std::numeric_limits<double>::max();
    for (int64_t q = 0; q < world; ++q) {
      leastSent = std::min(leastSent, sentIntra[q] + sentInter[q]);
      leastRecv = std::min(leastRecv, recvIntra[q] + recvInter[q]);
    }
  }

  BusiestBytes busiest(const State &state) const {
    BusiestBytes result;
    for (int64_t q = 0; q < world; ++q) {
      result.lookup = std::max(result.lookup, lookup[q]);
      result.exchanged =
          std::max({result.exchanged, sentIntra[q] + sentInter[q],
                    recvIntra[q] + recvInter[q]});
      result.acrossNodes =
          std::max({result.acrossNodes, sentInter[q], recvInter[q]});
      result.device = std::max(result.device, state.device[q]);
    }
    return result;
  }

private:
  void move(int64_t from, int64_t to, double bytes) {
    bool inNode = topo.nodeOf(from) == topo.nodeOf(to);
    (inNode ? sentIntra : sentInter)[from] += bytes;
    (inNode ? recvIntra : recvInter)[to] += bytes;
  }

  ArrayRef<TableSpec> specs;
  const PlannerOptions &options;
  const Topology &topo;
  int64_t world;
  std::vector<double> lookup, sentIntra, sentInter, recvIntra, recvInter;
  /// The least of each over the ranks (refreshLeast).
  double leastLookup = 0, leastSent = 0, leastRecv = 0;
};

/// Whether two shard lists have the same blocks (ranks aside).
bool sameBlocks(ArrayRef<Shard> a, ArrayRef<Shard> b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].rowOffset != b[i].rowOffset || a[i].colOffset != b[i].colOffset ||
        a[i].rows != b[i].rows || a[i].cols != b[i].cols)
      return false;
  return true;
}

/// The ranks for `option`'s shards with the most room under the bound
/// (lowest `share`; `byShare`: the ranks in that order): free shards on the
/// distinct ranks of lowest share that fit them, a node-placed table on the
/// node whose highest share is lowest, fixed shards where they are. False when
/// they do not fit.
bool chooseRoomiestRanks(const State &state, const Option &option,
                         ArrayRef<double> share, ArrayRef<int64_t> byShare,
                         std::vector<int64_t> &ranks) {
  int64_t numShards = option.shards.size();
  ranks.assign(numShards, -1);
  auto fits = [&](int64_t rank, int64_t s) {
    return state.fits(rank, option.unitDevice(s), option.unitHost(s));
  };
  switch (option.placement) {
  case Placement::Fixed:
    for (int64_t s = 0; s < numShards; ++s) {
      ranks[s] = option.shards[s].rank;
      if (!fits(ranks[s], s))
        return false;
    }
    return option.shardsOnDistinctRanks;
  case Placement::Free: {
    size_t next = 0;
    for (int64_t s = 0; s < numShards; ++s) {
      while (next < byShare.size() && !fits(byShare[next], s))
        ++next;
      if (next == byShare.size())
        return false;
      ranks[s] = byShare[next++];
    }
    return true;
  }
  case Placement::Node:
    return state.placeOnBestNode(
        option, [&](int64_t rank, int64_t) { return share[rank]; }, ranks);
  }
  return false;
}

} // namespace

std::unique_ptr<State> Planner::stateOf(const ShardingPlan &plan,
                                        std::string &why) const {
  std::unique_ptr<State> state = newState();
  const Topology &topo = options.topology;
  std::vector<int64_t> ranks;
  for (int t = 0, e = specs.size(); t < e; ++t) {
    const TableSharding &sharding = plan.tables[t];
    const std::vector<Option> &opts = tableOptions[t].options;
    int found = -1;
    for (int i = 0, n = opts.size(); i < n && found < 0; ++i) {
      const Option &option = opts[i];
      if (option.kind != sharding.kind || option.kernel != sharding.kernel)
        continue;
      ranks.clear();
      if (option.kind == ShardingKind::DataParallel) {
        for (const Shard &shard : option.shards)
          ranks.push_back(shard.rank);
        std::vector<int64_t> sorted = ranks;
        llvm::sort(sorted);
        if (sorted == sharding.replicaRanks)
          found = i;
        continue;
      }
      if (!sameBlocks(option.shards, sharding.shards))
        continue;
      bool placed = true;
      for (size_t s = 0; s < option.shards.size() && placed; ++s) {
        int64_t rank = sharding.shards[s].rank;
        switch (option.placement) {
        case Placement::Free:
          break;
        case Placement::Fixed:
          placed = rank == option.shards[s].rank;
          break;
        case Placement::Node:
          placed = rank % topo.ranksPerNode == option.shards[s].rank &&
                   topo.nodeOf(rank) == topo.nodeOf(sharding.shards[0].rank);
          break;
        }
        ranks.push_back(rank);
      }
      if (placed)
        found = i;
    }
    if (found < 0) {
      why = specs[t].name;
      return nullptr;
    }
    state->placeAt(t, found, ranks);
  }
  return state;
}

int Planner::shardReplicasWithinBytes(State &state) const {
  // Sharding a table adds to every rank's all-to-alls (each sends its ids
  // and receives its rows), so the busiest rank's bytes cannot stay exactly
  // where they are: the bound is theirs with PlannerOptions::leanSlack.
  RankBytes bytes(state, specs, options);
  BusiestBytes bound = bytes.busiest(state);
  bound.lookup *= 1 + options.leanSlack;
  bound.exchanged *= 1 + options.leanSlack;
  bound.acrossNodes *= 1 + options.leanSlack;
  bound.device = static_cast<int64_t>(static_cast<double>(bound.device) *
                                      (1 + options.leanSlack));
  // The auto replicas, costliest all-reduce (the backward part of a
  // replica's cost on each rank) first.
  std::vector<int> order;
  for (int t = 0, e = specs.size(); t < e; ++t)
    if (!tableOptions[t].userFixed && state.optionOf(t).budgeted)
      order.push_back(t);
  auto allReduce = [&](int t) {
    return state.optionOf(t).load(0).cost.backward;
  };
  stableSort(order, [&](int a, int b) { return allReduce(a) > allReduce(b); });

  struct Candidate {
    int index;
    std::vector<int64_t> ranks;
    double score, total;
  };
  std::vector<Candidate> candidates;
  std::vector<int64_t> ranks;
  int64_t world = options.topology.worldSize;
  std::vector<double> share(world, 0);
  std::vector<int64_t> byShare(world);
  int sharded = 0;
  for (int t : order) {
    double score = state.maxCost(), total = state.totalCost();
    int replica = state.choice[t];
    std::vector<int64_t> replicaRanks = state.ranksOf[t];
    bytes.apply(t, state.optionOf(t), replicaRanks, -1.0);
    state.removeTable(t);
    // Each sharded option on the least loaded ranks (by cost) and on those
    // with the most room under the bound.
    for (int64_t q = 0; q < world; ++q)
      share[q] = bytes.share(state, q, bound);
    std::iota(byShare.begin(), byShare.end(), int64_t(0));
    llvm::stable_sort(
        byShare, [&](int64_t a, int64_t b) { return share[a] < share[b]; });
    bytes.refreshLeast();
    candidates.clear();
    const std::vector<Option> &opts = tableOptions[t].options;
    for (int i = 0, n = opts.size(); i < n; ++i) {
      const Option &option = opts[i];
      if (option.kind == ShardingKind::DataParallel ||
          option.kernel != ComputeKernel::Fused)
        continue;
      // Options that no rank could take under the bound are not placed.
      bool mayFit = true;
      for (int64_t s = 0, e = option.shards.size(); s < e && mayFit; ++s)
        mayFit = bytes.mayTake(t, option, s, bound);
      if (!mayFit)
        continue;
      for (bool roomiest : {false, true}) {
        if (!(roomiest
                  ? chooseRoomiestRanks(state, option, share, byShare, ranks)
                  : state.chooseRanks(t, i, /*byMemory=*/false, ranks)))
          continue;
        if (roomiest && !candidates.empty() && candidates.back().index == i &&
            candidates.back().ranks == ranks)
          continue;
        state.placeAt(t, i, ranks);
        if (better(state.maxCost(), state.totalCost(), score, total))
          candidates.push_back({i, ranks, state.maxCost(), state.totalCost()});
        state.removeTable(t);
      }
    }
    llvm::sort(candidates, [](const Candidate &a, const Candidate &b) {
      return better(a.score, a.total, b.score, b.total);
    });
    bool done = false;
    for (const Candidate &candidate : candidates) {
      const Option &option = opts[candidate.index];
      bytes.apply(t, option, candidate.ranks, 1.0);
      state.placeAt(t, candidate.index, candidate.ranks);
      if (bytes.busiest(state).within(bound)) {
        done = true;
        break;
      }
      state.removeTable(t);
      bytes.apply(t, option, candidate.ranks, -1.0);
    }
    if (done) {
      ++sharded;
    } else {
      state.placeAt(t, replica, replicaRanks);
      bytes.apply(t, state.optionOf(t), replicaRanks, 1.0);
    }
  }
  return sharded;
}

llvm::Expected<ShardingPlan> Planner::planLean(ArrayRef<TableSpec> tables,
                                               const PlannerOptions &options) {
  PlannerOptions inference = options;
  inference.includeBackward = false;
  inference.leanTraffic = false;
  llvm::Expected<ShardingPlan> base = plan(tables, inference);
  if (!base)
    return base.takeError();

  Planner training(tables, options);
  training.keepEveryReplica = true;
  if (llvm::Error error = training.prepare())
    return error;
  std::string why;
  std::unique_ptr<State> state = training.stateOf(*base, why);
  if (!state)
    return makeError("training-lean: the inference plan's sharding of table '" +
                     why + "' is not one the training planner enumerates");
  double before = state->maxCost();
  int replicas = 0;
  for (int t = 0, e = tables.size(); t < e; ++t)
    replicas += state->optionOf(t).budgeted ? 1 : 0;
  int sharded = options.search == SearchMode::Local
                    ? training.shardReplicasWithinBytes(*state)
                    : 0;
  training.notes.push_back(llvm::formatv(
      "training-lean: {0} of the inference plan's {1} replicas sharded, "
      "costliest gradient all-reduce first; training score {2:F1} -> "
      "{3:F1} us; no rank looks up, exchanges (in all and across nodes) or "
      "holds more than {4:F1}% above the inference plan's busiest",
      sharded, replicas, before * 1e6, state->maxCost() * 1e6,
      options.leanSlack * 100));
  training.noteSpills(*state);
  return training.toPlan(*state);
}
