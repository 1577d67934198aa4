//===- PlannerCandidates.cpp - the shardings each table may take ----------===//
//
// Step 1 of the search: every table gets the shardings it may take (kind x
// compute kernel x shard geometry), each with its per-shard cost and memory
// from the cost model; forced kinds, pinned ranks and imported shardings
// narrow them to what the user asked for. Also the rules of each kind
// (isKindAllowed) and the check of a given sharding (verifySharding).
//
//===----------------------------------------------------------------------===//

#include "sharding/PlannerInternal.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <limits>

using namespace ember::sharding;
using namespace ember::sharding::detail;

namespace {

/// Auto plans replicate (data_parallel) a table only when one replica takes
/// at most this fraction of a rank's usable device memory (and when it pays
/// for its bytes: selectReplicas).
constexpr double kReplicaMaxFraction = 0.01;
/// Auto column-wise shards are at least this many columns wide.
constexpr int64_t kAutoMinColumnWidth = 16;
/// Column-wise shard widths are multiples of this.
constexpr int64_t kColumnBlock = 4;

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

} // namespace

void Planner::finishOption(const TableSpec &table, Option &option) {
  option.units.clear();
  option.unitOfShard.clear();
  option.maxShardDeviceBytes = 0;
  option.shardsNeverLowerCost = true;
  int64_t numShards = option.shards.size();
  option.unitOfShard.reserve(numShards);
  // A shard's load depends on its size only: one per distinct size, the
  // sizes kept beside them to find it again.
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (const Shard &shard : option.shards) {
    std::pair<int64_t, int64_t> size{shard.rows, shard.cols};
    size_t index = sizes.size();
    if (!sizes.empty() && sizes.back() == size)
      index = sizes.size() - 1;
    else
      index = std::find(sizes.begin(), sizes.end(), size) - sizes.begin();
    if (index == sizes.size()) {
      UnitLoad unit;
      unit.load = option.kind == ShardingKind::DataParallel
                      ? model.replicaLoad(table, numShards)
                      : model.shardLoad(table, option.kind, option.kernel,
                                        shard, numShards);
      unit.cost = unit.load.cost.total();
      unit.exchange = exchangesOf(unit.load.exchange);
      unit.device = unit.load.device.total();
      unit.host = unit.load.host.total();
      double exchanged = 0;
      for (double part : unit.exchange)
        exchanged += part;
      if (unit.cost < exchanged)
        option.shardsNeverLowerCost = false;
      option.maxShardDeviceBytes =
          std::max(option.maxShardDeviceBytes, unit.device);
      option.units.push_back(unit);
      sizes.push_back(size);
    }
    option.unitOfShard.push_back(static_cast<uint32_t>(index));
  }
  // The totals, shard by shard in shard order (the same sums to the last
  // bit whatever the number of distinct loads), from each load's terms.
  struct Terms {
    double total, everyRank;
    Exchanges requested;
  };
  std::vector<Terms> terms;
  for (const UnitLoad &unit : option.units) {
    double everyRank = unit.load.everyRank.total();
    terms.push_back({unit.cost + everyRank * static_cast<double>(
                                                 options.topology.worldSize),
                     everyRank, exchangesOf(unit.load.everyRank)});
  }
  double totalCost = 0, everyRankCost = 0;
  Exchanges everyRankParts{};
  int64_t deviceBytes = 0, hostBytes = 0;
  for (uint32_t index : option.unitOfShard) {
    const Terms &term = terms[index];
    totalCost += term.total;
    everyRankCost += term.everyRank;
    for (int c = 0; c < kExchanges; ++c)
      everyRankParts[c] += term.requested[c];
    deviceBytes += option.units[index].device;
    hostBytes += option.units[index].host;
  }
  option.totalCost = totalCost;
  option.everyRankCost = everyRankCost;
  option.everyRankParts = everyRankParts;
  option.deviceBytes = deviceBytes;
  option.hostBytes = hostBytes;
  if (option.kind == ShardingKind::DataParallel && !option.units.empty())
    option.replicaBytes = option.units.front().device;
  // Distinct ranks: in increasing order (every auto option), else sorted.
  auto increasing = [&] {
    for (int64_t i = 1; i < numShards; ++i)
      if (option.shards[i - 1].rank >= option.shards[i].rank)
        return false;
    return true;
  };
  if (increasing()) {
    option.shardsOnDistinctRanks = true;
  } else {
    std::vector<int64_t> ranks;
    for (const Shard &shard : option.shards)
      ranks.push_back(shard.rank);
    llvm::sort(ranks);
    option.shardsOnDistinctRanks =
        std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end();
  }
}

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
      layouts.push_back({Placement::Fixed, std::move(shards)});
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
    layouts.push_back({Placement::Fixed, std::move(shards)});
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
    layouts.push_back(
        {isPinned ? Placement::Fixed : Placement::Node, std::move(shards)});
    break;
  }
  case ShardingKind::DataParallel: {
    std::vector<Shard> shards;
    if (!pinned.empty()) {
      llvm::SmallVector<int64_t, 8> ranks(pinned.begin(), pinned.end());
      llvm::sort(ranks);
      for (int64_t rank : ranks)
        shards.push_back(whole(rank));
    } else {
      shards.reserve(topo.worldSize);
      for (int64_t rank = 0; rank < topo.worldSize; ++rank)
        shards.push_back(whole(rank));
    }
    layouts.push_back({Placement::Fixed, std::move(shards)});
    break;
  }
  }
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (auto &[placement, shards] : layouts) {
      Option option;
      option.kind = kind;
      option.kernel = kernels[k];
      option.placement = placement;
      // The last kernel takes the layout's shards, the others a copy.
      if (k + 1 == kernels.size())
        option.shards = std::move(shards);
      else
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
  // Replicas the user fixed (imported, pinned or forced data_parallel) use
  // the replica budget first: auto replicas only get what they leave.
  fixedReplicaBytes = 0;
  for (const TableOptions &table : tableOptions) {
    if (table.options.empty() ||
        !llvm::all_of(table.options, [](const Option &option) {
          return option.kind == ShardingKind::DataParallel && !option.budgeted;
        }))
      continue;
    int64_t smallest = table.options.front().replicaBytes;
    for (const Option &option : table.options)
      smallest = std::min(smallest, option.replicaBytes);
    fixedReplicaBytes += static_cast<double>(smallest);
  }
  if (errors.empty()) {
    if (keepEveryReplica)
      replicaBudget = std::numeric_limits<double>::infinity();
    else
      selectReplicas();
    return llvm::Error::success();
  }
  return makeError(llvm::join(errors, "\n"));
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

namespace {

/// One table's cheapest device-resident sharded option as the device memory
/// a rank has for shards shrinks: `steps[k]` is the least total cost of its
/// fused options whose largest shard takes at most `bytes[k]` (ascending),
/// so while a rank has `room` bytes for shards the table costs `steps[k]`
/// for the largest `bytes[k] <= room` (none: it no longer fits on device).
struct Staircase {
  std::vector<int64_t> bytes;
  std::vector<double> steps;
  /// Of the options that still fit: how many.
  size_t fitting = 0;
  double cost() const { return fitting ? steps[fitting - 1] : 0.0; }
};

} // namespace

void Planner::selectReplicas() {
  // Replicas take their bytes on every rank, so the device memory a rank
  // has for shards is what the reservation, the baseline and the replicas
  // leave. A replica is worth its bytes when what it saves (its table's
  // cheapest sharded option's total cost minus the replicas' total cost,
  // which in training includes the gradient all-reduce) beats what those
  // bytes buy the sharded tables: each table's cheapest option that still
  // fits beside the replicas (a large table that no longer fits whole must
  // split, a column split must get finer), summed. Candidates go by benefit
  // per byte, largest first; one is taken when it saves more than the
  // options it takes from the others cost, and the sharded tables' device
  // memory still fits the rest with the packing margin. Host memory is never
  // traded for a replica: one that would leave a table no device-resident
  // option is not taken.
  const Topology &topo = options.topology;
  double usable = static_cast<double>(topo.usableDeviceMemory());
  double base = static_cast<double>(model.baseline(specs).device.total());
  double world = static_cast<double>(topo.worldSize);
  size_t numTables = tableOptions.size();

  struct Candidate {
    size_t table;
    double perByte;
    int64_t bytes;
    double replicaCost;
    /// The cheapest host-served sharded option's cost (-1: none).
    double uvmCost;
  };
  std::vector<Candidate> candidates;
  std::vector<Staircase> stairs(numTables);
  // Device bytes the table's shards need at least (all ranks together) and
  // whether the table is sharded whatever the budget (no auto replica).
  std::vector<double> leastBytes(numTables, 0);
  std::vector<char> sharded(numTables, 0);
  // What device memory is worth where it is short: the least cost per byte
  // at which a table could be served from host memory instead (-1: none).
  double spillPrice = -1;
  for (size_t t = 0; t < numTables; ++t) {
    const std::vector<Option> &opts = tableOptions[t].options;
    const Option *replica = nullptr;
    double shardedUvm = -1, least = -1, leastUvm = -1;
    std::vector<std::pair<int64_t, double>> fused;
    for (const Option &option : opts) {
      if (option.budgeted) {
        replica = &option;
        continue;
      }
      if (option.kind == ShardingKind::DataParallel)
        continue;
      double bytes = static_cast<double>(option.deviceBytes);
      if (option.kernel == ComputeKernel::Fused) {
        fused.push_back({option.maxShardDeviceBytes, option.totalCost});
        least = least < 0 ? bytes : std::min(least, bytes);
      } else {
        if (shardedUvm < 0 || option.totalCost < shardedUvm)
          shardedUvm = option.totalCost;
        leastUvm = leastUvm < 0 ? bytes : std::min(leastUvm, bytes);
      }
    }
    if (least >= 0 && leastUvm >= 0 && leastUvm < least &&
        !tableOptions[t].userFixed && shardedUvm >= 0) {
      double cheapestFused = fused.front().second;
      for (const auto &entry : fused)
        cheapestFused = std::min(cheapestFused, entry.second);
      double price =
          std::max(0.0, (shardedUvm - cheapestFused) / (least - leastUvm));
      spillPrice = spillPrice < 0 ? price : std::min(spillPrice, price);
    }
    // A table with no sharded option is replicated whatever the budget
    // (imported, pinned or forced data_parallel: fixedReplicaBytes).
    sharded[t] = least >= 0 || leastUvm >= 0;
    leastBytes[t] = least >= 0 ? least : std::max(leastUvm, 0.0);
    llvm::sort(fused);
    Staircase &stair = stairs[t];
    for (auto [bytes, cost] : fused) {
      stair.bytes.push_back(bytes);
      stair.steps.push_back(
          stair.steps.empty() ? cost : std::min(stair.steps.back(), cost));
    }
    stair.fitting = stair.bytes.size();
    if (!replica)
      continue;
    double cheapest = stair.steps.empty() ? shardedUvm : stair.steps.back();
    double benefit =
        cheapest < 0 ? replica->totalCost : cheapest - replica->totalCost;
    candidates.push_back(
        {t,
         benefit /
             static_cast<double>(std::max<int64_t>(replica->replicaBytes, 1)),
         replica->replicaBytes, replica->totalCost, shardedUvm});
  }
  stableSort(candidates, [](const Candidate &a, const Candidate &b) {
    return a.perByte > b.perByte;
  });

  // Every fused option of a sharded table, by the size of its largest
  // shard (largest first): as the room for shards shrinks below an
  // option's size, the option goes.
  struct Drop {
    int64_t bytes;
    size_t table;
  };
  std::vector<Drop> drops;
  double room = usable - base - fixedReplicaBytes;
  double demand = 0;
  for (size_t t = 0; t < numTables; ++t) {
    if (!sharded[t])
      continue;
    demand += leastBytes[t];
    Staircase &stair = stairs[t];
    while (stair.fitting > 0 &&
           static_cast<double>(stair.bytes[stair.fitting - 1]) > room)
      --stair.fitting;
    for (size_t k = 0; k < stair.fitting; ++k)
      drops.push_back({stair.bytes[k], t});
  }
  llvm::sort(drops, [](const Drop &a, const Drop &b) {
    return a.bytes > b.bytes || (a.bytes == b.bytes && a.table < b.table);
  });

  // In that order, every candidate whose replica the memory allows is
  // taken for now, and what the replicas taken so far save, net of what
  // they cost the sharded tables, is kept; the replicas up to where that is
  // largest stay. (Not one at a time: the replica that makes a large table
  // split may save less than the split costs, where the replicas after it
  // together save more.)
  // With roomForLargestWhole: replicas sit on every rank, the one that
  // holds the largest table too, and leave it room for that table whole
  // (its table-wise device-resident option, when that fits a rank at all).
  double largestWhole = 0;
  if (roomForLargestWhole)
    for (const TableOptions &table : tableOptions)
      for (const Option &option : table.options)
        if (option.kind == ShardingKind::TableWise &&
            option.kernel == ComputeKernel::Fused && !option.shards.empty()) {
          double bytes = static_cast<double>(option.unitDevice(0));
          if (base + bytes <= usable)
            largestWhole = std::max(largestWhole, bytes);
        }

  size_t next = 0; // drops[0, next) have gone
  double net = 0, bestNet = 0;
  std::vector<size_t> taken;
  size_t keepCount = 0;
  // Scratch: how many options of a table would still fit after a replica.
  std::vector<size_t> fittingAfter(numTables, 0);
  std::vector<char> seen(numTables, 0);
  std::vector<size_t> changed;
  for (const Candidate &candidate : candidates) {
    size_t table = candidate.table;
    double bytes = static_cast<double>(candidate.bytes);
    double after = room - bytes;
    // The sharded tables' device memory beyond what the room holds with
    // the margin: none, or (when device memory is short already) no more
    // than before (a small table's replicas may take less memory than its
    // shard with its buffers for the global batch).
    double over = demand - kPackingMargin * world * room;
    double overAfter =
        demand - leastBytes[table] - kPackingMargin * world * after;
    // Where device memory is short already (some table goes to host
    // memory whatever the replicas do), a replica that needs more of it
    // than its table's shards pays for the bytes it sends there at the
    // least cost per byte; where memory is not short, replicas never make
    // it so.
    double spilled = 0;
    if (over > 0 && overAfter > over && spillPrice >= 0)
      spilled = (overAfter - over) * spillPrice;
    else if (overAfter > std::max(0.0, over))
      spilled = -1;
    bool fits = candidate.perByte > 0 && after >= largestWhole && spilled >= 0;
    // The options of the sharded tables that no longer fit once the room
    // shrinks by the replica (the candidate's own table leaves them).
    size_t end = next;
    changed.clear();
    for (; fits && end < drops.size() &&
           static_cast<double>(drops[end].bytes) > after;
         ++end) {
      size_t t = drops[end].table;
      if (!sharded[t] || t == table)
        continue;
      if (!seen[t]) {
        seen[t] = 1;
        fittingAfter[t] = stairs[t].fitting;
        changed.push_back(t);
      }
      --fittingAfter[t];
    }
    // What the sharded tables' cheapest options cost more then.
    double lost = 0;
    for (size_t t : changed) {
      if (fittingAfter[t] == 0) {
        fits = false; // it would leave the table no device-resident option
        break;
      }
      lost += stairs[t].steps[fittingAfter[t] - 1] - stairs[t].cost();
    }
    lost += std::max(0.0, spilled);
    if (fits) {
      const Staircase &own = stairs[table];
      double shardedCost = own.fitting              ? own.cost()
                           : candidate.uvmCost >= 0 ? candidate.uvmCost
                                                    : 2 * candidate.replicaCost;
      net += shardedCost - candidate.replicaCost - lost;
      for (size_t t : changed)
        stairs[t].fitting = fittingAfter[t];
      next = end;
      room = after;
      demand -= leastBytes[table];
      sharded[table] = 0;
      taken.push_back(table);
      if (net > bestNet) {
        bestNet = net;
        keepCount = taken.size();
      }
    }
    for (size_t t : changed)
      seen[t] = 0;
  }
  std::vector<char> keep(numTables, 0);
  double replicated = 0;
  for (size_t i = 0; i < keepCount; ++i) {
    keep[taken[i]] = 1;
    for (const Option &option : tableOptions[taken[i]].options)
      if (option.budgeted)
        replicated += static_cast<double>(option.replicaBytes);
  }
  for (const Candidate &candidate : candidates) {
    if (keep[candidate.table])
      continue;
    std::vector<Option> &opts = tableOptions[candidate.table].options;
    // A table whose only choice is the replica keeps it (the seeds then
    // report it when the budget is gone).
    if (llvm::all_of(opts, [](const Option &o) { return o.budgeted; }))
      continue;
    opts.erase(std::remove_if(opts.begin(), opts.end(),
                              [](const Option &o) { return o.budgeted; }),
               opts.end());
  }
  replicaBudget = fixedReplicaBytes + replicated;
}
