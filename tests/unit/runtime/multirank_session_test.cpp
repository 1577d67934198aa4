//===- multirank_session_test.cpp - Sharded plans equal one rank ----------===//
//
// Hand-built table-wise and row-wise plans (support/sharded_model.h) run on
// 1, 2 and 4 ranks (threads, each with its own Session and Gloo
// communicator), each rank on its slice of one global batch; the gathered
// outputs must equal the single-rank plan's on the whole batch: bit-exact
// for table-wise (same arithmetic per bag), within 1e-5 relative for
// row-wise (the partial sums of the row shards are added in another order).
//
//===----------------------------------------------------------------------===//
#include "comm/comm_options.h"
#include "ember/session.h"
#include "plan/ember_plan.pb.h"
#include "plan/plan_writer.h"
#include "support/file_bytes.h"
#include "support/multirank_harness.h"
#include "support/sharded_inputs.h"
#include "support/sharded_model.h"
#include "support/temp_dir.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>

using namespace ember;
using namespace ember::testing;

namespace {

std::vector<float> values(const Tensor &t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

class MultiRankSessionTest : public ::testing::TestWithParam<ShardingCase> {};

TEST_P(MultiRankSessionTest, ShardedOutputsEqualOneRank) {
  const ShardingCase c = GetParam();
  if (c.world > 1 && !haveCommunicatorBackend())
    GTEST_SKIP() << "this build has no Gloo";
  TempDir dir;
  ShardedTestModel m = shardingCaseModel(c);
  auto single = writeSingleRankTestPlan(m, dir.path(), "single");
  ASSERT_TRUE(single.isOk()) << single.status().toString();
  auto sharded =
      writeShardedTestPlan(m, c.sharding, c.world, dir.path(), "sharded");
  ASSERT_TRUE(sharded.isOk()) << sharded.status().toString();

  ShardedTestBatch global = makeShardedTestBatch(m, c.batch, 77);
  auto one = Session::load(*single);
  ASSERT_TRUE(one.isOk()) << one.status().toString();
  RunInputs globalIn = shardedTestInputs(m, global);
  auto expected = (*one)->run(globalIn);
  ASSERT_TRUE(expected.isOk()) << expected.status().toString();

  SessionOptions o;
  o.collectiveTimeoutSeconds = 30;
  runSessionRanks(
      *sharded, c.world, dir.file("store"), o, [&](int r, Session &session) {
        // Ceil/floor split of the batch: the first B % W ranks get one more.
        ShardedTestBatch local = rankSlice(m, global, c.world, r);
        RunInputs in = shardedTestInputs(m, local);
        RunOutputs out, gathered;
        for (int repeat = 0; repeat < 2; ++repeat) { // steady state too
          Status s = session.run(in, &out);
          ASSERT_TRUE(s.isOk()) << "rank " << r << ": " << s.toString();
        }
        ASSERT_EQ(out.find("pooled")->dim(0), local.batch);
        Status s = session.gatherOutputs(out, &gathered);
        ASSERT_TRUE(s.isOk()) << "rank " << r << ": " << s.toString();
        for (const char *name : {"pooled", "dense_relu"}) {
          const Tensor *got = gathered.find(name);
          const Tensor *want = expected->find(name);
          ASSERT_TRUE(got && want) << name;
          ASSERT_EQ(got->shape(), want->shape()) << name;
          std::vector<float> g = values(*got), w = values(*want);
          if (c.sharding == TestSharding::kTableWise) {
            EXPECT_EQ(g, w) << name << " rank " << r;
          } else {
            for (size_t i = 0; i < g.size(); ++i)
              ASSERT_NEAR(g[i], w[i], 1e-5 * (1 + std::fabs(w[i])))
                  << name << "[" << i << "] rank " << r;
          }
        }
      });
}

INSTANTIATE_TEST_SUITE_P(
    Shardings, MultiRankSessionTest,
    ::testing::Values(ShardingCase{TestSharding::kTableWise, 1, 7},
                      ShardingCase{TestSharding::kTableWise, 2, 7},
                      ShardingCase{TestSharding::kTableWise, 4, 9},
                      // A rank with B=0:
                      ShardingCase{TestSharding::kTableWise, 4, 3},
                      ShardingCase{TestSharding::kRowWise, 1, 6},
                      ShardingCase{TestSharding::kRowWise, 2, 5},
                      ShardingCase{TestSharding::kRowWise, 4, 10},
                      ShardingCase{TestSharding::kRowWise, 4, 2}),
    [](const auto &info) {
      return std::string(info.param.sharding == TestSharding::kTableWise
                             ? "TableWise"
                             : "RowWise") +
             std::to_string(info.param.world) + "Ranks_B" +
             std::to_string(info.param.batch);
    });

/// A table-wise plan for two ranks (tw2.plan in dir).
class MultiRankSessionErrors : public ::testing::Test {
protected:
  void SetUp() override {
    ShardedTestModel m = makeTableWiseTestModel(5);
    auto path =
        writeShardedTestPlan(m, TestSharding::kTableWise, 2, dir.path(), "tw2");
    ASSERT_TRUE(path.isOk()) << path.status().toString();
    planPath = *path;
  }
  TempDir dir;
  std::string planPath;
};

TEST_F(MultiRankSessionErrors, SingleRankSessionRefusesAMultiRankPlan) {
  auto s = Session::load(planPath);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find(
                "the plan is for 2 rank(s) but this is a single-rank session"),
            std::string::npos)
      << s.status().toString();
  EXPECT_NE(s.status().message().find("--nproc 2"), std::string::npos);

  SessionOptions o;
  o.worldSize = 4;
  o.rendezvous = "file:" + dir.file("store");
  s = Session::load(planPath, o);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.status().message().find("world has 4 ranks"), std::string::npos)
      << s.status().toString();

