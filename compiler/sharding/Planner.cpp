//===- Planner.cpp - the sharding planner's search ------------------------===//
//
// 1. Options: every table gets the shardings it may take (kind x compute
//    kernel x shard geometry); forced kinds, pinned ranks and imported
//    shardings narrow them to what the user asked for.
// 2. Seeds: greedy passes that place the tables one by one (largest first)
//    under three policies: "balanced" (the option and ranks that raise the
//    running maximum cost least), "cheapest" (the option with the least total
//    cost, on the least loaded ranks) and "memory" (the option with the
//    smallest shards, on the ranks with the most free memory).
// 3. Local improvement of each seed: while the most loaded rank can shed
//    cost, move one of its shards to another rank, swap one with a smaller
//    shard elsewhere, or re-shard one of its tables; every accepted step
//    leaves every changed rank below the old maximum, so the sorted cost
//    vector decreases and the search ends.
// The best seed (lowest maximum, then lowest total cost) is the plan.
//
//===----------------------------------------------------------------------===//

#include "sharding/Planner.h"
#include "sharding/CostModel.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

using namespace ember::sharding;
using llvm::ArrayRef;

namespace {

/// Auto plans replicate (data_parallel) a table only when one replica takes
/// at most this fraction of a rank's usable device memory...
constexpr double kReplicaMaxFraction = 0.01;
/// ...and while all replicas together take at most this fraction.
constexpr double kReplicaBudgetFraction = 0.25;
/// Auto column-wise shards are at least this many columns wide.
constexpr int64_t kAutoMinColumnWidth = 16;
/// Column-wise shard widths are multiples of this.
constexpr int64_t kColumnBlock = 4;
/// Limits that keep every byte count of the models inside int64.
constexpr int64_t kMaxTableBytes = int64_t(1) << 60;
constexpr double kMaxPoolingFactor = 1e9;
constexpr int64_t kMaxWorldSize = 1 << 20;
constexpr int64_t kMaxBatchSize = 1 << 24;
constexpr int64_t kMaxBufferBytes = int64_t(1) << 44;
constexpr size_t kMaxTables = size_t(1) << 16;
/// Exhaustive search for tiny cases: at most this many tables and ranks,
/// and at most this many search nodes.
constexpr size_t kExactMaxTables = 8;
constexpr int64_t kExactMaxRanks = 4;
constexpr int64_t kExactMaxNodes = 2'000'000;

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

llvm::Error makeError(const std::string &message) {
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

/// One way to shard a table: kind, kernel and shard geometry.
struct Option {
  ShardingKind kind = ShardingKind::TableWise;
  ComputeKernel kernel = ComputeKernel::Fused;
  Placement placement = Placement::Free;
  /// Shard blocks (data_parallel: one whole-table block per replica). Their
  /// ranks matter for Fixed placement; Node placement uses them as positions
  /// in the node.
  std::vector<Shard> shards;
  std::vector<ShardLoad> loads;
  /// Totals of each load (what the search adds up).
  std::vector<double> unitCost;
  std::vector<int64_t> unitDevice, unitHost;
  double totalCost = 0;
  int64_t maxShardDeviceBytes = 0;
  int64_t replicaBytes = 0;
  /// Uses the data_parallel replica budget (auto choice).
  bool budgeted = false;
};

struct TableOptions {
  std::vector<Option> options;
  /// Fixed by the user (imported or pinned): placed first, never moved.
  bool userFixed = false;
};

/// Search state: where every table's shards are and what each rank carries.
class State {
public:
  State(const Topology &topology, ArrayRef<TableOptions> tables,
        const ShardLoad &baseline, double replicaBudget)
      : topology(topology), tables(tables), replicaBudget(replicaBudget) {
    int64_t world = topology.worldSize;
    cost.assign(world, baseline.cost.total());
    device.assign(world, baseline.device.total());
    host.assign(world, baseline.host.total());
    units.assign(world, {});
    choice.assign(tables.size(), -1);
    ranksOf.assign(tables.size(), {});
    positions.assign(tables.size(), {});
    deviceCap = topology.usableDeviceMemory();
    hostCap = topology.hostMemoryBytes;
    extraCost.assign(world, 0);
    extraDevice.assign(world, 0);
    extraHost.assign(world, 0);
  }

  const Topology &topology;
  ArrayRef<TableOptions> tables;
  double replicaBudget;
  double replicaUsed = 0;
  int64_t deviceCap, hostCap;
  std::vector<double> cost;
  std::vector<int64_t> device, host;
  /// (table, shard) pairs on each rank.
  std::vector<std::vector<std::pair<int, int>>> units;
  std::vector<int> choice;
  std::vector<std::vector<int64_t>> ranksOf;
  std::vector<std::vector<size_t>> positions;
  /// Scratch of place(): what the shards placed so far add to each rank.
  std::vector<double> extraCost;
  std::vector<int64_t> extraDevice, extraHost;
  std::vector<int64_t> touched;

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
    return fits(rank, extraDevice[rank] + option.unitDevice[shard],
                extraHost[rank] + option.unitHost[shard]);
  }
  void addExtra(int64_t rank, const Option &option, int shard) {
    if (extraDevice[rank] == 0 && extraHost[rank] == 0 && extraCost[rank] == 0)
      touched.push_back(rank);
    extraCost[rank] += option.unitCost[shard];
    extraDevice[rank] += option.unitDevice[shard];
    extraHost[rank] += option.unitHost[shard];
  }
  void clearExtra() {
    for (int64_t rank : touched) {
      extraCost[rank] = 0;
      extraDevice[rank] = 0;
      extraHost[rank] = 0;
    }
    touched.clear();
  }

  double maxCost() const { return *std::max_element(cost.begin(), cost.end()); }
  double totalCost() const {
    return std::accumulate(cost.begin(), cost.end(), 0.0);
  }
  int64_t maxRank() const {
    return std::max_element(cost.begin(), cost.end()) - cost.begin();
  }

  void addUnit(int table, int shard, int64_t rank) {
    const Option &option = tables[table].options[choice[table]];
    cost[rank] += option.unitCost[shard];
    device[rank] += option.unitDevice[shard];
    host[rank] += option.unitHost[shard];
    ranksOf[table][shard] = rank;
    positions[table][shard] = units[rank].size();
    units[rank].push_back({table, shard});
  }

  void removeUnit(int table, int shard) {
    const Option &option = tables[table].options[choice[table]];
    int64_t rank = ranksOf[table][shard];
    cost[rank] -= option.unitCost[shard];
    device[rank] -= option.unitDevice[shard];
    host[rank] -= option.unitHost[shard];
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
    choice[table] = -1;
  }

  /// Places `table` with its option `index` at `ranks` (one per shard),
  /// without checks.
  void placeAt(int table, int index, ArrayRef<int64_t> ranks) {
    choice[table] = index;
    const Option &option = tables[table].options[index];
    ranksOf[table].assign(option.shards.size(), -1);
    positions[table].assign(option.shards.size(), 0);
    for (int shard = 0, e = option.shards.size(); shard < e; ++shard)
      addUnit(table, shard, ranks[shard]);
    if (option.budgeted)
      replicaUsed += static_cast<double>(option.replicaBytes);
  }

  /// Places `table` with option `index` greedily: free shards on the least
  /// loaded ranks (or the ones with most free memory when `byMemory`), a
  /// node-placed table on the node whose ranks end least loaded. Returns
  /// false (state unchanged) when it does not fit.
  bool place(int table, int index, bool byMemory) {
    const Option &option = tables[table].options[index];
    if (option.budgeted &&
        replicaUsed + static_cast<double>(option.replicaBytes) > replicaBudget)
      return false;
    int numShards = option.shards.size();
    std::vector<int64_t> ranks(numShards, -1);
    switch (option.placement) {
    case Placement::Fixed: {
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
      bool ok = true;
      for (int shard = 0; shard < numShards && ok; ++shard) {
        int64_t best = -1;
        double bestKey = 0;
        bool bestUsed = true;
        for (int64_t rank = 0; rank < topology.worldSize; ++rank) {
          if (!fitsWithExtra(rank, option, shard))
            continue;
          double key =
              byMemory ? static_cast<double>(device[rank] + extraDevice[rank])
                       : cost[rank] + extraCost[rank];
          bool isUsed = extraCost[rank] != 0 || extraDevice[rank] != 0 ||
                        extraHost[rank] != 0;
          if (best < 0 || (bestUsed && !isUsed) ||
              (bestUsed == isUsed && key < bestKey)) {
            best = rank;
            bestKey = key;
            bestUsed = isUsed;
          }
        }
        if (best < 0) {
          ok = false;
          break;
        }
        ranks[shard] = best;
        addExtra(best, option, shard);
      }
      clearExtra();
      if (!ok)
        return false;
      break;
    }
    case Placement::Node: {
      int64_t perNode = topology.ranksPerNode;
      int64_t bestNode = -1;
      double bestKey = 0;
      for (int64_t node = 0; node < topology.numNodes(); ++node) {
        int64_t first = node * perNode;
        if (first + numShards > topology.worldSize)
          continue;
        bool ok = true;
        double key = 0;
        for (int shard = 0; shard < numShards && ok; ++shard) {
          int64_t rank = first + option.shards[shard].rank;
          ok = fits(rank, option.unitDevice[shard], option.unitHost[shard]);
          double value =
              byMemory
                  ? static_cast<double>(device[rank] + option.unitDevice[shard])
                  : cost[rank] + option.unitCost[shard];
          key = std::max(key, value);
        }
        if (ok && (bestNode < 0 || key < bestKey)) {
          bestNode = node;
          bestKey = key;
        }
      }
      if (bestNode < 0)
        return false;
      for (int shard = 0; shard < numShards; ++shard)
        ranks[shard] = bestNode * perNode + option.shards[shard].rank;
      break;
    }
    }
    placeAt(table, index, ranks);
    return true;
  }
};

/// Whether one plan is better than another: lower maximum, then lower total.
bool better(double maxA, double totalA, double maxB, double totalB) {
  double tolerance = 1e-12 * std::max(1.0, std::fabs(maxB));
  if (maxA < maxB - tolerance)
    return true;
  if (maxA > maxB + tolerance)
    return false;
  return totalA < totalB - 1e-12 * std::max(1.0, std::fabs(totalB));
}

/// Splits `total` into `parts` blocks whose sizes differ by at most one
/// `unit`-sized block (sizes are multiples of `unit` but the last may end
/// the total); empty parts are dropped.
std::vector<std::pair<int64_t, int64_t>> split(int64_t total, int64_t parts,
                                               int64_t unit) {
  std::vector<std::pair<int64_t, int64_t>> blocks;
  int64_t units = (total + unit - 1) / unit;
  parts = std::max<int64_t>(1, std::min(parts, units));
  int64_t base = units / parts, extra = units % parts, offset = 0;
  for (int64_t i = 0; i < parts && offset < total; ++i) {
    int64_t size =
        std::min(total - offset, (base + (i < extra ? 1 : 0)) * unit);
    blocks.push_back({offset, size});
    offset += size;
  }
  return blocks;
}

/// Row blocks of TorchRec's row-wise sharding: ceil(rows / parts) rows each,
/// the last shorter; parts with no rows are dropped.
std::vector<std::pair<int64_t, int64_t>> rowBlocks(int64_t rows,
                                                   int64_t parts) {
  std::vector<std::pair<int64_t, int64_t>> blocks;
  int64_t block = std::max<int64_t>(1, (rows + parts - 1) / parts);
  for (int64_t offset = 0; offset < rows; offset += block)
    blocks.push_back({offset, std::min(block, rows - offset)});
  return blocks;
}

class Planner {
public:
  Planner(ArrayRef<TableSpec> tables, const PlannerOptions &options)
      : specs(tables), options(options), model(options) {}

