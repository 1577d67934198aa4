//===- PlanReport.cpp - readable report of a sharding plan ----------------===//

#include "sharding/PlanReport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace ember::sharding;

namespace {

std::string formatFormat(TableFormat format) {
  switch (format) {
  case TableFormat::F32:
    return "f32";
  case TableFormat::F16:
    return "f16";
  case TableFormat::BF16:
    return "bf16";
  case TableFormat::Int8RowWise:
    return "int8_rowwise";
  case TableFormat::Int4RowWise:
    return "int4_rowwise";
  }
  return "?";
}

std::string mib(int64_t bytes) {
  return llvm::formatv("{0:F1}", static_cast<double>(bytes) / (1024.0 * 1024.0))
      .str();
}

std::string gib(int64_t bytes) {
  return llvm::formatv("{0:F1}",
                       static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0))
      .str();
}

std::string micros(double seconds) {
  return llvm::formatv("{0:F2}", seconds * 1e6).str();
}

std::string rankList(const std::vector<int64_t> &ranks) {
  if (ranks.size() > 8)
    return llvm::formatv("{0} ranks ({1}..{2})", ranks.size(), ranks.front(),
                         ranks.back())
        .str();
  return "[" +
         llvm::join(
             llvm::map_range(ranks,
                             [](int64_t rank) { return std::to_string(rank); }),
             ", ") +
         "]";
}

} // namespace

std::string
ember::sharding::formatPlanReport(const ShardingPlan &plan,
                                  llvm::ArrayRef<TableSpec> tables) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const Topology &topo = plan.topology;
  os << llvm::formatv("Sharding plan: {0} rank(s), {1} per node, batch {2} "
                      "per rank\n",
                      topo.worldSize, topo.ranksPerNode, plan.batchSizePerRank);
  os << llvm::formatv("Score (max per-rank cost): {0} us per batch; sum over "
                      "ranks {1} us\n",
                      micros(plan.maxRankCost()), micros(plan.totalCost()));
  os << llvm::formatv("Memory per rank: {0} GiB of device memory for "
                      "embeddings (of {1} GiB), {2} GiB of host memory\n\n",
                      gib(topo.usableDeviceMemory()),
                      gib(topo.deviceMemoryBytes), gib(topo.hostMemoryBytes));

  os << "Tables:\n";
  os << llvm::formatv("  {0,-24} {1,14} {2,-12} {3,-5} {4,-8} {5,-15} {6,-18} "
                      "{7}\n",
                      "table", "rows x dim", "format", "pool", "ids/sample",
                      "sharding", "kernel", "ranks");
  for (size_t t = 0; t < plan.tables.size() && t < tables.size(); ++t) {
    const TableSpec &table = tables[t];
    const TableSharding &sharding = plan.tables[t];
    double ids = 0;
    for (const FeatureSpec &feature : table.features)
      ids += feature.poolingFactor;
    os << llvm::formatv(
        "  {0,-24} {1,14} {2,-12} {3,-5} {4,-8:F1} {5,-15} {6,-18} {7}\n",
        table.name,
        std::to_string(table.rows) + "x" + std::to_string(table.dim),
        formatFormat(table.format), poolingKindName(table.pooling), ids,
        shardingKindName(sharding.kind), computeKernelName(sharding.kernel),
        rankList(sharding.ranks()));
  }

  os << "\nPer rank (cost in us per batch, memory in MiB):\n";
  os << llvm::formatv("  {0,4} {1,9} {2,9} {3,9} {4,9} {5,9} | {6,10} {7,10} "
                      "{8,9} {9,9} {10,10} {11,6} | {12,10}\n",
                      "rank", "cost", "lookup", "in_dist", "out_dist", "bwd",
                      "weights", "optimizer", "inputs", "outputs", "device",
                      "use%", "host");
  int64_t cap = topo.usableDeviceMemory();
  for (size_t rank = 0; rank < plan.ranks.size(); ++rank) {
    const RankLoad &load = plan.ranks[rank];
    double use = cap > 0 ? 100.0 * static_cast<double>(load.device.total()) /
                               static_cast<double>(cap)
                         : 0;
    os << llvm::formatv(
        "  {0,4} {1,9} {2,9} {3,9} {4,9} {5,9} | {6,10} "
        "{7,10} {8,9} {9,9} {10,10} {11,6:F1} | {12,10}\n",
        rank, micros(load.cost.total()), micros(load.cost.lookup),
        micros(load.cost.inputDist), micros(load.cost.outputDist),
        micros(load.cost.backward), mib(load.device.weights),
        mib(load.device.optimizerState), mib(load.device.inputBuffers),
        mib(load.device.outputBuffers), mib(load.device.total()), use,
        mib(load.host.total()));
  }
  if (!plan.notes.empty()) {
    os << "\nNotes:\n";
    for (const std::string &note : plan.notes)
      os << "  " << note << "\n";
  }
  return text;
}