  o.worldSize = 2;
  o.rank = 2;
  s = Session::load(planPath, o);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);

  o.rank = 1;
  o.rendezvous.clear();
  s = Session::load(planPath, o);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.status().message().find("rendezvous"), std::string::npos);
}

// A rank 0 that cannot load announces why through a file store and returns
// at once (the store keeps it: no wait for peers that never join, however long
// the collective timeout); a peer that comes later reads why.
TEST_F(MultiRankSessionErrors, RankZeroRefusalStaysInAFileStoreForLaterPeers) {
  SessionOptions o;
  o.worldSize = 2;
  o.rendezvous = "file:" + dir.file("refusal_store");
  o.collectiveTimeoutSeconds = 60;
  const std::string missing = dir.file("missing.plan");
  auto start = std::chrono::steady_clock::now();
  auto s = Session::load(missing, o);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.status().message().find("missing.plan"), std::string::npos)
      << s.status().toString();
  EXPECT_LT(seconds, 5.0) << "rank 0 waited for peers that never joined";

  o.rank = 1;
  o.collectiveTimeoutSeconds = 20;
  s = Session::load(planPath, o);
  ASSERT_FALSE(s.isOk());
  const std::string message = s.status().message();
  EXPECT_NE(message.find("rank 0"), std::string::npos) << message;
  EXPECT_NE(message.find("cannot take part"), std::string::npos) << message;
  EXPECT_NE(message.find("missing.plan"), std::string::npos) << message;
}

