//===- Planner.cpp - the sharding planner: inputs, run, result ------------===//
//
// planSharding checks the inputs, then
// 1. Options (PlannerCandidates.cpp): every table gets the shardings it may
//    take (kind x compute kernel x shard geometry); forced kinds, pinned
//    ranks and imported shardings narrow them to what the user asked for.
// 2. Seeds (PlannerSeed.cpp): greedy passes that place the tables one by one
//    (largest first) under three policies: "balanced" (the option and ranks
//    that raise the running maximum cost least), "cheapest" (the option with
//    the least total cost, on the least loaded ranks) and "memory" (the
//    option with the smallest shards, on the ranks with the most free
//    memory); "cheapest" and a second "balanced" place the tables whose
//    cheapest option is a replica first.
// 3. Local improvement of each seed (PlannerSearch.cpp): while the most
//    loaded rank can shed cost, move one of its shards to another rank, swap
//    one with a smaller shard elsewhere, or re-shard one of its tables; every
//    accepted step leaves every changed rank below the old maximum, so the
//    sorted cost vector decreases and the search ends. Seeds and this search
//    first weigh every rank's requests additively (a bound), then the
//    search runs again on the duplex cost (each all-to-all the larger of
//    what a rank sends and receives). 3b: the best plan's busiest tables
//    re-sharded on copies, each improved there. Tiny cases are then
//    searched exhaustively; 6 and 7 (PlannerCollectives.cpp) alternate, and
//    8 gives back device memory that lowers none of the figures.
// The best seed (lowest maximum, then lowest total cost) is the plan; when
// no seed places every table, the error names each table left over and the
// memory it lacks. Also here: computeRankLoads.
//
//===----------------------------------------------------------------------===//

#include "sharding/Planner.h"
#include "sharding/PlannerInternal.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include <limits>
#include <optional>
#include <thread>

using namespace ember::sharding;
using namespace ember::sharding::detail;

namespace {

/// Limits that keep every byte count of the models inside int64.
constexpr int64_t kMaxTableBytes = int64_t(1) << 60;
constexpr double kMaxPoolingFactor = 1e9;
constexpr int64_t kMaxWorldSize = 1 << 20;
constexpr int64_t kMaxBatchSize = 1 << 24;
constexpr int64_t kMaxBufferBytes = int64_t(1) << 44;
constexpr size_t kMaxTables = size_t(1) << 16;

std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double value = bytes;
  while (std::fabs(value) >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  return llvm::formatv("{0:F2} {1}", value, units[unit]).str();
}

} // namespace

