//===- CostModel.h - per-shard cost and storage estimates -------*- C++ -*-===//
//
// The planner's cost model (seconds per batch, by part) and storage model
// (bytes, by part, in device and host memory) of one shard or replica of a
// table. docs/sharding.md writes the formulas down.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_SHARDING_COSTMODEL_H
#define EMBER_SHARDING_COSTMODEL_H

#include "sharding/ShardingTypes.h"
#include "llvm/ADT/ArrayRef.h"

namespace ember::sharding {

/// What one shard (or replica) adds to the rank that holds it.
struct ShardLoad {
  CostParts cost;
  StorageParts device;
  StorageParts host;
  /// What the shard costs every rank of the world: each rank sends its ids
  /// to the shard and receives its pooled rows from it (the requester's side
  /// of the input and output all-to-alls; the holder's side is in `cost`).
  CostParts everyRank;
  /// The holder's side of each all-to-all (the part of `cost.inputDist`,
  /// `cost.outputDist` and `cost.backward` that goes the opposite way to
  /// `everyRank`'s: ids received, rows sent, gradients received). Links are
  /// full duplex, so a rank's time in one all-to-all is the larger of what
  /// it sends and what it receives: these and the requester's side meet in
  /// a max, not a sum (rankCollectiveParts).
  CostParts exchange;
  ShardLoad &operator+=(const ShardLoad &other);
  ShardLoad &operator-=(const ShardLoad &other);
};

/// Bytes of one id and one length on the wire and in buffers.
constexpr int64_t kIdBytes = 8;
constexpr int64_t kLengthBytes = 4;
constexpr int64_t kWeightBytes = 4;
/// Pooled outputs are f32.
constexpr int64_t kOutputBytes = 4;
/// Backward lookup time / forward lookup time (FBGEMM TBE: forward 2.525
/// TB/s, backward 1.035 TB/s on the same catalogue).
constexpr double kBackwardLookupRatio = 2.44;

class CostModel {
public:
  explicit CostModel(const PlannerOptions &options) : options(options) {}

  /// One shard `geometry` (rank ignored) of `table` sharded as `kind` with
  /// `numShards` shards, served by `kernel`.
  ShardLoad shardLoad(const TableSpec &table, ShardingKind kind,
                      ComputeKernel kernel, const Shard &geometry,
                      int64_t numShards) const;
  /// One data_parallel replica of `table` (out of `numReplicas`).
  ShardLoad replicaLoad(const TableSpec &table, int64_t numReplicas) const;
  /// What every rank holds whatever the plan: its own input ids and the
  /// pooled outputs of every table for its local batch.
  ShardLoad baseline(llvm::ArrayRef<TableSpec> tables) const;

  /// Seconds to receive `bytes` gathered evenly from every rank of the world
  /// (own share free, node peers over NVLink, the rest over the network).
  double allToAllSeconds(double bytes) const;
  /// Seconds of the gradient all-reduce over `numReplicas` replicas of
  /// `table` (training): inside each node, then across the nodes.
  double replicaAllReduceSeconds(const TableSpec &table,
                                 int64_t numReplicas) const;
  /// Seconds to look up `idsLookedUp` rows of `cols` columns of `table`
  /// (its format) with `kernel` and write `outputBytes` (the "lookup" of
  /// docs/sharding.md; the predicted timeline costs its lookups with it).
  double lookupSeconds(const TableSpec &table, ComputeKernel kernel,
                       double idsLookedUp, int64_t cols,
                       double outputBytes) const;

private:
  StorageParts weightStorage(const TableSpec &table, int64_t rows,
                             int64_t cols) const;

  const PlannerOptions &options;
};

/// A rank's cost parts from what it holds (`held`: the sum of its shards'
/// ShardLoad::cost and ShardLoad::exchange) and what every rank requests
/// (`requested`: the sum of every placed shard's ShardLoad::everyRank). Each
/// all-to-all is as slow as the larger of the bytes the rank sends and
/// receives in it (full-duplex links), so its part is `cost - exchange +
/// max(exchange, requested)`; lookups and the symmetric exchanges (a
/// reduce-scatter inside the node, the replicas' all-reduce) add up.
CostParts rankCollectiveParts(const CostParts &heldCost,
                              const CostParts &heldExchange,
                              const CostParts &requested);

/// Total ids per sample of `table` (sum of its features' pooling factors).
double idsPerSample(const TableSpec &table);
/// Embedding rows per sample a lookup of `table` returns: one per feature
/// (pooled), one per id (sequence).
double outputRowsPerSample(const TableSpec &table);

} // namespace ember::sharding

#endif // EMBER_SHARDING_COSTMODEL_H
