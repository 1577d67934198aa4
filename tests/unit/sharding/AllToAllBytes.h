//===- AllToAllBytes.h - the benchmark's all-to-all bytes, per rank -------===//
//
// The side-by-side benchmark's yardstick of all-to-all bytes, recomputed
// from a plan independently of the planner (tests only).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_SHARDING_ALLTOALLBYTES_H
#define EMBER_TESTS_SHARDING_ALLTOALLBYTES_H

#include "sharding/ShardingTypes.h"
#include <algorithm>
#include <vector>

namespace ember::sharding {

// The benchmark's yardstick of all-to-all bytes (bench/planner_vs_torchrec.py,
// docs/sharding.md), per rank: the larger of the bytes it sends and
// receives in the input and output distributions together; with
// `acrossNodesOnly`, of those the bytes that cross nodes.
inline std::vector<double> allToAllBytes(const ShardingPlan &plan,
                                         const std::vector<TableSpec> &tables,
                                         int64_t batch,
                                         bool acrossNodesOnly = false) {
  int64_t world = plan.topology.worldSize;
  double w = static_cast<double>(world), b = static_cast<double>(batch);
  std::vector<double> sent(world, 0), received(world, 0);
  int64_t perNode = plan.topology.ranksPerNode;
  auto send = [&](int64_t from, int64_t to, double bytes) {
    if (acrossNodesOnly && from / perNode == to / perNode)
      return;
    sent[from] += bytes;
    received[to] += bytes;
  };
  for (size_t t = 0; t < tables.size(); ++t) {
    const TableSharding &sharding = plan.tables[t];
    if (sharding.kind == ShardingKind::DataParallel)
      continue;
    const TableSpec &table = tables[t];
    double ids = 0;
    for (const FeatureSpec &feature : table.features)
      ids += feature.poolingFactor;
    double features = static_cast<double>(table.features.size());
    bool rows = sharding.kind == ShardingKind::RowWise ||
                sharding.kind == ShardingKind::TableRowWise;
    int64_t n = sharding.shards.size();
    for (int64_t i = 0; i < n; ++i) {
      const Shard &shard = sharding.shards[i];
      double rho = rows ? static_cast<double>(shard.rows) /
                              static_cast<double>(table.rows)
                        : 1.0;
      double in = b * (ids * rho * 8 + features * 4);
      for (int64_t q = 0; q < world; ++q)
        if (q != shard.rank)
          send(q, shard.rank, in);
      if (sharding.kind == ShardingKind::TableRowWise && n > 1) {
        double part = b * w / static_cast<double>(n) * features *
                      static_cast<double>(table.dim) * 4;
        for (const Shard &peer : sharding.shards)
          if (peer.rank != shard.rank)
            send(shard.rank, peer.rank, part);
        for (int64_t q = i; q < world; q += n)
          if (q != shard.rank)
            send(shard.rank, q, b * features * table.dim * 4);
        continue;
      }
      double out = b * features *
                   static_cast<double>(sharding.kind == ShardingKind::RowWise
                                           ? table.dim
                                           : shard.cols) *
                   4;
      for (int64_t q = 0; q < world; ++q)
        if (q != shard.rank)
          send(shard.rank, q, out);
    }
  }
  std::vector<double> bytes(world);
  for (int64_t q = 0; q < world; ++q)
    bytes[q] = std::max(sent[q], received[q]);
  return bytes;
}

} // namespace ember::sharding

#endif // EMBER_TESTS_SHARDING_ALLTOALLBYTES_H