llvm::Error Planner::checkInputs() {
  std::vector<std::string> errors;
  const Topology &topo = options.topology;
  if (topo.worldSize < 1)
    errors.push_back(
        llvm::formatv("world size must be positive, got {0}", topo.worldSize));
  if (topo.ranksPerNode < 1)
    errors.push_back(llvm::formatv("ranks per node must be positive, got {0}",
                                   topo.ranksPerNode));
  if (topo.deviceMemoryBytes <= 0 || topo.hostMemoryBytes < 0)
    errors.push_back("device memory must be positive and host memory "
                     "non-negative");
  if (!(topo.reservedDeviceFraction >= 0 && topo.reservedDeviceFraction < 1))
    errors.push_back("reserved device fraction must be in [0, 1)");
  if (topo.embeddingMemoryCapBytes < 0)
    errors.push_back(llvm::formatv("the embedding memory cap must be "
                                   "non-negative (0: none), got {0} bytes",
                                   topo.embeddingMemoryCapBytes));
  if (!(topo.deviceBandwidth > 0 && topo.intraNodeBandwidth > 0 &&
        topo.interNodeBandwidth > 0 && topo.hostToDeviceBandwidth > 0 &&
        topo.lookupEfficiency > 0 && topo.lookupEfficiency <= 1))
    errors.push_back("bandwidths must be positive and the lookup efficiency "
                     "in (0, 1]");
  if (topo.worldSize > kMaxWorldSize)
    errors.push_back(llvm::formatv("world size {0} is above the {1} ranks "
                                   "the planner handles",
                                   topo.worldSize, kMaxWorldSize));
  if (options.batchSizePerRank > kMaxBatchSize)
    errors.push_back(llvm::formatv("batch size per rank {0} is above {1}",
                                   options.batchSizePerRank, kMaxBatchSize));
  if (options.pipelineDepth < 1 || options.pipelineDepth > 64)
    errors.push_back("pipeline depth must be in [1, 64]");
  if (options.batchSizePerRank < 1)
    errors.push_back(llvm::formatv("batch size per rank must be positive, got "
                                   "{0}",
                                   options.batchSizePerRank));
  if (!(options.uvmCacheLoadFactor > 0 && options.uvmCacheLoadFactor <= 1))
    errors.push_back("the UVM cache load factor must be in (0, 1]");
  if (specs.size() > kMaxTables)
    errors.push_back(llvm::formatv("{0} tables; the planner handles at most "
                                   "{1}",
                                   specs.size(), kMaxTables));
  llvm::StringSet<> names;
  for (const TableSpec &table : specs) {
    if (table.name.empty())
      errors.push_back("a table has no name");
    else if (!names.insert(table.name).second)
      errors.push_back("table '" + table.name + "' is listed twice");
    if (table.rows < 1 || table.dim < 1)
      errors.push_back(llvm::formatv("table '{0}' has {1} rows of dim {2}; "
                                     "both must be positive",
                                     table.name, table.rows, table.dim));
    else if (table.dim > kMaxTableBytes / 8 ||
             table.rows >
                 kMaxTableBytes / storedRowBytes(table.format, table.dim))
      errors.push_back(llvm::formatv("table '{0}' ({1}x{2}) is larger than "
                                     "the planner handles (2^60 bytes)",
                                     table.name, table.rows, table.dim));
    if (table.features.empty())
      errors.push_back("table '" + table.name + "' has no feature");
    // Buffers of the whole global batch must stay far inside int64.
    double globalBatch =
        static_cast<double>(options.batchSizePerRank) *
        static_cast<double>(std::max<int64_t>(topo.worldSize, 1));
    double ids = 0;
    for (const FeatureSpec &feature : table.features)
      ids += std::min(feature.poolingFactor, kMaxPoolingFactor);
    double bufferBytes =
        globalBatch * (ids * 12 + static_cast<double>(table.features.size()) *
                                      (4 + 4 * static_cast<double>(table.dim)));
    if (bufferBytes > static_cast<double>(kMaxBufferBytes))
      errors.push_back(llvm::formatv("table '{0}': its buffers for a global "
                                     "batch of {1} would take more than 2^44 "
                                     "bytes",
                                     table.name, globalBatch));
    for (const FeatureSpec &feature : table.features)
      if (!(feature.poolingFactor >= 0 &&
            feature.poolingFactor <= kMaxPoolingFactor))
        errors.push_back(llvm::formatv("feature '{0}' of table '{1}' has "
                                       "pooling factor {2}; it must be a "
                                       "number in [0, 1e9]",
                                       feature.name, table.name,
                                       feature.poolingFactor));
  }
  for (const auto &entry : options.tables)
    if (!names.contains(entry.first))
      errors.push_back("a constraint names table '" + entry.first +
                       "', which the model does not have");
  for (const auto &entry : options.imported)
    if (!names.contains(entry.first))
      errors.push_back("the imported plan names table '" + entry.first +
                       "', which the model does not have");
  if (errors.empty())
    return llvm::Error::success();
  return makeError(llvm::join(errors, "\n"));
}

