//===- ShardingTypes.h - the sharding planner's data model ------*- C++ -*-===//
//
// What the planner reads (tables, topology, options) and what it produces (a
// sharding per table, per-rank cost and memory). Plain C++ plus LLVM Support:
// nothing here depends on MLIR, so the planner is unit-testable on its own.
// docs/sharding.md describes the model.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_SHARDING_SHARDINGTYPES_H
#define EMBER_SHARDING_SHARDINGTYPES_H

#include "llvm/ADT/StringRef.h"
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ember::sharding {

/// TorchRec's sharding types (names as in ParameterSharding.sharding_type).
enum class ShardingKind {
  TableWise,
  RowWise,
  ColumnWise,
  TableRowWise,
  DataParallel
};
constexpr int kNumShardingKinds = 5;
llvm::StringRef shardingKindName(ShardingKind kind);
std::optional<ShardingKind> parseShardingKind(llvm::StringRef name);

/// The kernel that serves a shard's lookups (TorchRec's compute_kernel):
/// `fused` keeps the weights in device memory, `fused_uvm_caching` keeps them
/// in host memory with a device cache, `fused_uvm` reads host memory
/// directly, `dense` is the kernel of data_parallel tables.
enum class ComputeKernel { Fused, FusedUvmCaching, FusedUvm, Dense };
llvm::StringRef computeKernelName(ComputeKernel kernel);
std::optional<ComputeKernel> parseComputeKernel(llvm::StringRef name);

enum class PoolingKind { Sum, Mean, Max };
llvm::StringRef poolingKindName(PoolingKind pooling);

/// Storage formats of ember.table (see !ember.table).
enum class TableFormat { F32, F16, BF16, Int8RowWise, Int4RowWise };
/// Bytes of `columns` stored columns of one row (row-wise quantized formats
/// keep an f32 scale and bias per row in every shard).
int64_t storedRowBytes(TableFormat format, int64_t columns);

/// Optimizer whose state lives beside the weights (0 bytes for inference).
enum class Optimizer { None, Sgd, RowWiseAdagrad, Adagrad, Adam };
llvm::StringRef optimizerName(Optimizer optimizer);
std::optional<Optimizer> parseOptimizer(llvm::StringRef name);

/// One feature (KJT key) looked up in a table.
struct FeatureSpec {
  std::string name;
  /// Mean number of ids per bag (TorchRec's pooling factor).
  double poolingFactor = 1.0;
};

/// An embedding table to place.
struct TableSpec {
  std::string name;
  /// The module path of the collection that holds the table (TorchRec's
  /// ShardingPlan key, e.g. "sparse_arch.embedding_bag_collection"); empty
  /// when the model does not say.
  std::string module;
  int64_t rows = 0;
  int64_t dim = 0;
  TableFormat format = TableFormat::F32;
  PoolingKind pooling = PoolingKind::Sum;
  /// Per-sample weights travel with the ids.
  bool weighted = false;
  /// Unpooled lookups (TorchRec's EmbeddingCollection): a row comes back
  /// for every id, not one pooled row per bag.
  bool sequence = false;
  /// The features looked up in this table (at least one).
  std::vector<FeatureSpec> features;
};

/// The machines. Bandwidths in bytes per second, memory in bytes, per rank.
/// Defaults: H100 SXM 80 GB, NVLink 4, one 400 Gb/s InfiniBand NIC per GPU.
struct Topology {
  int64_t worldSize = 1;
  int64_t ranksPerNode = 8;
  int64_t deviceMemoryBytes = 80'000'000'000;
  int64_t hostMemoryBytes = 256'000'000'000;
  /// Fraction of device memory kept for the dense model, activations and
  /// workspaces; embeddings get the rest.
  double reservedDeviceFraction = 0.1;
  /// Who set reservedDeviceFraction: the topology ("ember") or TorchRec's
  /// reservation rule ("torchrec": ShardingDriver, memory-reservation=).
  std::string reservationRule = "ember";
  /// When positive, a rank gives at most this many bytes of device memory
  /// to embeddings (weights, optimizer state, buffers) whatever the
  /// reservation leaves: a target for the plan's peak device memory
  /// (topology field embedding_memory_cap_gb).
  int64_t embeddingMemoryCapBytes = 0;
  double deviceBandwidth = 3.35e12;
  /// Fraction of deviceBandwidth a pooled lookup reaches (FBGEMM TBE forward:
  /// 64.7% of peak on a production-like catalogue).
  double lookupEfficiency = 0.65;
  /// Per GPU, per direction: NVLink 4 (900 GB/s both ways).
  double intraNodeBandwidth = 450e9;
  /// Per GPU: 400 Gb/s.
  double interNodeBandwidth = 50e9;
  /// Host memory to device (PCIe 5 x16), for the UVM kernels.
  double hostToDeviceBandwidth = 64e9;
  /// Dense math, floating-point operations per second (H100 SXM FP32, no
  /// tensor cores: 67 TFLOP/s). Only the predicted timeline reads it
  /// (compiler/timeline/, docs/timeline.md); the planner does not.
  double deviceFlops = 67e12;
  /// Fixed seconds per kernel and per collective round (a KJT all-to-all
  /// has two: splits, then values). Default 0, as in the planner's costs;
  /// only the predicted timeline reads them.
  double kernelLaunchSeconds = 0;
  double collectiveLatencySeconds = 0;

  int64_t numNodes() const {
    return (worldSize + ranksPerNode - 1) / ranksPerNode;
  }
  int64_t nodeOf(int64_t rank) const { return rank / ranksPerNode; }
  /// Device bytes a rank may give to embeddings: what the reservation
  /// leaves, at most the cap.
  int64_t usableDeviceMemory() const {
    int64_t usable = static_cast<int64_t>(
        static_cast<double>(deviceMemoryBytes) * (1.0 - reservedDeviceFraction));
    return embeddingMemoryCapBytes > 0
               ? std::min(usable, embeddingMemoryCapBytes)
               : usable;
  }
};

/// One block of a table on one rank: rows [rowOffset, rowOffset + rows) x
/// columns [colOffset, colOffset + cols).
struct Shard {
  int64_t rowOffset = 0;
  int64_t colOffset = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t rank = 0;
  bool operator==(const Shard &other) const {
    return rowOffset == other.rowOffset && colOffset == other.colOffset &&
           rows == other.rows && cols == other.cols && rank == other.rank;
  }
};

/// How one table is split (ParameterSharding).
struct TableSharding {
  std::string table;
  ShardingKind kind = ShardingKind::TableWise;
  ComputeKernel kernel = ComputeKernel::Fused;
  /// Every kind but data_parallel.
  std::vector<Shard> shards;
  /// data_parallel: the replica ranks (ascending).
  std::vector<int64_t> replicaRanks;
  /// The ranks in TorchRec's `ranks` order: the shards' ranks, or the
  /// replicas.
  std::vector<int64_t> ranks() const;
};

/// Seconds per batch, by part (docs/sharding.md, "Cost model").
struct CostParts {
  double lookup = 0;
  double inputDist = 0;
  double outputDist = 0;
  /// Zero unless PlannerOptions::includeBackward.
  double backward = 0;
  double total() const { return lookup + inputDist + outputDist + backward; }
  CostParts &operator+=(const CostParts &other);
  CostParts &operator-=(const CostParts &other);
};

/// Bytes, by part (docs/sharding.md, "Storage model").
struct StorageParts {
  int64_t weights = 0;
  int64_t optimizerState = 0;
  int64_t inputBuffers = 0;
  int64_t outputBuffers = 0;
  int64_t total() const {
    return weights + optimizerState + inputBuffers + outputBuffers;
  }
  StorageParts &operator+=(const StorageParts &other);
  StorageParts &operator-=(const StorageParts &other);
};

/// What one rank carries in a plan.
struct RankLoad {
  CostParts cost;
  StorageParts device;
  StorageParts host;
};

/// User constraints for one table.
struct TableConstraint {
  std::optional<ShardingKind> kind;
  std::optional<ComputeKernel> kernel;
  /// Pinned ranks: table_wise takes the first, column_wise puts one shard on
  /// each (in order), row_wise / table_row_wise one row block on each,
  /// data_parallel replicates on them.
  std::vector<int64_t> ranks;
};

enum class SearchMode {
  /// One greedy pass (the baseline the search is measured against).
  Greedy,
  /// Several greedy seeds, each improved by moves, swaps and re-sharding of
  /// the tables on the most loaded rank; the best plan wins.
  Local,
};

struct PlannerOptions {
  Topology topology;
  int64_t batchSizePerRank = 512;
  /// Sharding forced on every table (nullopt: the planner chooses). Tables
  /// the kind does not allow (docs/sharding.md) keep the planner's choice
  /// among the allowed kinds, with a note in the plan.
  std::optional<ShardingKind> globalKind;
  /// Per-table constraints, by table name.
  std::map<std::string, TableConstraint> tables;
  /// Imported shardings (ParameterSharding JSON), by table name: used as they
  /// are; the planner places only the other tables.
  std::map<std::string, TableSharding> imported;
  Optimizer optimizer = Optimizer::None;
  /// Batches in flight (pipelining keeps pipelineDepth copies of the
  /// input/output buffers).
  int64_t pipelineDepth = 2;
  /// Count the backward estimate in the cost (training).
  bool includeBackward = false;
  /// With includeBackward: the training objective within the inference
  /// plan's bytes (objective `training-lean`, docs/sharding.md): plan for
  /// inference, then shard the replicas whose gradient all-reduce costs the
  /// training step most while no rank looks up, sends or receives in the
  /// all-to-alls, sends or receives across nodes, or holds more bytes than
  /// the inference plan's busiest (fullest) rank.
  bool leanTraffic = false;
  /// leanTraffic: how far above the inference plan's busiest rank each of
  /// those bytes may go (0.05: 5%; larger trades bytes for training step).
  double leanSlack = 0.05;
  /// The auto planner may use fused_uvm_caching for tables that do not fit.
  bool allowUvm = true;
  /// Fraction of a UVM-cached shard's rows kept in device memory.
  double uvmCacheLoadFactor = 0.2;
  SearchMode search = SearchMode::Local;
};

/// The planner's answer: one sharding per input table, in input order.
struct ShardingPlan {
  Topology topology;
  int64_t batchSizePerRank = 0;
  std::vector<TableSharding> tables;
  std::vector<RankLoad> ranks;
  /// What the costs and memory figures assumed (the planner's options), for
  /// the report.
  Optimizer optimizer = Optimizer::None;
  int64_t pipelineDepth = 0;
  bool includeBackward = false;
  bool leanTraffic = false;
  SearchMode search = SearchMode::Local;
  /// Notes for the user (for example a forced kind a table did not allow).
  std::vector<std::string> notes;
  /// The plan's score: the largest per-rank cost (seconds per batch).
  double maxRankCost() const;
  /// Sum of every rank's cost.
  double totalCost() const;
  /// The step as its collectives see it: the sum over the cost parts
  /// (lookup, input all-to-all, output all-to-all, backward) of the busiest
  /// rank's part (each collective waits for its slowest rank). At least
  /// maxRankCost().
  double collectiveStepCost() const;
};

} // namespace ember::sharding

#endif // EMBER_SHARDING_SHARDINGTYPES_H
