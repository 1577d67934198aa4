//===- CostModel.cpp - per-shard cost and storage estimates ---------------===//
//
// The formulas are written down in docs/sharding.md; keep the two in step.
//
//===----------------------------------------------------------------------===//

#include "sharding/CostModel.h"
#include <algorithm>

using namespace ember::sharding;

/// Bytes as an integer, saturated far below the int64 limit (the models'
/// products of batch, ids and widths are doubles).
static int64_t toBytes(double bytes) {
  constexpr double kMax = 4.0e18;
  return bytes >= kMax ? static_cast<int64_t>(kMax)
                       : static_cast<int64_t>(bytes);
}

ShardLoad &ShardLoad::operator+=(const ShardLoad &other) {
  cost += other.cost;
  everyRank += other.everyRank;
  exchange += other.exchange;
  device += other.device;
  host += other.host;
  return *this;
}

ShardLoad &ShardLoad::operator-=(const ShardLoad &other) {
  cost -= other.cost;
  everyRank -= other.everyRank;
  exchange -= other.exchange;
  device -= other.device;
  host -= other.host;
  return *this;
}

double ember::sharding::idsPerSample(const TableSpec &table) {
  double ids = 0;
  for (const FeatureSpec &feature : table.features)
    ids += feature.poolingFactor;
  return ids;
}

double ember::sharding::outputRowsPerSample(const TableSpec &table) {
  return table.sequence ? idsPerSample(table)
                        : static_cast<double>(table.features.size());
}

CostParts ember::sharding::rankCollectiveParts(const CostParts &heldCost,
                                               const CostParts &heldExchange,
                                               const CostParts &requested) {
  auto duplex = [](double held, double exchange, double requested) {
    return held - exchange + std::max(exchange, requested);
  };
  CostParts parts;
  parts.lookup = heldCost.lookup;
  parts.inputDist =
      duplex(heldCost.inputDist, heldExchange.inputDist, requested.inputDist);
  parts.outputDist = duplex(heldCost.outputDist, heldExchange.outputDist,
                            requested.outputDist);
  parts.backward =
      duplex(heldCost.backward, heldExchange.backward, requested.backward);
  return parts;
}

double CostModel::allToAllSeconds(double bytes) const {
  const Topology &topo = options.topology;
  int64_t world = std::max<int64_t>(topo.worldSize, 1);
  int64_t onNode = std::min(topo.ranksPerNode, world);
  double nodePeers = static_cast<double>(onNode - 1);
  double remotePeers = static_cast<double>(world - onNode);
  double share = bytes / static_cast<double>(world);
  return share * (nodePeers / topo.intraNodeBandwidth +
                  remotePeers / topo.interNodeBandwidth);
}

double CostModel::lookupSeconds(const TableSpec &table, ComputeKernel kernel,
                                double idsLookedUp, int64_t cols,
                                double outputBytes) const {
  const Topology &topo = options.topology;
  double deviceRate = topo.deviceBandwidth * topo.lookupEfficiency;
  double readBytes =
      idsLookedUp * static_cast<double>(storedRowBytes(table.format, cols));
  double writeSeconds = outputBytes / deviceRate;
  switch (kernel) {
  case ComputeKernel::Fused:
  case ComputeKernel::Dense:
    return readBytes / deviceRate + writeSeconds;
  case ComputeKernel::FusedUvmCaching: {
    double hit = options.uvmCacheLoadFactor;
    return readBytes * hit / deviceRate +
           readBytes * (1 - hit) / topo.hostToDeviceBandwidth + writeSeconds;
  }
  case ComputeKernel::FusedUvm:
    return readBytes / topo.hostToDeviceBandwidth + writeSeconds;
  }
  return 0;
}

StorageParts CostModel::weightStorage(const TableSpec &table, int64_t rows,
                                      int64_t cols) const {
  StorageParts storage;
  storage.weights = rows * storedRowBytes(table.format, cols);
  switch (options.optimizer) {
  case Optimizer::None:
  case Optimizer::Sgd:
    break;
  case Optimizer::RowWiseAdagrad:
    storage.optimizerState = rows * 4;
    break;
  case Optimizer::Adagrad:
    storage.optimizerState = rows * cols * 4;
    break;
  case Optimizer::Adam:
    storage.optimizerState = rows * cols * 8;
    break;
  }
  return storage;
}