std::string Planner::shortfall(const State &state, int table) const {
  // For every option: how much more memory its tightest shard would need on
  // the best rank; report the option that comes closest.
  const Topology &topo = options.topology;
  int64_t maxFreeDevice = 0, maxFreeHost = 0;
  for (int64_t rank = 0; rank < topo.worldSize; ++rank) {
    maxFreeDevice =
        std::max(maxFreeDevice, state.deviceCap - state.device[rank]);
    maxFreeHost = std::max(maxFreeHost, state.hostCap - state.host[rank]);
  }
  double bestShort = std::numeric_limits<double>::max();
  std::string best;
  for (const Option &option : tableOptions[table].options) {
    double shortDevice = 0, shortHost = 0;
    for (size_t i = 0; i < option.shards.size(); ++i) {
      const ShardLoad &load = option.load(i);
      int64_t freeDevice = maxFreeDevice, freeHost = maxFreeHost;
      if (option.placement == Placement::Fixed) {
        freeDevice = state.deviceCap - state.device[option.shards[i].rank];
        freeHost = state.hostCap - state.host[option.shards[i].rank];
      }
      shortDevice = std::max(
          shortDevice, static_cast<double>(load.device.total() - freeDevice));
      shortHost = std::max(shortHost,
                           static_cast<double>(load.host.total() - freeHost));
    }
    double total = shortDevice + shortHost;
    if (total < bestShort) {
      bestShort = total;
      std::string where =
          shortDevice >= shortHost
              ? "device memory short by " + formatBytes(shortDevice)
              : "host memory short by " + formatBytes(shortHost);
      best = llvm::formatv("{0} ({1} x {2}, {3}): {4} per shard",
                           specs[table].name, shardingKindName(option.kind),
                           option.shards.size(),
                           computeKernelName(option.kernel), where)
                 .str();
      if (option.budgeted && total <= 0)
        best = specs[table].name +
               ": only fits replicated, beyond the replica budget";
    }
  }
  return best;
}

std::vector<RankLoad>
ember::sharding::computeRankLoads(ArrayRef<TableSpec> tables,
                                  ArrayRef<TableSharding> shardings,
                                  const PlannerOptions &options) {
  CostModel model(options);
  ShardLoad base = model.baseline(tables);
  std::vector<ShardLoad> loads(options.topology.worldSize, base);
  // The requester's side of every shard's all-to-alls, the same on every
  // rank.
  CostParts requested;
  for (size_t t = 0; t < tables.size() && t < shardings.size(); ++t) {
    const TableSharding &sharding = shardings[t];
    if (sharding.kind == ShardingKind::DataParallel) {
      std::vector<int64_t> ranks = sharding.replicaRanks;
      if (ranks.empty())
        for (int64_t rank = 0; rank < options.topology.worldSize; ++rank)
          ranks.push_back(rank);
      ShardLoad replica = model.replicaLoad(tables[t], ranks.size());
      for (int64_t rank : ranks)
        loads[rank] += replica;
      continue;
    }
    // A shard's load depends on its size only: computed again only when
    // the size changes.
    ShardLoad load;
    const Shard *previous = nullptr;
    for (const Shard &shard : sharding.shards) {
      if (!previous || previous->rows != shard.rows ||
          previous->cols != shard.cols)
        load = model.shardLoad(tables[t], sharding.kind, sharding.kernel, shard,
                               sharding.shards.size());
      previous = &shard;
      loads[shard.rank] += load;
      requested += load.everyRank;
    }
  }
  std::vector<RankLoad> result;
  for (const ShardLoad &load : loads)
    result.push_back(
        RankLoad{rankCollectiveParts(load.cost, load.exchange, requested),
                 load.device, load.host});
  return result;
}

ShardingPlan Planner::toPlan(const State &state) const {
  ShardingPlan plan;
  plan.topology = options.topology;
  plan.batchSizePerRank = options.batchSizePerRank;
  plan.optimizer = options.optimizer;
  plan.pipelineDepth = options.pipelineDepth;
  plan.includeBackward = options.includeBackward;
  plan.leanTraffic = options.leanTraffic;
  plan.search = options.search;
  plan.notes = notes;
  for (size_t t = 0; t < specs.size(); ++t) {
    const Option &option = state.optionOf(t);
    TableSharding sharding;
    sharding.table = specs[t].name;
    sharding.kind = option.kind;
    sharding.kernel = option.kernel;
    if (option.kind == ShardingKind::DataParallel) {
      sharding.replicaRanks = state.ranksOf[t];
      llvm::sort(sharding.replicaRanks);
    } else {
      sharding.shards = option.shards;
      for (size_t i = 0; i < sharding.shards.size(); ++i)
        sharding.shards[i].rank = state.ranksOf[t][i];
    }
    plan.tables.push_back(std::move(sharding));
  }
  plan.ranks = computeRankLoads(specs, plan.tables, options);
  return plan;
}