  llvm::Expected<ShardingPlan> run();

private:
  llvm::Error checkInputs();
  llvm::Error buildOptions();
  void finishOption(const TableSpec &table, Option &option);
  void addOptionsOfKind(const TableSpec &table, ShardingKind kind,
                        ArrayRef<ComputeKernel> kernels,
                        ArrayRef<int64_t> pinned, bool autoChoice,
                        std::vector<Option> &out);
  std::unique_ptr<State> newState() const;
  enum class Policy { Balanced, Cheapest, Memory };
  /// Runs one greedy seed; returns the tables that could not be placed.
  std::vector<int> seed(State &state, Policy policy) const;
  void improve(State &state) const;
  bool tryMove(State &state, int64_t maxRank) const;
  bool trySwap(State &state, int64_t maxRank) const;
  bool tryReshard(State &state, int64_t maxRank) const;
  /// Tiny cases: exhaustive search (branch and bound) over every table's
  /// options and the rank of every single-shard free option; replaces `best`
  /// when it finds a better plan.
  void exactSearch(std::unique_ptr<State> &best) const;
  std::string shortfall(const State &state, int table) const;
  ShardingPlan toPlan(const State &state) const;

  ArrayRef<TableSpec> specs;
  const PlannerOptions &options;
  CostModel model;
  std::vector<TableOptions> tableOptions;
  std::vector<std::string> notes;
  ShardLoad baseline;
};

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

void Planner::finishOption(const TableSpec &table, Option &option) {
  option.loads.clear();
  option.unitCost.clear();
  option.unitDevice.clear();
  option.unitHost.clear();
  option.totalCost = 0;
  option.maxShardDeviceBytes = 0;
  int64_t numShards = option.shards.size();
  ShardLoad load;
  const Shard *previous = nullptr;
  for (const Shard &shard : option.shards) {
    // Shards of one size cost the same: compute once per size.
    if (!previous || previous->rows != shard.rows ||
        previous->cols != shard.cols)
      load = option.kind == ShardingKind::DataParallel
                 ? model.replicaLoad(table, numShards)
                 : model.shardLoad(table, option.kind, option.kernel, shard,
                                   numShards);
    previous = &shard;
    option.totalCost += load.cost.total();
    option.maxShardDeviceBytes =
        std::max(option.maxShardDeviceBytes, load.device.total());
    option.unitCost.push_back(load.cost.total());
    option.unitDevice.push_back(load.device.total());
    option.unitHost.push_back(load.host.total());
    option.loads.push_back(load);
  }
  if (option.kind == ShardingKind::DataParallel && !option.loads.empty())
    option.replicaBytes = option.loads.front().device.total();
}

} // namespace

