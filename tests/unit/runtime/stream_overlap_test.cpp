//===- stream_overlap_test.cpp - Collectives on the communication thread --===//
//
// The hand-built sharded plans (support/sharded_model.h) with their
// collectives put on stream 1 and events added the way the compiler's
// PlanStreams does (a collective waits for the stream-0 instruction before
// it; the first stream-0 reader of a collective's result waits for it):
//   - run with SessionOptions::overlap "streams" (stream 1 on the session's
//     communication thread) on 2 and 4 ranks, also with the communication
//     thread slowed down (EMBER_TEST_COMM_DELAY_US), the outputs equal
//     those of "off" (program order) bit for bit, and the trace shows
//     stream 0 waiting for the slowed collectives;
//   - a plan whose reader of a collective's result does not wait for it is
//     refused at load, naming both instructions; so is one whose memory
//     plan reuses a collective's buffer on stream 0 before waiting;
//   - a collective that times out on the communication thread fails the
//     run with the collective's error (naming the silent rank), no hang,
//     and the session is destroyed cleanly;
//   - bad SessionOptions.overlap and EMBER_TEST_COMM_DELAY_US are errors.
// Labelled tsan too: the ThreadSanitizer stage runs it.
//
//===----------------------------------------------------------------------===//
#include "comm/comm_options.h"
#include "ember/session.h"
#include "ember/trace.h"
#include "plan/ember_plan.pb.h"
#include "plan/plan_writer.h"
#include "support/file_bytes.h"
#include "support/multirank_harness.h"
#include "support/scoped_env.h"
#include "support/sharded_inputs.h"
#include "support/sharded_model.h"
#include "support/temp_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <set>

using namespace ember;
using namespace ember::testing;

namespace {

/// Collectives on stream 1 with the events of PlanStreams (no reordering).
void assignStreams(plan::RankProgram &p) {
  int events = p.num_events();
  int lastCompute = -1, lastComputeEvent = -1;
  std::vector<int> definedBy(p.slots_size(), -1),
      doneEvent(p.instructions_size(), -1);
  std::vector<int> pending;
  for (int i = 0; i < p.instructions_size(); ++i) {
    plan::Instruction &in = *p.mutable_instructions(i);
    if (in.collective() > 0) {
      in.set_stream(1);
      if (lastCompute >= 0) {
        if (lastComputeEvent < 0) {
          lastComputeEvent = events++;
          p.mutable_instructions(lastCompute)
              ->add_record_events(lastComputeEvent);
        }
        in.add_wait_events(lastComputeEvent);
      }
      doneEvent[i] = events++;
      in.add_record_events(doneEvent[i]);
      pending.push_back(i);
    } else {
      in.set_stream(0);
      int latest = -1;
      for (int s : in.inputs())
        if (s >= 0 && definedBy[s] >= 0 &&
            std::find(pending.begin(), pending.end(), definedBy[s]) !=
                pending.end())
          latest = std::max(latest, definedBy[s]);
      if (latest >= 0) {
        in.add_wait_events(doneEvent[latest]);
        pending.erase(pending.begin(),
                      std::upper_bound(pending.begin(), pending.end(), latest));
      }
      lastCompute = i;
      lastComputeEvent = -1;
    }
    for (int s : in.outputs())
      if (s >= 0)
        definedBy[s] = i;
  }
  p.set_num_streams(2);
  p.set_num_events(events);
}

/// Rewrites the plan at `path` after `mutate`.
void rewritePlan(const std::string &path,
                 const std::function<void(plan::Plan &)> &mutate) {
  plan::Plan plan;
  ASSERT_TRUE(plan.ParseFromString(readFileBytes(path)));
  mutate(plan);
  std::string error;
  ASSERT_TRUE(writePlanFile(plan, path, &error)) << error;
}

struct RankResult {
  OutputBytes outputs;
  SessionTrace trace;
  bool overlapped = false;
};

/// Runs the plan on `world` ranks (threads) with `overlap`, `runs` times;
/// each rank's last outputs and its trace.
std::vector<RankResult> runRanks(const std::string &plan,
                                 const ShardedTestModel &m,
                                 const ShardedTestBatch &global, int world,
                                 const std::string &overlap,
                                 const std::string &store, int runs = 2) {
  std::vector<RankResult> results(world);
  SessionOptions o;
  o.collectiveTimeoutSeconds = 30;
  o.overlap = overlap;
  o.recordTrace = true;
  o.threads = 2;
  runSessionRanks(plan, world, store, o, [&](int r, Session &session) {
    results[r].overlapped = session.overlapsStreams();
    ShardedTestBatch local = rankSlice(m, global, world, r);
    RunInputs in = shardedTestInputs(m, local);
    RunOutputs out;
    for (int i = 0; i < runs; ++i) {
      Status s = session.run(in, &out);
      ASSERT_TRUE(s.isOk()) << "rank " << r << ": " << s.toString();
    }
    results[r].outputs = outputBytes(out);
    results[r].trace = session.takeTrace();
  });
  return results;
}

class StreamOverlapTest : public ::testing::TestWithParam<ShardingCase> {
protected:
  void SetUp() override {
    if (!haveCommunicatorBackend())
      GTEST_SKIP() << "this build has no Gloo";
    const ShardingCase c = GetParam();
    model_ = shardingCaseModel(c);
    auto sharded = writeShardedTestPlan(model_, c.sharding, c.world,
                                        dir_.path(), "sharded");
    ASSERT_TRUE(sharded.isOk()) << sharded.status().toString();
    plan_ = *sharded;
    rewritePlan(plan_, [](plan::Plan &p) {
      for (plan::RankProgram &program : *p.mutable_programs())
        assignStreams(program);
    });
    batch_ = makeShardedTestBatch(model_, c.batch, 91);
  }