bool Planner::preferred(const State &a, const State &b) const {
  int64_t hostA = a.hostBytes(), hostB = b.hostBytes();
  if (hostA == hostB)
    return better(a.maxCost(), a.totalCost(), b.maxCost(), b.totalCost());
  // Host memory is the last resort: the plan that keeps (nearly) every
  // table in device memory, serving at most kHostFirstFraction of the
  // other's host bytes, wins unless it costs more than kHostFirstSlack times
  // the other's score. Between plans that both spill a good part, the
  // choice of what to spill is a matter of cost: the lower score wins.
  const State &less = hostA < hostB ? a : b;
  const State &more = hostA < hostB ? b : a;
  bool lessWins;
  if (static_cast<double>(less.hostBytes()) <=
      kHostFirstFraction * static_cast<double>(more.hostBytes()))
    lessWins = less.maxCost() <= kHostFirstSlack * more.maxCost();
  else
    lessWins = better(less.maxCost(), less.totalCost(), more.maxCost(),
                      more.totalCost());
  return lessWins == (hostA < hostB);
}

llvm::Error Planner::prepare() {
  if (llvm::Error error = checkInputs())
    return error;
  if (llvm::Error error = buildOptions())
    return error;
  baseline = model.baseline(specs);
  return llvm::Error::success();
}

llvm::Expected<ShardingPlan> Planner::run() {
  if (llvm::Error error = prepare())
    return error;
  return finish(search());
}

llvm::Expected<ShardingPlan> Planner::plan(ArrayRef<TableSpec> tables,
                                           const PlannerOptions &options) {
  if (options.leanTraffic && options.includeBackward)
    return planLean(tables, options);
  // The replicas by benefit per byte against all the memory they leave,
  // and, when that is less, only in what leaves a rank room for the
  // largest table whole: the first plan when the score prefers it and its
  // busiest rank moves no more all-to-all bytes (step 3b's rule:
  // communication is not traded for compute).
  // The two planners share nothing they change: each prepares and
  // searches on its own thread.
  Planner wide(tables, options, /*roomForLargestWhole=*/false);
  Planner whole(tables, options, /*roomForLargestWhole=*/true);
  std::optional<llvm::Error> wholePrepared;
  std::thread preparing([&] { wholePrepared.emplace(whole.prepare()); });
  llvm::Error widePrepared = wide.prepare();
  preparing.join();
  if (widePrepared) {
    llvm::consumeError(std::move(*wholePrepared));
    return widePrepared;
  }
  if (*wholePrepared)
    return std::move(*wholePrepared);
  if (whole.replicaBudget >= wide.replicaBudget)
    return wide.finish(wide.search());
  std::unique_ptr<State> wideBest, wholeBest;
  std::thread second([&] { wholeBest = whole.search(); });
  wideBest = wide.search();
  second.join();
  if (!wholeBest)
    return wide.finish(std::move(wideBest));
  if (wideBest && wide.preferred(*wideBest, *wholeBest) &&
      wide.busiestTrafficBytes(*wideBest) <=
          whole.busiestTrafficBytes(*wholeBest) * (1 + 1e-9))
    return wide.finish(std::move(wideBest));
  return whole.finish(std::move(wholeBest));
}