bool ember::sharding::isKindAllowed(const TableSpec &table, ShardingKind kind,
                                    std::string *why) {
  auto fail = [&](const std::string &reason) {
    if (why)
      *why = reason;
    return false;
  };
  switch (kind) {
  case ShardingKind::TableWise:
  case ShardingKind::DataParallel:
    return true;
  case ShardingKind::ColumnWise:
    if (table.dim % kColumnBlock != 0)
      return fail(llvm::formatv("column_wise shard widths are multiples of "
                                "{0}; the table's dim {1} is not",
                                kColumnBlock, table.dim));
    return true;
  case ShardingKind::RowWise:
  case ShardingKind::TableRowWise:
    // Shards add up partial sums; mean then divides by the bag size at the
    // sample's rank. A partial max of a shard that holds none of a bag's ids
    // is not neutral.
    if (table.pooling == PoolingKind::Max)
      return fail(llvm::formatv("{0} adds up partial bags from several ranks, "
                                "which is only right for sum and mean "
                                "pooling; the table pools with {1}",
                                shardingKindName(kind),
                                poolingKindName(table.pooling)));
    return true;
  }
  return true;
}

namespace {

void Planner::addOptionsOfKind(const TableSpec &table, ShardingKind kind,
                               ArrayRef<ComputeKernel> kernels,
                               ArrayRef<int64_t> pinned, bool autoChoice,
                               std::vector<Option> &out) {
  const Topology &topo = options.topology;
  auto whole = [&](int64_t rank) {
    return Shard{0, 0, table.rows, table.dim, rank};
  };
  std::vector<std::pair<Placement, std::vector<Shard>>> layouts;
  switch (kind) {
  case ShardingKind::TableWise:
    if (!pinned.empty())
      layouts.push_back({Placement::Fixed, {whole(pinned.front())}});
    else
      layouts.push_back({Placement::Free, {whole(0)}});
    break;
  case ShardingKind::ColumnWise: {
    auto columnShards = [&](int64_t parts) {
      std::vector<Shard> shards;
      for (auto [offset, width] : split(table.dim, parts, kColumnBlock))
        shards.push_back(Shard{0, offset, table.rows, width, 0});
      return shards;
    };
    if (!pinned.empty()) {
      std::vector<Shard> shards = columnShards(pinned.size());
      for (size_t i = 0; i < shards.size(); ++i)
        shards[i].rank = pinned[i];
      layouts.push_back({Placement::Fixed, shards});
      break;
    }
    int64_t blocks = table.dim / kColumnBlock;
    int64_t minWidth = autoChoice ? kAutoMinColumnWidth : kColumnBlock;
    int64_t maxParts = std::min<int64_t>({std::max<int64_t>(topo.worldSize, 2),
                                          blocks, table.dim / minWidth, 64});
    for (int64_t parts = 2; parts <= maxParts; parts *= 2)
      layouts.push_back({Placement::Free, columnShards(parts)});
    if (layouts.empty() && !autoChoice)
      layouts.push_back({Placement::Free, columnShards(1)});
    break;
  }
  case ShardingKind::RowWise: {
    std::vector<int64_t> ranks(pinned.begin(), pinned.end());
    if (ranks.empty())
      for (int64_t rank = 0; rank < topo.worldSize; ++rank)
        ranks.push_back(rank);
    std::vector<Shard> shards;
    auto blocks = rowBlocks(table.rows, ranks.size());
    for (size_t i = 0; i < blocks.size(); ++i)
      shards.push_back(
          Shard{blocks[i].first, 0, blocks[i].second, table.dim, ranks[i]});
    layouts.push_back({Placement::Fixed, shards});
    break;
  }
  case ShardingKind::TableRowWise: {
    bool isPinned = !pinned.empty();
    int64_t parts = isPinned ? static_cast<int64_t>(pinned.size())
                             : std::min(topo.ranksPerNode, topo.worldSize);
    std::vector<Shard> shards;
    auto blocks = rowBlocks(table.rows, parts);
    for (size_t i = 0; i < blocks.size(); ++i)
      shards.push_back(Shard{blocks[i].first, 0, blocks[i].second, table.dim,
                             isPinned ? pinned[i] : static_cast<int64_t>(i)});
    layouts.push_back({isPinned ? Placement::Fixed : Placement::Node, shards});
    break;
  }
  case ShardingKind::DataParallel: {
    std::vector<Shard> shards;
    if (!pinned.empty()) {
      std::vector<int64_t> ranks(pinned.begin(), pinned.end());
      llvm::sort(ranks);
      for (int64_t rank : ranks)
        shards.push_back(whole(rank));
    } else {
      for (int64_t rank = 0; rank < topo.worldSize; ++rank)
        shards.push_back(whole(rank));
    }
    layouts.push_back({Placement::Fixed, shards});
    break;
  }
  }
  for (ComputeKernel kernel : kernels) {
    for (auto &[placement, shards] : layouts) {
      Option option;
      option.kind = kind;
      option.kernel = kernel;
      option.placement = placement;
      option.shards = shards;
      finishOption(table, option);
      if (kind == ShardingKind::DataParallel && autoChoice && pinned.empty()) {
        if (static_cast<double>(option.replicaBytes) >
            kReplicaMaxFraction *
                static_cast<double>(topo.usableDeviceMemory()))
          continue;
        option.budgeted = true;
      }
      out.push_back(std::move(option));
    }
  }
}

llvm::Error Planner::buildOptions() {
  std::vector<std::string> errors;
  tableOptions.assign(specs.size(), {});
  for (size_t t = 0; t < specs.size(); ++t) {
    const TableSpec &table = specs[t];
    TableOptions &result = tableOptions[t];

    if (auto it = options.imported.find(table.name);
        it != options.imported.end()) {
      const TableSharding &imported = it->second;
      if (llvm::Error error =
              verifySharding(table, imported, options.topology)) {
        errors.push_back("imported sharding of table '" + table.name +
                         "': " + llvm::toString(std::move(error)));
        continue;
      }
      Option option;
      option.kind = imported.kind;
      option.kernel = imported.kernel;
      option.placement = Placement::Fixed;
      option.shards = imported.shards;
      if (imported.kind == ShardingKind::DataParallel) {
        option.shards.clear();
        std::vector<int64_t> ranks = imported.replicaRanks;
        if (ranks.empty())
          for (int64_t rank = 0; rank < options.topology.worldSize; ++rank)
            ranks.push_back(rank);
        for (int64_t rank : ranks)
          option.shards.push_back(Shard{0, 0, table.rows, table.dim, rank});
      }
      finishOption(table, option);
      result.options.push_back(std::move(option));
      result.userFixed = true;
      continue;
    }

    TableConstraint constraint;
    if (auto it = options.tables.find(table.name); it != options.tables.end())
      constraint = it->second;
    bool tableError = false;
    for (int64_t rank : constraint.ranks)
      if (rank < 0 || rank >= options.topology.worldSize) {
        errors.push_back(llvm::formatv("table '{0}' is pinned to rank {1}, "
                                       "outside the world of {2} ranks",
                                       table.name, rank,
                                       options.topology.worldSize));
        tableError = true;
      }
    if (tableError)
      continue;

    std::vector<ShardingKind> kinds;
    bool autoChoice = false;
    std::string why;
    if (constraint.kind) {
      if (!isKindAllowed(table, *constraint.kind, &why)) {
        errors.push_back("table '" + table.name + "' cannot be " +
                         shardingKindName(*constraint.kind).str() + ": " + why);
        continue;
      }
      kinds.push_back(*constraint.kind);
    } else if (options.globalKind &&
               isKindAllowed(table, *options.globalKind, &why)) {
      kinds.push_back(*options.globalKind);
    } else {
      if (options.globalKind)
        notes.push_back("table '" + table.name + "' is not " +
                        shardingKindName(*options.globalKind).str() + " (" +
                        why + "); the planner chose among the kinds it allows");
      autoChoice = true;
      for (int k = 0; k < kNumShardingKinds; ++k) {
        auto kind = static_cast<ShardingKind>(k);
        if (isKindAllowed(table, kind))
          kinds.push_back(kind);
      }
    }

    // Pinned ranks: check what each kind needs of them.
    const std::vector<int64_t> &pinned = constraint.ranks;
    if (!pinned.empty()) {
      std::vector<int64_t> sorted = pinned;
      llvm::sort(sorted);
      bool unique =
          std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
      bool oneNode = options.topology.nodeOf(sorted.front()) ==
                     options.topology.nodeOf(sorted.back());
      std::vector<ShardingKind> usable;
      std::vector<std::string> reasons;
      for (ShardingKind kind : kinds) {
        std::string name = shardingKindName(kind).str();
        if (kind == ShardingKind::TableWise && pinned.size() != 1)
          reasons.push_back("table_wise takes one rank");
        else if ((kind == ShardingKind::RowWise ||
                  kind == ShardingKind::TableRowWise ||
                  kind == ShardingKind::DataParallel) &&
                 !unique)
          reasons.push_back(name + " takes each rank once");
        else if ((kind == ShardingKind::RowWise ||
                  kind == ShardingKind::TableRowWise) &&
                 static_cast<int64_t>(pinned.size()) > table.rows)
          reasons.push_back(name + " needs a row per rank");
        else if (kind == ShardingKind::TableRowWise && !oneNode)
          reasons.push_back("table_row_wise needs ranks of one node");
        else if (kind == ShardingKind::ColumnWise &&
                 static_cast<int64_t>(pinned.size()) > table.dim / kColumnBlock)
          reasons.push_back(llvm::formatv("column_wise has at most {0} shards "
                                          "of width {1}",
                                          table.dim / kColumnBlock,
                                          kColumnBlock));
        else
          usable.push_back(kind);
      }
      if (usable.empty()) {
        errors.push_back("table '" + table.name +
                         "' cannot be placed on the pinned ranks: " +
                         llvm::join(reasons, "; "));
        continue;
      }
      kinds = usable;
      result.userFixed = true;
    }

    for (ShardingKind kind : kinds) {
      std::vector<ComputeKernel> kernels;
      if (constraint.kernel) {
        bool dense = *constraint.kernel == ComputeKernel::Dense;
        if (dense != (kind == ShardingKind::DataParallel)) {
          if (constraint.kind)
            errors.push_back("table '" + table.name + "': compute kernel " +
                             computeKernelName(*constraint.kernel).str() +
                             " does not serve " + shardingKindName(kind).str() +
                             " (data_parallel uses dense, the others fused "
                             "kernels)");
          continue;
        }
        kernels.push_back(*constraint.kernel);
      } else if (kind == ShardingKind::DataParallel) {
        kernels.push_back(ComputeKernel::Dense);
      } else {
        kernels.push_back(ComputeKernel::Fused);
        if (options.allowUvm)
          kernels.push_back(ComputeKernel::FusedUvmCaching);
      }
      addOptionsOfKind(table, kind, kernels, pinned, autoChoice,
                       result.options);
    }
    if (result.options.empty() && !constraint.kind)
      errors.push_back("table '" + table.name +
                       "' has no sharding that the constraints allow");
  }
  if (errors.empty())
    return llvm::Error::success();
  return makeError(llvm::join(errors, "\n"));
}

std::unique_ptr<State> Planner::newState() const {
  double budget = kReplicaBudgetFraction *
                  static_cast<double>(options.topology.usableDeviceMemory());
  return std::make_unique<State>(options.topology, tableOptions, baseline,
                                 budget);
}

std::vector<int> Planner::seed(State &state, Policy policy) const {
  int numTables = specs.size();
  // User-fixed tables first, then by weight, largest first.
  std::vector<double> weight(numTables, 0);
  for (int t = 0; t < numTables; ++t) {
    const auto &opts = tableOptions[t].options;
    double w = std::numeric_limits<double>::max();
    for (const Option &option : opts)
      w = std::min(w, policy == Policy::Memory
                          ? static_cast<double>(option.maxShardDeviceBytes) *
                                static_cast<double>(option.shards.size())
                          : option.totalCost);
    weight[t] = w;
  }
  std::vector<int> order(numTables);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (tableOptions[a].userFixed != tableOptions[b].userFixed)
      return tableOptions[a].userFixed;
    return weight[a] > weight[b];
  });

  std::vector<int> failed;
  double runningMax = state.maxCost();
  for (int t : order) {
    const auto &opts = tableOptions[t].options;
    int chosen = -1;
    if (policy == Policy::Balanced) {
      // Device-resident kernels first; UVM only when none of them fits.
      for (bool uvm : {false, true}) {
        double bestMax = 0, bestTotal = 0;
        for (int i = 0, e = opts.size(); i < e; ++i) {
          if ((opts[i].kernel == ComputeKernel::FusedUvmCaching) != uvm)
            continue;
          if (!state.place(t, i, /*byMemory=*/false))
            continue;
          double newMax = runningMax;
          for (int64_t rank : state.ranksOf[t])
            newMax = std::max(newMax, state.cost[rank]);
          state.removeTable(t);
          if (chosen < 0 ||
              better(newMax, opts[i].totalCost, bestMax, bestTotal)) {
            chosen = i;
            bestMax = newMax;
            bestTotal = opts[i].totalCost;
          }
        }
        if (chosen >= 0)
          break;
      }
      if (chosen >= 0)
        state.place(t, chosen, false);
    } else {
      std::vector<int> byPreference(opts.size());
      std::iota(byPreference.begin(), byPreference.end(), 0);
      std::stable_sort(
          byPreference.begin(), byPreference.end(), [&](int a, int b) {
            bool uvmA = opts[a].kernel == ComputeKernel::FusedUvmCaching;
            bool uvmB = opts[b].kernel == ComputeKernel::FusedUvmCaching;
            if (uvmA != uvmB)
              return uvmB;
            if (policy == Policy::Memory)
              return opts[a].maxShardDeviceBytes < opts[b].maxShardDeviceBytes;
            return opts[a].totalCost < opts[b].totalCost;
          });
      for (int i : byPreference)
        if (state.place(t, i, policy == Policy::Memory)) {
          chosen = i;
          break;
        }
    }
    if (chosen < 0) {
      failed.push_back(t);
      continue;
    }
    for (int64_t rank : state.ranksOf[t])
      runningMax = std::max(runningMax, state.cost[rank]);
  }
  return failed;
}