ShardLoad CostModel::shardLoad(const TableSpec &table, ShardingKind kind,
                               ComputeKernel kernel, const Shard &geometry,
                               int64_t numShards) const {
  const Topology &topo = options.topology;
  double globalBatch =
      static_cast<double>(options.batchSizePerRank) *
      static_cast<double>(std::max<int64_t>(topo.worldSize, 1));
  double numFeatures = static_cast<double>(table.features.size());
  // Row-sharded tables see the ids of their row block only (ids assumed
  // uniform over the rows); table- and column-wise shards see every id.
  bool rowSharded =
      kind == ShardingKind::RowWise || kind == ShardingKind::TableRowWise;
  double rowFraction =
      rowSharded && table.rows > 0
          ? static_cast<double>(geometry.rows) / static_cast<double>(table.rows)
          : 1.0;
  double ids = globalBatch * idsPerSample(table) * rowFraction;
  double idBytes =
      static_cast<double>(kIdBytes + (table.weighted ? kWeightBytes : 0));
  double inputBytes = ids * idBytes + globalBatch * numFeatures * kLengthBytes;
  // Pooled: one row per bag; sequence: one per id the shard looked up.
  double outputRows =
      table.sequence ? ids : globalBatch * outputRowsPerSample(table);
  double outputBytes =
      outputRows * static_cast<double>(geometry.cols) * kOutputBytes;

  ShardLoad load;
  load.cost.lookup =
      lookupSeconds(table, kernel, ids, geometry.cols, outputBytes);
  load.cost.inputDist = allToAllSeconds(inputBytes);
  load.exchange.inputDist = load.cost.inputDist;
  // The requester's side, on every rank: its 1/W of the ids sent to this
  // shard and of the rows that come back (a table-row-wise table's rows
  // come back once, reduced: 1/n of them from each shard).
  double world = static_cast<double>(std::max<int64_t>(topo.worldSize, 1));
  load.everyRank.inputDist = allToAllSeconds(inputBytes) / world;
  if (kind == ShardingKind::TableRowWise && numShards > 1 && !table.sequence) {
    // Reduce-scatter inside the node (every shard sends and receives as
    // much: symmetric, outside the duplex max), then the reduced blocks go
    // to their owners.
    double n = static_cast<double>(numShards);
    load.exchange.outputDist = allToAllSeconds(outputBytes / n);
    load.cost.outputDist = outputBytes * (n - 1) / n / topo.intraNodeBandwidth +
                           load.exchange.outputDist;
    load.everyRank.outputDist = load.exchange.outputDist / world;
  } else {
    load.cost.outputDist = allToAllSeconds(outputBytes);
    load.exchange.outputDist = load.cost.outputDist;
    load.everyRank.outputDist = load.cost.outputDist / world;
  }
  if (options.includeBackward) {
    // The backward lookup (read the gradients, update the rows) runs at
    // FBGEMM's backward rate; the output's gradients come back the other
    // way round through the same all-to-all.
    load.cost.backward =
        kBackwardLookupRatio * load.cost.lookup + load.cost.outputDist;
    load.exchange.backward = load.exchange.outputDist;
    load.everyRank.backward = load.everyRank.outputDist;
  }

  StorageParts weights = weightStorage(table, geometry.rows, geometry.cols);
  switch (kernel) {
  case ComputeKernel::Fused:
  case ComputeKernel::Dense:
    load.device += weights;
    break;
  case ComputeKernel::FusedUvmCaching:
    load.host += weights;
    load.device.weights = toBytes(static_cast<double>(weights.weights) *
                                  options.uvmCacheLoadFactor);
    break;
  case ComputeKernel::FusedUvm:
    load.host += weights;
    break;
  }
  double depth =
      static_cast<double>(std::max<int64_t>(options.pipelineDepth, 1));
  load.device.inputBuffers = toBytes(inputBytes * depth);
  load.device.outputBuffers = toBytes(outputBytes * depth);
  return load;
}

ShardLoad CostModel::replicaLoad(const TableSpec &table,
                                 int64_t numReplicas) const {
  double batch = static_cast<double>(options.batchSizePerRank);
  double ids = batch * idsPerSample(table);
  double outputBytes = batch * outputRowsPerSample(table) *
                       static_cast<double>(table.dim) * kOutputBytes;
  ShardLoad load;
  // The rank looks up its own batch: no input or output distribution.
  load.cost.lookup =
      lookupSeconds(table, ComputeKernel::Dense, ids, table.dim, outputBytes);
  if (options.includeBackward && numReplicas > 1)
    load.cost.backward = kBackwardLookupRatio * load.cost.lookup +
                         replicaAllReduceSeconds(table, numReplicas);
  load.device += weightStorage(table, table.rows, table.dim);
  return load;
}

double CostModel::replicaAllReduceSeconds(const TableSpec &table,
                                          int64_t numReplicas) const {
  // Hierarchical all-reduce of the table's gradient (NCCL's rings over every
  // GPU's NIC): a reduce-scatter and all-gather inside the node, p replicas
  // each, and an all-reduce of each rank's 1/p across the n nodes.
  const Topology &topo = options.topology;
  double gradientBytes = static_cast<double>(table.rows) *
                         static_cast<double>(table.dim) * kOutputBytes;
  int64_t perNode = std::max<int64_t>(
      1, std::min<int64_t>(topo.ranksPerNode, numReplicas));
  int64_t nodes = (numReplicas + perNode - 1) / perNode;
  double p = static_cast<double>(perNode), n = static_cast<double>(nodes);
  double seconds = 2 * (p - 1) / p * gradientBytes / topo.intraNodeBandwidth;
  if (nodes > 1)
    seconds += 2 * (n - 1) / n * gradientBytes / p / topo.interNodeBandwidth;
  return seconds;
}

ShardLoad CostModel::baseline(llvm::ArrayRef<TableSpec> tables) const {
  double batch = static_cast<double>(options.batchSizePerRank);
  double depth =
      static_cast<double>(std::max<int64_t>(options.pipelineDepth, 1));
  double inputBytes = 0, outputBytes = 0;
  for (const TableSpec &table : tables) {
    double numFeatures = static_cast<double>(table.features.size());
    double idBytes =
        static_cast<double>(kIdBytes + (table.weighted ? kWeightBytes : 0));
    inputBytes +=
        batch * (idsPerSample(table) * idBytes + numFeatures * kLengthBytes);
    outputBytes += batch * outputRowsPerSample(table) *
                   static_cast<double>(table.dim) * kOutputBytes;
  }
  ShardLoad load;
  load.device.inputBuffers = toBytes(inputBytes * depth);
  load.device.outputBuffers = toBytes(outputBytes * depth);
  return load;
}