std::unique_ptr<State> Planner::search() {
  fewestFailed.clear();
  failedState.reset();

  std::vector<Policy> policies = {Policy::Balanced};
  if (options.search == SearchMode::Local)
    policies = {Policy::Balanced, Policy::Cheapest, Policy::Memory};
  // The balanced seed again with the replicas first, where some table's
  // cheapest option is a replica (else it is the balanced seed).
  if (options.search == SearchMode::Local)
    for (int t = 0, e = specs.size(); t < e; ++t)
      if (!tableOptions[t].userFixed && replicaIsCheapest(t)) {
        policies.push_back(Policy::ReplicasFirst);
        break;
      }

  std::unique_ptr<State> best;
  for (Policy policy : policies) {
    std::unique_ptr<State> state = newState();
    state->setDuplex(false);
    std::vector<int> failed = seed(*state, policy);
    // Memory before UVM: room for what the seed left out or served from
    // host memory.
    if (!failed.empty() || state->hostBytes() > 0)
      repairMemory(*state, failed);
    if (!failed.empty()) {
      state->setDuplex(true);
      if (!failedState || failed.size() < fewestFailed.size()) {
        fewestFailed = failed;
        failedState = std::move(state);
      }
      continue;
    }
    if (options.search == SearchMode::Local)
      improveBoundThenDuplex(*state);
    state->setDuplex(true);
    if (!best || preferred(*state, *best))
      best = std::move(state);
  }
  // Device memory too small for every table on it (or the seeds serve some
  // from host memory): spill the tables that lose least per byte to host
  // memory first, then place by memory.
  if ((!best || best->hostBytes() > 0) && chooseSpills()) {
    std::unique_ptr<State> state = newState();
    state->setDuplex(false);
    std::vector<int> failed = seed(*state, Policy::Spill);
    repairMemory(*state, failed);
    state->setDuplex(true);
    if (failed.empty()) {
      if (options.search == SearchMode::Local)
        improveBoundThenDuplex(*state);
      state->setDuplex(true);
      if (!best || preferred(*state, *best))
        best = std::move(state);
    } else if (failed.size() < fewestFailed.size()) {
      fewestFailed = failed;
      failedState = std::move(state);
    }
  }
  if (best && options.search == SearchMode::Local)
    reshardAndImprove(best);
  if (best && options.search == SearchMode::Local && isTiny())
    exactSearch(best);
  if (best && options.search == SearchMode::Local)
    settleCollectives(*best);
  return best;
}

llvm::Expected<ShardingPlan> Planner::finish(std::unique_ptr<State> best) {
  if (!best) {
    std::vector<std::string> lines;
    for (int t : fewestFailed)
      lines.push_back("  " + shortfall(*failedState, t));
    return makeError(llvm::formatv("no sharding fits the memory of the {0} "
                                   "ranks ({1} of device memory for "
                                   "embeddings and {2} of host memory each): "
                                   "{3} table(s) do not fit:\n{4}",
                                   options.topology.worldSize,
                                   formatBytes(static_cast<double>(
                                       options.topology.usableDeviceMemory())),
                                   formatBytes(static_cast<double>(
                                       options.topology.hostMemoryBytes)),
                                   lines.size(), llvm::join(lines, "\n"))
                         .str());
  }
  if (options.search == SearchMode::Local) {
    // Step 7b: steps 6 and 7 again with the final pass's moves, on a copy
    // of the plan chosen, first within the score, then beyond it (on a copy
    // of the plan as the first left it). A copy replaces the plan when it
    // lowers the sum of the two bounds of a step's time, the score (every
    // rank at its own pace) and the collective step (each collective waits
    // for its slowest rank), and its busiest rank moves no more all-to-all
    // bytes.
    auto bounds = [&](const State &state) {
      return state.maxCost() + collectiveStep(state);
    };
    double bytes = busiestTrafficBytes(*best) * (1 + 1e-9);
    for (CollectiveMoves moves :
         {CollectiveMoves::WithinScore, CollectiveMoves::BeyondScore}) {
      auto copy = std::make_unique<State>(*best);
      settleCollectives(*copy, moves);
      if (bounds(*copy) < bounds(*best) * (1 - 1e-9) &&
          busiestTrafficBytes(*copy) <= bytes)
        best = std::move(copy);
    }
    // Step 8: device memory that buys nothing (neither score, nor collective
    // step, nor the busiest rank's bytes) is given back.
    lowerPeakMemory(*best);
  }
  noteSpills(*best);
  return toPlan(*best);
}

void Planner::settleCollectives(State &state, CollectiveMoves moves) const {
  // Step 7 keeps the collective step but may open a move that lowers it,
  // and step 6 may raise the busiest rank's bytes: alternate until neither
  // changes the plan (the collective step never grows and drops with every
  // step-6 change, so this ends; capped all the same).
  constexpr int kCollectiveRounds = 8;
  improveCollectives(state, moves);
  for (int round = 0; round < kCollectiveRounds; ++round)
    if (!lowerBusiestTraffic(state) || !improveCollectives(state, moves))
      break;
}