TEST_F(MultiRankSessionErrors, LoaderChecksCollectiveUse) {
  plan::Plan original;
  ASSERT_TRUE(original.ParseFromString(readFileBytes(planPath)));
  auto loadMutated = [&](const std::function<void(plan::Plan &)> &mutate) {
    plan::Plan p = original;
    mutate(p);
    std::string error, mutated = dir.file("mutated.plan");
    EXPECT_TRUE(writePlanFile(p, mutated, &error)) << error;
    SessionOptions o;
    o.worldSize = 2;
    o.rendezvous = "file:" + dir.file("never_used");
    o.collectiveTimeoutSeconds = 0.2;
    auto s = Session::load(mutated, o);
    return s.isOk() ? Status::ok() : s.status();
  };
  auto a2a = [](plan::Plan &p) {
    return p.mutable_programs(0)->mutable_instructions(1);
  };
  ASSERT_EQ(original.programs(0).instructions(1).kernel(), "kjt_all_to_all");
  struct Mutation {
    std::function<void(plan::Plan &)> mutate;
    const char *message;
  };
  std::vector<Mutation> cases = {
      {[](plan::Plan &p) {
         p.mutable_collectives(0)->set_kind(
             plan::CollectiveDescriptor::ALL_GATHER);
       },
       "needs a collective of kind KJT_ALL_TO_ALL but collective 0 "
       "'sparse_arch.input_dist' is ALL_GATHER"},
      {[&](plan::Plan &p) { a2a(p)->set_collective(0); },
       "is a collective and needs a descriptor of kind KJT_ALL_TO_ALL"},
      {[](plan::Plan &p) {
         p.mutable_collectives(0)->clear_group_ranks();
         p.mutable_collectives(0)->add_group_ranks(0);
       },
       "'key_splits' has 2 entries but the collective's group has 1 ranks"},
      {[](plan::Plan &p) {
         p.mutable_collectives(1)->clear_group_ranks();
         p.mutable_collectives(1)->add_group_ranks(1);
       },
       "rank 0 runs collective 1 'sparse_arch.output_dist' but is not in its "
       "group (1)"},
      {[](plan::Plan &p) {
         p.mutable_programs(0)->mutable_instructions(0)->set_collective(1);
       },
       "kernel 'relu' is not a collective but refers to collective 0"},
      {[&](plan::Plan &p) { a2a(p)->mutable_attrs(0)->set_name("splits"); },
       "key_splits"},
  };
  for (const Mutation &c : cases) {
    Status s = loadMutated(c.mutate);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.toString();
  }
}

TEST(LaunchEnvironment, ReadsTheLauncherVariables) {
  ::setenv("RANK", "3", 1);
  ::setenv("WORLD_SIZE", "4", 1);
  ::setenv("LOCAL_RANK", "1", 1);
  ::setenv("MASTER_ADDR", "10.0.0.7", 1);
  ::setenv("MASTER_PORT", "29500", 1);
  ::setenv("EMBER_COMM_TIMEOUT", "7.5", 1);
  SessionOptions o;
  Status s = applyLaunchEnvironment(o);
  EXPECT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(o.rank, 3);
  EXPECT_EQ(o.worldSize, 4);
  EXPECT_EQ(o.localRank, 1);
  EXPECT_EQ(o.rendezvous, "tcp:10.0.0.7:29500");
  EXPECT_EQ(o.collectiveTimeoutSeconds, 7.5);
  ::setenv("EMBER_RENDEZVOUS", "file:/tmp/x", 1);
  EXPECT_TRUE(applyLaunchEnvironment(o).isOk());
  EXPECT_EQ(o.rendezvous, "file:/tmp/x");
  ::setenv("RANK", "4", 1);
  s = applyLaunchEnvironment(o);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("RANK 4"), std::string::npos) << s.toString();
  ::setenv("RANK", "x", 1);
  s = applyLaunchEnvironment(o);
  EXPECT_NE(s.message().find("RANK='x'"), std::string::npos) << s.toString();
  ::unsetenv("MASTER_PORT");
  ::setenv("RANK", "0", 1);
  s = applyLaunchEnvironment(o);
  EXPECT_NE(s.message().find("MASTER_PORT"), std::string::npos) << s.toString();
  for (const char *v : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                        "EMBER_COMM_TIMEOUT", "EMBER_RENDEZVOUS"})
    ::unsetenv(v);
}

} // namespace
