//===- bench_planner.cpp - sharding planner speed and plan quality --------===//
//
// Plans a synthetic catalogue (default: 1,000 tables for 512 ranks, 8 per
// node; rows log-uniform in [1e3, 1e8], dims 16..256, pooling factors 1..100,
// a fifth mean/max pooled) with the default H100 topology, and prints the
// time of the search and the score (max per-rank cost) of one greedy pass
// and of the full search. docs/performance.md records the figures.
//
//   bench_planner [TABLES] [RANKS] [REPEATS] [inference|training|training-lean]
//
// (default inference; the objective is ember-compile --objective's).
//
//===----------------------------------------------------------------------===//

#include "sharding/Planner.h"
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>

using namespace ember::sharding;

namespace {

std::vector<TableSpec> catalogue(int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> logRows(3.0, 8.0);
  std::uniform_int_distribution<int> dimIndex(0, 4);
  std::uniform_real_distribution<double> factor(1.0, 100.0);
  std::uniform_int_distribution<int> poolingIndex(0, 9);
  std::uniform_int_distribution<int> featureCount(1, 3);
  const int64_t dims[] = {16, 32, 64, 128, 256};
  std::vector<TableSpec> tables;
  for (int i = 0; i < count; ++i) {
    TableSpec table;
    table.name = "table_" + std::to_string(i);
    table.rows = static_cast<int64_t>(std::pow(10.0, logRows(rng)));
    table.dim = dims[dimIndex(rng)];
    int p = poolingIndex(rng);
    table.pooling = p == 0   ? PoolingKind::Mean
                    : p == 1 ? PoolingKind::Max
                             : PoolingKind::Sum;
    int features = featureCount(rng);
    for (int f = 0; f < features; ++f)
      table.features.push_back(
          {table.name + "_f" + std::to_string(f), factor(rng)});
    tables.push_back(std::move(table));
  }
  return tables;
}

} // namespace

int main(int argc, char **argv) {
  int numTables = argc > 1 ? std::atoi(argv[1]) : 1000;
  int numRanks = argc > 2 ? std::atoi(argv[2]) : 512;
  int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  std::string objective = argc > 4 ? argv[4] : "inference";
  if (numTables < 1 || numRanks < 1 || repeats < 1 ||
      (objective != "inference" && objective != "training" &&
       objective != "training-lean")) {
    std::fprintf(stderr, "usage: bench_planner [TABLES] [RANKS] [REPEATS] "
                         "[inference|training|training-lean]\n");
    return 2;
  }
  std::vector<TableSpec> tables = catalogue(numTables, 42);
  PlannerOptions options;
  options.topology.worldSize = numRanks;
  options.topology.ranksPerNode = 8;
  options.batchSizePerRank = 512;
  options.includeBackward = objective != "inference";
  options.leanTraffic = objective == "training-lean";

  for (SearchMode mode : {SearchMode::Greedy, SearchMode::Local}) {
    options.search = mode;
    double best = 1e30, bestCpu = 1e30;
    ShardingPlan plan;
    for (int r = 0; r < repeats; ++r) {
      auto start = std::chrono::steady_clock::now();
      std::clock_t cpuStart = std::clock();
      llvm::Expected<ShardingPlan> result = planSharding(tables, options);
      double cpu =
          static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC;
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      bestCpu = std::min(bestCpu, cpu);
      if (!result) {
        std::fprintf(stderr, "planning failed: %s\n",
                     llvm::toString(result.takeError()).c_str());
        return 1;
      }
      if (result->tables.size() != tables.size()) {
        std::fprintf(stderr, "a table was dropped\n");
        return 1;
      }
      best = std::min(best, seconds);
      plan = std::move(*result);
    }
    int counts[kNumShardingKinds] = {};
    for (const TableSharding &sharding : plan.tables)
      ++counts[static_cast<int>(sharding.kind)];
    std::printf("%-6s %d tables, %d ranks: %.3f s wall, %.3f s CPU (best of "
                "%d), max rank cost %.1f us, collective step %.1f us, sum "
                "%.1f us; tw %d rw %d cw %d twrw %d dp %d\n",
                mode == SearchMode::Greedy ? "greedy" : "search", numTables,
                numRanks, best, bestCpu, repeats, plan.maxRankCost() * 1e6,
                plan.collectiveStepCost() * 1e6, plan.totalCost() * 1e6,
                counts[0], counts[1], counts[2], counts[3], counts[4]);
  }
  return 0;
}