bool Planner::tryMove(State &state, int64_t maxRank) const {
  double current = state.cost[maxRank];
  double bestValue = current;
  std::pair<int, int> bestUnit{-1, -1};
  int64_t bestTarget = -1;
  for (auto [table, shard] : state.units[maxRank]) {
    if (tableOptions[table].userFixed ||
        state.optionOf(table).placement != Placement::Free)
      continue;
    const ShardLoad &load = state.optionOf(table).loads[shard];
    double unitCost = load.cost.total();
    if (unitCost <= 0)
      continue;
    for (int64_t rank = 0; rank < state.topology.worldSize; ++rank) {
      if (rank == maxRank || !state.fits(rank, load))
        continue;
      double value = std::max(state.cost[rank] + unitCost, current - unitCost);
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
  auto movable = [&](int table) {
    return !tableOptions[table].userFixed &&
           state.optionOf(table).placement == Placement::Free;
  };
  // Swap partners come from the least loaded ranks.
  constexpr size_t kSwapRanks = 32;
  std::vector<int64_t> partners;
  for (int64_t rank = 0; rank < state.topology.worldSize; ++rank)
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
  for (auto [tableA, shardA] : state.units[maxRank]) {
    if (!movable(tableA))
      continue;
    const ShardLoad &loadA = state.optionOf(tableA).loads[shardA];
    double costA = loadA.cost.total();
    for (int64_t rank : partners) {
      for (auto [tableB, shardB] : state.units[rank]) {
        if (!movable(tableB))
          continue;
        const ShardLoad &loadB = state.optionOf(tableB).loads[shardB];
        double costB = loadB.cost.total();
        if (costB >= costA)
          continue;
        double newMax = current - costA + costB;
        double newOther = state.cost[rank] - costB + costA;
        double value = std::max(newMax, newOther);
        if (value >= bestValue - 1e-12 * current)
          continue;
        // Memory after the swap on both ranks.
        ShardLoad intoMax = loadB;
        intoMax -= loadA;
        ShardLoad intoOther = loadA;
        intoOther -= loadB;
        if (!state.fits(maxRank, intoMax) || !state.fits(rank, intoOther))
          continue;
        bestValue = value;
        bestA = {tableA, shardA};
        bestB = {tableB, shardB};
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
  std::vector<std::pair<double, int>> candidates;
  for (auto [table, shard] : state.units[maxRank]) {
    if (tableOptions[table].userFixed && tableOptions[table].options.size() < 2)
      continue;
    candidates.push_back(
        {state.optionOf(table).loads[shard].cost.total(), table});
  }
  llvm::sort(candidates, [](auto &a, auto &b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  candidates.erase(
      std::unique(candidates.begin(), candidates.end(),
                  [](auto &a, auto &b) { return a.second == b.second; }),
      candidates.end());
  if (candidates.size() > kCandidates)
    candidates.resize(kCandidates);

  for (auto [unused, table] : candidates) {
    int oldChoice = state.choice[table];
    std::vector<int64_t> oldRanks = state.ranksOf[table];
    state.removeTable(table);
    int bestChoice = -1;
    double bestValue = current, bestTotal = 0;
    std::vector<int64_t> bestRanks;
    const auto &opts = tableOptions[table].options;
    for (int i = 0, e = opts.size(); i < e; ++i) {
      if (!state.place(table, i, false))
        continue;
      double value = 0;
      for (int64_t rank : oldRanks)
        value = std::max(value, state.cost[rank]);
      for (int64_t rank : state.ranksOf[table])
        value = std::max(value, state.cost[rank]);
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
      const ShardLoad &load = option.loads[i];
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

} // namespace

std::vector<RankLoad>
ember::sharding::computeRankLoads(ArrayRef<TableSpec> tables,
                                  ArrayRef<TableSharding> shardings,
                                  const PlannerOptions &options) {
  CostModel model(options);
  ShardLoad base = model.baseline(tables);
  std::vector<ShardLoad> loads(options.topology.worldSize, base);
  for (size_t t = 0; t < tables.size() && t < shardings.size(); ++t) {
    const TableSharding &sharding = shardings[t];
    if (sharding.kind == ShardingKind::DataParallel) {
      std::vector<int64_t> ranks = sharding.replicaRanks;
      if (ranks.empty())
        for (int64_t rank = 0; rank < options.topology.worldSize; ++rank)
          ranks.push_back(rank);
      for (int64_t rank : ranks)
        loads[rank] += model.replicaLoad(tables[t], ranks.size());
      continue;
    }
    for (const Shard &shard : sharding.shards)
      loads[shard.rank] +=
          model.shardLoad(tables[t], sharding.kind, sharding.kernel, shard,
                          sharding.shards.size());
  }
  std::vector<RankLoad> result;
  for (const ShardLoad &load : loads)
    result.push_back(RankLoad{load.cost, load.device, load.host});
  return result;
}

namespace {

ShardingPlan Planner::toPlan(const State &state) const {
  ShardingPlan plan;
  plan.topology = options.topology;
  plan.batchSizePerRank = options.batchSizePerRank;
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

void Planner::exactSearch(std::unique_ptr<State> &best) const {
  int numTables = specs.size();
  std::vector<int> order(numTables);
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> weight(numTables, 0);
  for (int t = 0; t < numTables; ++t)
    for (const Option &option : tableOptions[t].options)
      weight[t] = std::max(weight[t], option.totalCost);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return weight[a] > weight[b]; });

  double bestMax = best->maxCost(), bestTotal = best->totalCost();
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
      if (option.placement == Placement::Free && option.shards.size() == 1) {
        for (int64_t rank = 0; rank < options.topology.worldSize; ++rank) {
          if (option.budgeted &&
              state->replicaUsed + static_cast<double>(option.replicaBytes) >
                  state->replicaBudget)
            continue;
          if (!state->fits(rank, option.unitDevice[0], option.unitHost[0]))
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

llvm::Expected<ShardingPlan> Planner::run() {
  if (llvm::Error error = checkInputs())
    return error;
  if (llvm::Error error = buildOptions())
    return error;
  baseline = model.baseline(specs);

  std::vector<Policy> policies = {Policy::Balanced};
  if (options.search == SearchMode::Local)
    policies = {Policy::Balanced, Policy::Cheapest, Policy::Memory};

  std::unique_ptr<State> best;
  std::vector<int> fewestFailed;
  std::unique_ptr<State> failedState;
  for (Policy policy : policies) {
    std::unique_ptr<State> state = newState();
    std::vector<int> failed = seed(*state, policy);
    if (!failed.empty()) {
      if (!failedState || failed.size() < fewestFailed.size()) {
        fewestFailed = failed;
        failedState = std::move(state);
      }
      continue;
    }
    if (options.search == SearchMode::Local)
      improve(*state);
    if (!best || better(state->maxCost(), state->totalCost(), best->maxCost(),
                        best->totalCost()))
      best = std::move(state);
  }
  if (best && options.search == SearchMode::Local &&
      specs.size() <= kExactMaxTables &&
      options.topology.worldSize <= kExactMaxRanks)
    exactSearch(best);
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
  return toPlan(*best);
}

} // namespace

llvm::Expected<ShardingPlan>
ember::sharding::planSharding(ArrayRef<TableSpec> tables,
                              const PlannerOptions &options) {
  Planner planner(tables, options);
  return planner.run();
}

llvm::Error ember::sharding::verifySharding(const TableSpec &table,
                                            const TableSharding &sharding,
                                            const Topology &topology) {
  std::string why;
  if (!isKindAllowed(table, sharding.kind, &why))
    return makeError(why);
  bool dense = sharding.kernel == ComputeKernel::Dense;
  if (dense != (sharding.kind == ShardingKind::DataParallel))
    return makeError(
        "compute kernel " + computeKernelName(sharding.kernel).str() +
        " does not serve " + shardingKindName(sharding.kind).str() +
        " (data_parallel uses dense, the others fused kernels)");
  auto checkRank = [&](int64_t rank) -> llvm::Error {
    if (rank < 0 || rank >= topology.worldSize)
      return makeError(llvm::formatv("rank {0} is outside the world of {1} "
                                     "ranks",
                                     rank, topology.worldSize));
    return llvm::Error::success();
  };
  if (sharding.kind == ShardingKind::DataParallel) {
    if (!sharding.shards.empty())
      return makeError("data_parallel takes no shards");
    std::vector<int64_t> ranks = sharding.replicaRanks;
    llvm::sort(ranks);
    if (std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end())
      return makeError("data_parallel lists a rank twice");
    for (int64_t rank : ranks)
      if (llvm::Error error = checkRank(rank))
        return error;
    return llvm::Error::success();
  }
  const std::vector<Shard> &shards = sharding.shards;
  if (shards.empty())
    return makeError(shardingKindName(sharding.kind).str() +
                     " needs at least one shard");
  std::vector<int64_t> ranks;
  for (size_t i = 0; i < shards.size(); ++i) {
    const Shard &shard = shards[i];
    if (llvm::Error error = checkRank(shard.rank))
      return error;
    if (shard.rows < 1 || shard.cols < 1 || shard.rowOffset < 0 ||
        shard.colOffset < 0 || shard.rowOffset + shard.rows > table.rows ||
        shard.colOffset + shard.cols > table.dim)
      return makeError(llvm::formatv(
          "shard #{0} (offsets [{1}, {2}], sizes [{3}, {4}]) is empty or lies "
          "outside the {5}x{6} table",
          i, shard.rowOffset, shard.colOffset, shard.rows, shard.cols,
          table.rows, table.dim));
    ranks.push_back(shard.rank);
  }
  switch (sharding.kind) {
  case ShardingKind::TableWise:
    if (shards.size() != 1 || shards[0].rows != table.rows ||
        shards[0].cols != table.dim)
      return makeError("table_wise has one shard covering the whole table");
    break;
  case ShardingKind::RowWise:
  case ShardingKind::TableRowWise: {
    int64_t next = 0;
    for (size_t i = 0; i < shards.size(); ++i) {
      if (shards[i].colOffset != 0 || shards[i].cols != table.dim)
        return makeError(llvm::formatv("row shard #{0} does not take full "
                                       "rows",
                                       i));
      if (shards[i].rowOffset != next)
        return makeError(llvm::formatv("row shard #{0} starts at row {1}, "
                                       "expected {2}",
                                       i, shards[i].rowOffset, next));
      next += shards[i].rows;
    }
    if (next != table.rows)
      return makeError(
          llvm::formatv("row shards cover {0} of {1} rows", next, table.rows));
    std::vector<int64_t> sorted = ranks;
    llvm::sort(sorted);
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return makeError("row shards must be on distinct ranks");
    if (sharding.kind == ShardingKind::TableRowWise &&
        topology.nodeOf(sorted.front()) != topology.nodeOf(sorted.back()))
      return makeError(llvm::formatv("table_row_wise shards must share one "
                                     "node ({0} ranks per node)",
                                     topology.ranksPerNode));
    break;
  }
  case ShardingKind::ColumnWise: {
    int64_t next = 0;
    for (size_t i = 0; i < shards.size(); ++i) {
      if (shards[i].rowOffset != 0 || shards[i].rows != table.rows)
        return makeError(llvm::formatv("column shard #{0} does not take full "
                                       "columns",
                                       i));
      if (shards[i].colOffset != next)
        return makeError(llvm::formatv("column shard #{0} starts at column "
                                       "{1}, expected {2}",
                                       i, shards[i].colOffset, next));
      if (shards[i].cols % kColumnBlock != 0)
        return makeError(llvm::formatv("column shard #{0} is {1} columns "
                                       "wide, not a multiple of {2}",
                                       i, shards[i].cols, kColumnBlock));
      next += shards[i].cols;
    }
    if (next != table.dim)
      return makeError(llvm::formatv("column shards cover {0} of {1} columns",
                                     next, table.dim));
    break;
  }
  case ShardingKind::DataParallel:
    break;
  }
  return llvm::Error::success();
}