  TempDir dir_;
  ShardedTestModel model_;
  std::string plan_;
  ShardedTestBatch batch_;
};

TEST_P(StreamOverlapTest, SameBytesAsProgramOrder) {
  const int world = GetParam().world;
  auto off = runRanks(plan_, model_, batch_, world, "off", dir_.file("s1"));
  auto streams =
      runRanks(plan_, model_, batch_, world, "streams", dir_.file("s2"));
  for (int r = 0; r < world; ++r) {
    EXPECT_FALSE(off[r].overlapped);
    EXPECT_TRUE(streams[r].overlapped);
    ASSERT_FALSE(off[r].outputs.empty());
    EXPECT_EQ(off[r].outputs, streams[r].outputs) << "rank " << r;
    // Collectives ran on the communication thread (track 1), compute on
    // track 0; in program order everything is on track 0.
    ASSERT_EQ(streams[r].trace.runs.size(), 2u);
    int onComm = 0;
    for (const TraceSlice &s : streams[r].trace.runs[1])
      if (!s.wait) {
        bool collective =
            streams[r].trace.instructions[s.instruction].collectiveSequence >=
            0;
        EXPECT_EQ(s.track, collective ? 1 : 0) << s.instruction;
        onComm += collective;
      }
    EXPECT_GT(onComm, 0);
    for (const TraceSlice &s : off[r].trace.runs[1])
      EXPECT_EQ(s.track, 0);
  }
}

TEST_P(StreamOverlapTest, SlowCommunicationThreadIsWaitedFor) {
  const int world = GetParam().world;
  auto off = runRanks(plan_, model_, batch_, world, "off", dir_.file("s1"));
  std::vector<RankResult> slow;
  {
    ScopedEnv delay("EMBER_TEST_COMM_DELAY_US", "30000");
    slow = runRanks(plan_, model_, batch_, world, "streams", dir_.file("s2"));
  }
  for (int r = 0; r < world; ++r) {
    EXPECT_EQ(off[r].outputs, slow[r].outputs) << "rank " << r;
    // Stream 0 had to wait for the slowed collectives: a wait slice on
    // track 0 of at least most of the delay, awaiting a collective.
    double longestWaitMs = 0;
    for (const TraceSlice &s : slow[r].trace.runs[1])
      if (s.wait && s.track == 0) {
        EXPECT_GE(slow[r].trace.instructions[s.instruction].collectiveSequence,
                  0);
        longestWaitMs = std::max(longestWaitMs, (s.endNs - s.beginNs) / 1e6);
      }
    EXPECT_GE(longestWaitMs, 15.0) << "rank " << r;
    TraceSplit split = summarizeTrace(slow[r].trace);
    EXPECT_GE(split.exposedCommMs, 15.0);
    EXPECT_GE(split.stepMs, split.exposedCommMs);
  }
}

INSTANTIATE_TEST_SUITE_P(Shardings, StreamOverlapTest, twoAndFourRankCases(),
                         shardingCaseName);

/// A 2-rank table-wise plan with streams, mutated by `mutate`; what loading
/// rank 0 says.
Status
loadMutated(const std::function<void(plan::RankProgram &)> &mutate,
            const std::function<void(plan::Plan &)> &mutatePlan = nullptr) {
  TempDir dir;
  ShardedTestModel m = makeTableWiseTestModel(5);
  auto plan = writeShardedTestPlan(m, TestSharding::kTableWise, 2, dir.path(),
                                   "sharded");
  EXPECT_TRUE(plan.isOk()) << plan.status().toString();
  rewritePlan(*plan, [&](plan::Plan &p) {
    assignStreams(*p.mutable_programs(0));
    mutate(*p.mutable_programs(0));
    if (mutatePlan)
      mutatePlan(p);
  });
  SessionOptions o; // rank 0 of 2 fails before the rendezvous
  o.worldSize = 2;
  o.rendezvous = "file:" + dir.file("store");
  o.collectiveTimeoutSeconds = 1;
  auto session = Session::load(*plan, o);
  return session.isOk() ? Status::ok() : session.status();
}

TEST(StreamSchedule, AcceptsTheEventsOfPlanStreams) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "this build has no Gloo";
  // Loading rank 0 alone cannot finish the rendezvous: the check passes
  // when the error is about the peer, not the plan.
  Status s = loadMutated([](plan::RankProgram &) {});
  EXPECT_EQ(s.message().find("without waiting"), std::string::npos)
      << s.toString();
}

