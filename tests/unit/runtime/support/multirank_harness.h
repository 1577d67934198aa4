//===- multirank_harness.h - Sessions on threads as ranks -------*- C++ -*-===//
//
// What the multi-rank session tests (multirank_session_test,
// stream_overlap_test, pipeline_test) share: ranks as threads, each with
// its own Session and a rendezvous through a file store; each rank's rows
// of a global batch (ceil/floor split); the sharded cases they run, their
// models and batches; a run's outputs as bytes.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_UNIT_RUNTIME_SUPPORT_MULTIRANK_HARNESS_H
#define EMBER_TESTS_UNIT_RUNTIME_SUPPORT_MULTIRANK_HARNESS_H

#include "ember/session.h"
#include "support/sharded_model.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace ember::testing {

/// Runs body(rank) on `world` threads, one per rank, and joins them.
inline void runOnRankThreads(int world, const std::function<void(int)> &body) {
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r)
    ranks.emplace_back([&body, r] { body(r); });
  for (auto &t : ranks)
    t.join();
}

/// `base` as rank `rank` of `world`, meeting the others through the file
/// store `store`.
inline SessionOptions rankSessionOptions(SessionOptions base, int rank,
                                         int world, const std::string &store) {
  base.rank = rank;
  base.worldSize = world;
  base.rendezvous = "file:" + store;
  return base;
}

/// Loads `plan` on `world` threads, one per rank (rankSessionOptions of
/// `base`), and runs body(rank, session) on each; joins them. A rank whose
/// session does not load fails the test and runs no body.
inline void runSessionRanks(const std::string &plan, int world,
                            const std::string &store,
                            const SessionOptions &base,
                            const std::function<void(int, Session &)> &body) {
  runOnRankThreads(world, [&](int r) {
    auto session =
        Session::load(plan, rankSessionOptions(base, r, world, store));
    ASSERT_TRUE(session.isOk()) << session.status().toString();
    body(r, **session);
  });
}

/// Rank `rank`'s rows [begin, begin + size) of a batch of `batch` rows split
/// over `world` ranks: ceil/floor, the first batch % world ranks get one
/// more.
struct RankRows {
  int64_t begin = 0;
  int64_t size = 0;
};
inline RankRows rankRows(int64_t batch, int world, int rank) {
  auto sizeOf = [&](int r) {
    return batch / world + (r < batch % world ? 1 : 0);
  };
  RankRows rows;
  for (int q = 0; q < rank; ++q)
    rows.begin += sizeOf(q);
  rows.size = sizeOf(rank);
  return rows;
}

/// Rank `rank`'s slice of `global` (its rankRows).
inline ShardedTestBatch rankSlice(const ShardedTestModel &m,
                                  const ShardedTestBatch &global, int world,
                                  int rank) {
  const RankRows rows = rankRows(global.batch, world, rank);
  return sliceShardedTestBatch(global, static_cast<int64_t>(m.keys.size()),
                               rows.begin, rows.begin + rows.size);
}

/// Rank `rank`'s slice of each of `globals`.
inline std::vector<ShardedTestBatch>
rankSlices(const ShardedTestModel &m,
           const std::vector<ShardedTestBatch> &globals, int world, int rank) {
  std::vector<ShardedTestBatch> locals;
  for (const ShardedTestBatch &global : globals)
    locals.push_back(rankSlice(m, global, world, rank));
  return locals;
}

/// A case of the parameterized multi-rank tests: the sharding, the number
/// of ranks, the global batch.
struct ShardingCase {
  TestSharding sharding;
  int world;
  int64_t batch;
};

/// Table- and row-wise on 2 and 4 ranks, batches that do not divide evenly
/// over 4 ranks (stream_overlap_test, pipeline_test).
inline auto twoAndFourRankCases() {
  return ::testing::Values(ShardingCase{TestSharding::kTableWise, 2, 7},
                           ShardingCase{TestSharding::kTableWise, 4, 9},
                           ShardingCase{TestSharding::kRowWise, 2, 5},
                           ShardingCase{TestSharding::kRowWise, 4, 10});
}

/// A case's name in the test's: "TableWise2", "RowWise4".
inline std::string
shardingCaseName(const ::testing::TestParamInfo<ShardingCase> &info) {
  return std::string(info.param.sharding == TestSharding::kTableWise
                         ? "TableWise"
                         : "RowWise") +
         std::to_string(info.param.world);
}

/// The model a case runs: table-wise, five tables; row-wise, three.
inline ShardedTestModel shardingCaseModel(const ShardingCase &c) {
  return c.sharding == TestSharding::kTableWise ? makeTableWiseTestModel(5)
                                                : makeRowWiseTestModel(6);
}

/// `count` global batches of `batch` rows, seeds `firstSeed`,
/// `firstSeed` + 1, ...
inline std::vector<ShardedTestBatch>
makeShardedTestBatches(const ShardedTestModel &m, int count, int64_t batch,
                       uint64_t firstSeed) {
  std::vector<ShardedTestBatch> batches;
  for (int i = 0; i < count; ++i)
    batches.push_back(makeShardedTestBatch(m, batch, firstSeed + i));
  return batches;
}

/// The bytes of each output of a run, in order.
using OutputBytes = std::vector<std::vector<uint8_t>>;
inline OutputBytes outputBytes(const RunOutputs &out) {
  OutputBytes bytes;
  for (size_t i = 0; i < out.size(); ++i) {
    const Tensor &t = out.tensor(i);
    const uint8_t *p = static_cast<const uint8_t *>(t.data());
    bytes.emplace_back(p, p + t.nbytes());
  }
  return bytes;
}

} // namespace ember::testing

#endif // EMBER_TESTS_UNIT_RUNTIME_SUPPORT_MULTIRANK_HARNESS_H
