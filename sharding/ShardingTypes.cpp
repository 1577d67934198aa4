//===- ShardingTypes.cpp - names and helpers of the planner's data model --===//

#include "sharding/ShardingTypes.h"
#include "llvm/ADT/StringSwitch.h"
#include <algorithm>

using namespace ember::sharding;
using llvm::StringRef;

StringRef ember::sharding::shardingKindName(ShardingKind kind) {
  switch (kind) {
  case ShardingKind::TableWise:
    return "table_wise";
  case ShardingKind::RowWise:
    return "row_wise";
  case ShardingKind::ColumnWise:
    return "column_wise";
  case ShardingKind::TableRowWise:
    return "table_row_wise";
  case ShardingKind::DataParallel:
    return "data_parallel";
  }
  return "unknown";
}

std::optional<ShardingKind> ember::sharding::parseShardingKind(StringRef name) {
  return llvm::StringSwitch<std::optional<ShardingKind>>(name)
      .Case("table_wise", ShardingKind::TableWise)
      .Case("row_wise", ShardingKind::RowWise)
      .Case("column_wise", ShardingKind::ColumnWise)
      .Case("table_row_wise", ShardingKind::TableRowWise)
      .Case("data_parallel", ShardingKind::DataParallel)
      .Default(std::nullopt);
}

StringRef ember::sharding::computeKernelName(ComputeKernel kernel) {
  switch (kernel) {
  case ComputeKernel::Fused:
    return "fused";
  case ComputeKernel::FusedUvmCaching:
    return "fused_uvm_caching";
  case ComputeKernel::FusedUvm:
    return "fused_uvm";
  case ComputeKernel::Dense:
    return "dense";
  }
  return "unknown";
}

std::optional<ComputeKernel>
ember::sharding::parseComputeKernel(StringRef name) {
  return llvm::StringSwitch<std::optional<ComputeKernel>>(name)
      .Case("fused", ComputeKernel::Fused)
      .Case("fused_uvm_caching", ComputeKernel::FusedUvmCaching)
      .Case("fused_uvm", ComputeKernel::FusedUvm)
      .Case("dense", ComputeKernel::Dense)
      .Default(std::nullopt);
}

StringRef ember::sharding::poolingKindName(PoolingKind pooling) {
  switch (pooling) {
  case PoolingKind::Sum:
    return "sum";
  case PoolingKind::Mean:
    return "mean";
  case PoolingKind::Max:
    return "max";
  }
  return "unknown";
}

StringRef ember::sharding::optimizerName(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::None:
    return "none";
  case Optimizer::Sgd:
    return "sgd";
  case Optimizer::RowWiseAdagrad:
    return "rowwise_adagrad";
  case Optimizer::Adagrad:
    return "adagrad";
  case Optimizer::Adam:
    return "adam";
  }
  return "unknown";
}

std::optional<Optimizer> ember::sharding::parseOptimizer(StringRef name) {
  return llvm::StringSwitch<std::optional<Optimizer>>(name)
      .Case("none", Optimizer::None)
      .Case("sgd", Optimizer::Sgd)
      .Case("rowwise_adagrad", Optimizer::RowWiseAdagrad)
      .Case("adagrad", Optimizer::Adagrad)
      .Case("adam", Optimizer::Adam)
      .Default(std::nullopt);
}

int64_t ember::sharding::storedRowBytes(TableFormat format, int64_t columns) {
  switch (format) {
  case TableFormat::F32:
    return 4 * columns;
  case TableFormat::F16:
  case TableFormat::BF16:
    return 2 * columns;
  case TableFormat::Int8RowWise:
    return columns + 8;
  case TableFormat::Int4RowWise:
    return (columns + 1) / 2 + 8;
  }
  return 4 * columns;
}

std::vector<int64_t> TableSharding::ranks() const {
  if (kind == ShardingKind::DataParallel)
    return replicaRanks;
  std::vector<int64_t> result;
  result.reserve(shards.size());
  for (const Shard &shard : shards)
    result.push_back(shard.rank);
  return result;
}

CostParts &CostParts::operator+=(const CostParts &other) {
  lookup += other.lookup;
  inputDist += other.inputDist;
  outputDist += other.outputDist;
  backward += other.backward;
  return *this;
}

CostParts &CostParts::operator-=(const CostParts &other) {
  lookup -= other.lookup;
  inputDist -= other.inputDist;
  outputDist -= other.outputDist;
  backward -= other.backward;
  return *this;
}

StorageParts &StorageParts::operator+=(const StorageParts &other) {
  weights += other.weights;
  optimizerState += other.optimizerState;
  inputBuffers += other.inputBuffers;
  outputBuffers += other.outputBuffers;
  return *this;
}

StorageParts &StorageParts::operator-=(const StorageParts &other) {
  weights -= other.weights;
  optimizerState -= other.optimizerState;
  inputBuffers -= other.inputBuffers;
  outputBuffers -= other.outputBuffers;
  return *this;
}

double ShardingPlan::maxRankCost() const {
  double result = 0;
  for (const RankLoad &rank : ranks)
    result = std::max(result, rank.cost.total());
  return result;
}

double ShardingPlan::collectiveStepCost() const {
  CostParts busiest;
  for (const RankLoad &rank : ranks) {
    busiest.lookup = std::max(busiest.lookup, rank.cost.lookup);
    busiest.inputDist = std::max(busiest.inputDist, rank.cost.inputDist);
    busiest.outputDist = std::max(busiest.outputDist, rank.cost.outputDist);
    busiest.backward = std::max(busiest.backward, rank.cost.backward);
  }
  return busiest.total();
}

double ShardingPlan::totalCost() const {
  double result = 0;
  for (const RankLoad &rank : ranks)
    result += rank.cost.total();
  return result;
}