TEST(StreamSchedule, RefusesADroppedWait) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "this build has no Gloo";
  std::string reader;
  Status s = loadMutated([&](plan::RankProgram &p) {
    // The first stream-0 instruction that waits for a collective forgets to.
    for (plan::Instruction &in : *p.mutable_instructions())
      if (in.stream() == 0 && in.wait_events_size() > 0) {
        in.clear_wait_events();
        reader = in.kernel();
        return;
      }
  });
  ASSERT_FALSE(reader.empty());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
  EXPECT_NE(s.message().find("on stream 0 reads"), std::string::npos)
      << s.toString();
  EXPECT_NE(s.message().find("'" + reader + "'"), std::string::npos)
      << s.toString();
  EXPECT_NE(s.message().find("writes on stream 1, without waiting"),
            std::string::npos)
      << s.toString();
  EXPECT_NE(s.message().find("rank 0 program"), std::string::npos)
      << s.toString();
}

TEST(StreamSchedule, RefusesACollectiveThatDoesNotWaitForItsInput) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "this build has no Gloo";
  // The output dist (the last collective) reads the lookup's result, which
  // stream 0 computes: without its wait it would send what is not there.
  Status s = loadMutated([](plan::RankProgram &p) {
    for (int i = p.instructions_size() - 1; i >= 0; --i)
      if (p.instructions(i).stream() == 1) {
        p.mutable_instructions(i)->clear_wait_events();
        return;
      }
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
  EXPECT_NE(s.message().find("'pooled_all_to_all' (sparse_arch.output_dist) "
                             "on stream 1 reads"),
            std::string::npos)
      << s.toString();
  EXPECT_NE(s.message().find("writes on stream 0, without waiting"),
            std::string::npos)
      << s.toString();
}

TEST(StreamSchedule, RefusesAMemoryPlanThatReusesACollectiveBuffer) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "this build has no Gloo";
  Status s = loadMutated(
      [](plan::RankProgram &p) {
        // After the output dist (stream 1, never awaited: it only feeds the
        // output) comes a stream-0 relu whose result the memory plan puts where
        // the output dist's input lies. In program order their lifetimes do
        // not meet; on two streams the relu may overwrite what is being sent.
        const int last = p.instructions_size() - 1;
        ASSERT_EQ(p.instructions(last).kernel(), "pooled_all_to_all");
        const int sent = p.instructions(last).inputs(0);
        const int dense = p.instructions(0).inputs(0);
        const int extra = p.slots_size();
        plan::Slot *slot = p.add_slots();
        *slot = p.slots(p.instructions(0).outputs(0));
        slot->set_name("late_relu");
        plan::Instruction *relu = p.add_instructions();
        relu->set_kernel("relu");
        relu->add_inputs(dense);
        relu->add_outputs(extra);
        relu->set_name("late_relu");
        p.mutable_slots(sent)->set_arena_offset(0);
        p.mutable_slots(extra)->set_arena_offset(0);
        p.set_arena_bytes(1 << 20);
      },
      [](plan::Plan &plan) {
        std::set<std::string> symbols;
        for (const plan::Slot &slot : plan.programs(0).slots())
          for (const plan::Dim &d : slot.shape())
            if (d.kind_case() == plan::Dim::kSymbol)
              symbols.insert(d.symbol());
        for (const std::string &symbol : symbols) {
          plan::SymbolBound *bound = plan.add_symbol_bounds();
          bound->set_symbol(symbol);
          bound->set_max(64);
        }
      });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
  EXPECT_NE(s.message().find("'relu' (late_relu) on stream 0 writes"),
            std::string::npos)
      << s.toString();
  EXPECT_NE(s.message().find("at static arena offset 0, over the memory of"),
            std::string::npos)
      << s.toString();
  EXPECT_NE(s.message().find("'pooled_all_to_all' (sparse_arch.output_dist) "
                             "uses on stream 1"),
            std::string::npos)
      << s.toString();
}