void Planner::noteSpills(const State &state) {
  const Topology &topo = options.topology;
  // Device memory every table needs at least when all are device-resident
  // (each table's option with the least device bytes), against all ranks'.
  double demand = static_cast<double>(baseline.device.total()) *
                  static_cast<double>(topo.worldSize);
  for (const TableOptions &table : tableOptions) {
    double least = -1;
    for (const Option &option : table.options) {
      if (option.kernel == ComputeKernel::FusedUvmCaching ||
          option.kernel == ComputeKernel::FusedUvm)
        continue;
      double bytes = static_cast<double>(option.deviceBytes);
      if (least < 0 || bytes < least)
        least = bytes;
    }
    if (least >= 0)
      demand += least;
  }
  double capacity = static_cast<double>(state.deviceCap) *
                    static_cast<double>(topo.worldSize);
  for (size_t t = 0; t < specs.size(); ++t) {
    const Option &chosen = state.optionOf(t);
    if (chosen.kernel != ComputeKernel::FusedUvmCaching &&
        chosen.kernel != ComputeKernel::FusedUvm)
      continue;
    if (options.tables.count(specs[t].name) &&
        options.tables.at(specs[t].name).kernel)
      continue; // the user asked for it
    const Option *device = nullptr, *smallest = nullptr;
    for (const Option &option : tableOptions[t].options) {
      if (option.kernel != ComputeKernel::Fused)
        continue;
      if (!device || option.totalCost < device->totalCost)
        device = &option;
      if (!smallest ||
          option.maxShardDeviceBytes < smallest->maxShardDeviceBytes)
        smallest = &option;
    }
    std::string note =
        llvm::formatv("table '{0}' is served from host memory ({1}): no "
                      "device-resident sharding of it fits beside the other "
                      "tables",
                      specs[t].name, computeKernelName(chosen.kernel))
            .str();
    if (device) {
      // Device memory each rank would have for it, its own cache taken off.
      std::vector<int64_t> freeOn(topo.worldSize);
      for (int64_t rank = 0; rank < topo.worldSize; ++rank)
        freeOn[rank] = state.deviceCap - state.device[rank];
      for (size_t i = 0; i < state.ranksOf[t].size(); ++i)
        freeOn[state.ranksOf[t][i]] += chosen.unitDevice(i);
      int64_t mostFree = *std::max_element(freeOn.begin(), freeOn.end());
      // The device-resident option that comes closest: its largest shortfall
      // over its shards (fixed shards on their ranks, others on the rank
      // with the most free memory).
      const Option *closest = nullptr;
      int64_t closestShort = 0;
      for (const Option &option : tableOptions[t].options) {
        if (option.kernel != ComputeKernel::Fused)
          continue;
        int64_t worst = std::numeric_limits<int64_t>::min();
        for (size_t i = 0; i < option.shards.size(); ++i) {
          int64_t available = option.placement == Placement::Fixed
                                  ? freeOn[option.shards[i].rank]
                                  : mostFree;
          worst = std::max(worst, option.unitDevice(i) - available);
        }
        if (!closest || worst < closestShort) {
          closest = &option;
          closestShort = worst;
        }
      }
      if (closestShort > 0)
        note += llvm::formatv(" even after moving and re-sharding them: the "
                              "closest ({0} x {1}) is short by {2} of device "
                              "memory on a rank",
                              shardingKindName(closest->kind),
                              closest->shards.size(),
                              formatBytes(static_cast<double>(closestShort)))
                    .str();
      else
        note += " without serving others from host memory instead";
      if (demand > capacity)
        note += llvm::formatv("; every table in device memory would need "
                              "{0} more than the {1} ranks' device memory "
                              "together, and host memory serves the tables "
                              "that lose least per device byte saved",
                              formatBytes(demand - capacity), topo.worldSize)
                    .str();
      note += llvm::formatv("; it costs {0:F2} us per batch more (summed "
                            "over ranks) than its cheapest device-resident "
                            "sharding",
                            (chosen.totalCost - device->totalCost) * 1e6)
                  .str();
    }
    notes.push_back(note);
  }
}

llvm::Expected<ShardingPlan>
ember::sharding::planSharding(ArrayRef<TableSpec> tables,
                              const PlannerOptions &options) {
  return Planner::plan(tables, options);
}
