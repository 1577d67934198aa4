//===- sharded_model.h - Hand-built multi-rank embedding plans --*- C++ -*-===//
//
// A small embedding model written three ways with the plan writer, the way
// the partitioning pass is meant to emit it:
//
//   single rank:  relu(dense) = dense_relu [B, 3];
//                 grouped_embedding_bag(sparse) = pooled [B, sum D];
//                 with `interaction`: concat(dense_relu, pooled) =
//                 interaction [B, 3 + sum D]
//   table-wise (W ranks): each rank owns a contiguous range of tables;
//     kjt_all_to_all (key_splits) -> local grouped_embedding_bag over
//     [B_total] bags -> pooled_all_to_all (dim_per_rank) -> [B, sum D]
//   row-wise (W ranks): every table split into W row blocks;
//     kjt_bucketize -> kjt_all_to_all (key_splits = F per rank) -> local
//     lookup in the row shard -> reduce_scatter (sum) -> [B, sum D]
//
// Weights file per rank: BASE.rank<r>.weights.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_SHARDED_MODEL_H
#define EMBER_TESTS_SHARDED_MODEL_H

#include "ember/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::testing {

struct ShardedTestModel {
  static constexpr int64_t kDenseWidth = 3;
  std::vector<std::string> keys;    // feature f uses table f
  std::vector<int64_t> rows, dims;  // per table
  std::vector<std::string> pooling; // per table
  std::vector<std::vector<float>> tables;
  bool weighted = false; // the KJT carries per-id weights
  /// Adds output "interaction" = concat(dense_relu, pooled) on axis 1:
  /// compute that needs the pooled embeddings (what a DLRM's interaction
  /// and top MLP are).
  bool interaction = false;
  int64_t pooledWidth() const;
};

/// Five tables, mixed dims and pooling (sum, mean, max), no weights.
ShardedTestModel makeTableWiseTestModel(uint64_t seed);
/// Three tables, sum pooling, a weighted KJT (row-wise needs sum).
ShardedTestModel makeRowWiseTestModel(uint64_t seed);

enum class TestSharding { kTableWise, kRowWise };

Result<std::string> writeSingleRankTestPlan(const ShardedTestModel &model,
                                            const std::string &dir,
                                            const std::string &base);
Result<std::string> writeShardedTestPlan(const ShardedTestModel &model,
                                         TestSharding sharding, int world,
                                         const std::string &dir,
                                         const std::string &base);

struct ShardedTestBatch {
  int64_t batch = 0;
  std::vector<float> dense;     // [B, 3]
  std::vector<int64_t> values;  // key-major
  std::vector<int64_t> lengths; // [F * B]
  std::vector<float> weights;   // [N] when the model is weighted
};

/// Random ids over whole tables (edges included), bags of 0..4 ids.
ShardedTestBatch makeShardedTestBatch(const ShardedTestModel &model,
                                      int64_t batch, uint64_t seed);
/// Samples [begin, end) of a batch (what one rank gets).
ShardedTestBatch sliceShardedTestBatch(const ShardedTestBatch &batch,
                                       int64_t numKeys, int64_t begin,
                                       int64_t end);

} // namespace ember::testing

#endif // EMBER_TESTS_SHARDED_MODEL_H