TEST(StreamOverlapErrors, CollectiveTimeoutOnTheCommunicationThread) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "this build has no Gloo";
  TempDir dir;
  ShardedTestModel m = makeTableWiseTestModel(5);
  auto plan = writeShardedTestPlan(m, TestSharding::kTableWise, 2, dir.path(),
                                   "sharded");
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  rewritePlan(*plan, [](plan::Plan &p) {
    for (plan::RankProgram &program : *p.mutable_programs())
      assignStreams(program);
  });
  ShardedTestBatch global = makeShardedTestBatch(m, 6, 3);
  Status rank0Status;
  double seconds = 0;
  {
    std::vector<std::unique_ptr<Session>> sessions(2);
    SessionOptions o;
    o.collectiveTimeoutSeconds = 2;
    runOnRankThreads(2, [&](int r) {
      auto session =
          Session::load(*plan, rankSessionOptions(o, r, 2, dir.file("store")));
      ASSERT_TRUE(session.isOk()) << session.status().toString();
      sessions[r] = std::move(*session);
    });
    ASSERT_TRUE(sessions[0] && sessions[1]);
    ASSERT_TRUE(sessions[0]->overlapsStreams());
    // Rank 1 never runs: rank 0's first collective hears nothing.
    ShardedTestBatch local = rankSlice(m, global, 2, 0);
    RunInputs in = shardedTestInputs(m, local);
    RunOutputs out;
    auto start = std::chrono::steady_clock::now();
    rank0Status = sessions[0]->run(in, &out);
    seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    EXPECT_EQ(out.size(), 0u);
    // Both sessions (and rank 0's communication thread) go away here.
  }
  EXPECT_FALSE(rank0Status.isOk());
  EXPECT_NE(rank0Status.message().find("rank 1"), std::string::npos)
      << rank0Status.toString();
  EXPECT_NE(rank0Status.message().find("all_to_all"), std::string::npos)
      << rank0Status.toString();
  EXPECT_LT(seconds, 20.0);
}

TEST(StreamOverlapErrors, BadOptions) {
  TempDir dir;
  ShardedTestModel m = makeTableWiseTestModel(5);
  auto plan = writeSingleRankTestPlan(m, dir.path(), "single");
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  SessionOptions o;
  o.overlap = "sometimes";
  auto session = Session::load(*plan, o);
  ASSERT_FALSE(session.isOk());
  EXPECT_NE(session.status().message().find("SessionOptions.overlap"),
            std::string::npos)
      << session.status().toString();
  o.overlap = "streams";
  {
    ScopedEnv delay("EMBER_TEST_COMM_DELAY_US", "soon");
    auto bad = Session::load(*plan, o);
    ASSERT_FALSE(bad.isOk());
    EXPECT_NE(bad.status().message().find("EMBER_TEST_COMM_DELAY_US"),
              std::string::npos);
  }
  // A one-stream plan runs in program order whatever the option says.
  auto one = Session::load(*plan, o);
  ASSERT_TRUE(one.isOk()) << one.status().toString();
  EXPECT_FALSE((*one)->overlapsStreams());
}

TEST(TraceParts, MergeChecksItsParts) {
  SessionTrace t;
  t.rank = 0;
  t.worldSize = 2;
  t.instructions = {{"relu", "dense", -1}, {"all_to_all", "a2a", 0}};
  t.runs = {{{0, 0, false, 1000, 3000, 64},
             {1, 1, false, 2000, 9000, 128},
             {1, 0, true, 3000, 9000, 0}}};
  std::string part0 = encodeTracePart(t);
  EXPECT_FALSE(mergeTraceParts({part0}, {}).isOk());        // rank 1 missing
  EXPECT_FALSE(mergeTraceParts({part0, part0}, {}).isOk()); // twice rank 0
  EXPECT_FALSE(mergeTraceParts({"hello\n"}, {}).isOk());
  t.rank = 1;
  std::string part1 = encodeTracePart(t);
  auto merged = mergeTraceParts({part1, part0}, {{"plan", "\"x.plan\""}});
  ASSERT_TRUE(merged.isOk()) << merged.status().toString();
  const std::string &json = *merged;
  EXPECT_NE(json.find("\"ts\":0.000,\"dur\":2.000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ph\":\"s\",\"pid\":0,\"tid\":1,\"id\":0"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"ph\":\"f\",\"pid\":1,\"tid\":1,\"id\":0"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"name\":\"wait all_to_all\",\"cat\":\"wait\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"plan\": \"x.plan\""), std::string::npos);
  TraceSplit split = summarizeTrace(t);
  EXPECT_EQ(split.runs, 1);
  EXPECT_DOUBLE_EQ(split.stepMs, 0.008);
  EXPECT_DOUBLE_EQ(split.computeMs, 0.002);
  EXPECT_DOUBLE_EQ(split.commMs, 0.007);
  EXPECT_DOUBLE_EQ(split.exposedCommMs, 0.006);
}

// A pipelined run's collective thread (track 2) exchanges while the
// communication thread (track 1) does: comm counts the time with a
// collective in flight once, and the part file names track 2.
TEST(TraceParts, OverlappingCollectivesOfTwoThreadsCountOnce) {
  SessionTrace t;
  t.rank = 0;
  t.worldSize = 2;
  t.instructions = {{"kjt_all_to_all", "in", 0},
                    {"relu", "dense", -1},
                    {"pooled_all_to_all", "out", 1}};
  // in: 1000..5000 on track 1; out: 3000..8000 on track 2 (overlap 2 us);
  // a second `in` 10000..11000; relu 5000..6000.
  t.runs = {{{0, 1, false, 1000, 5000, 64},
             {1, 0, false, 5000, 6000, 64},
             {2, 2, false, 3000, 8000, 128},
             {0, 1, false, 10000, 11000, 64}}};
  TraceSplit split = summarizeTrace(t);
  EXPECT_DOUBLE_EQ(split.commMs, 0.008); // 1000..8000 and 10000..11000
  EXPECT_DOUBLE_EQ(split.computeMs, 0.001);
  EXPECT_DOUBLE_EQ(split.exposedCommMs, 0.0);
  std::string part = encodeTracePart(t);
  EXPECT_NE(part.find("\"tid\":2,\"args\":{\"name\":\"stream 1 (output "
                      "collectives, pipelined)\"}"),
            std::string::npos)
      << part;
}

} // namespace
