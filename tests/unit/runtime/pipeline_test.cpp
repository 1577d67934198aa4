//===- pipeline_test.cpp - Cross-batch pipelining -------------------------===//
//
// Session::runPipelined over the hand-built sharded plans
// (support/sharded_model.h), their streams, events and input distribution
// made by the compiler's own passes (compiler/plan/PlanStreams.cpp,
// PlanPipelineStages.cpp, which need no MLIR):
//   - on 2 and 4 ranks, table-wise and row-wise, at depth 1, 2, 3 and 5, also
//     with the communication thread slowed down (EMBER_TEST_COMM_DELAY_US),
//     every batch's outputs equal those of running the batches one by one
//     in program order (overlap "off"), bit for bit, and the trace has one
//     run per batch, with the input distribution on the communication
//     thread;
//   - the schedule: with the communication thread slowed, batch i+1's
//     compute-ahead part runs before the rest of batch i (batch i+2's at
//     depth 5 with stage B's collectives on their own thread), while a
//     stage-B collective of batch i is in flight (from the trace);
//   - marks that break the rules are refused at load (not a prefix, ranks
//     marking different collectives);
//   - bad arguments: depth 0, depth 2 on a plan without marks or with
//     overlap off, a batch with a missing input (named, before any
//     collective);
//   - ranks passing different batch counts or depths (both directions,
//     depth 1 too): every rank gets an error naming both ranks' values at
//     once, no abort, and the session runs the next call; the agreement
//     that finds it costs microseconds; what it does not cover, one rank
//     calling run while the other calls runPipelined, still ends the
//     process (a death test, as documented);
//   - the C API (ember_session_run_pipelined) gives the same bytes, and
//     refuses depth 0 and NULL arguments;
//   - a kernel that fails mid-pipeline (an id out of range in batch 2)
//     fails the call on every rank (the others hear nothing and time out),
//     no hang, the communication threads joined, at depth 2, 3 and 5: the
//     owner's kernel fails, the other rank's collective fails (times out).
// Labelled tsan too: the ThreadSanitizer stage runs it.
//
//===----------------------------------------------------------------------===//
#include "comm/comm_options.h"
#include "ember/c_api.h"
#include "ember/session.h"
#include "ember/trace.h"
#include "plan/PlanPipelineStages.h"
#include "plan/PlanStreams.h"
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
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>

using namespace ember;
using namespace ember::testing;

namespace {

/// Rewrites the plan at `path`: collectives on stream 1, then the
/// compiler's overlap schedule, input distribution and events (unless
/// `marks` is false: then the marks are cleared, as in an older plan).
void compileStreams(const std::string &path, bool marks = true) {
  plan::Plan plan;
  ASSERT_TRUE(plan.ParseFromString(readFileBytes(path)));
  // As PlanFinalization does: the same collectives in every rank's input
  // distribution.
  int inputCollectives = -1;
  for (plan::RankProgram &program : *plan.mutable_programs()) {
    for (plan::Instruction &in : *program.mutable_instructions())
      if (in.collective() > 0)
        in.set_stream(1);
    int count =
        mlir::ember::plan_emitter::leadingIndependentCollectives(program);
    inputCollectives =
        inputCollectives < 0 ? count : std::min(inputCollectives, count);
  }
  for (plan::RankProgram &program : *plan.mutable_programs()) {
    mlir::ember::plan_emitter::assignCommunicationStream(program,
                                                         inputCollectives);
    int marked = 0;
    for (plan::Instruction &in : *program.mutable_instructions()) {
      marked += in.input_distribution();
      if (!marks)
        in.set_input_distribution(false);
    }
    EXPECT_GT(marked, 0);
  }
  std::string error;
  ASSERT_TRUE(writePlanFile(plan, path, &error)) << error;
}

struct RankRun {
  Status status;
  std::vector<OutputBytes> batches; // per batch
  SessionTrace trace;
  double seconds = 0;
};

/// Runs `globals` (one global batch each) on `world` ranks (threads): with
/// depth 0, `run` per batch; else runPipelined at that depth.
std::vector<RankRun> runRanks(const std::string &plan,
                              const ShardedTestModel &m,
                              const std::vector<ShardedTestBatch> &globals,
                              int world, const std::string &overlap,
                              const std::string &store, int depth,
                              double timeoutSeconds = 30,
                              const std::function<void(size_t, RunInputs &,
                                                       ShardedTestBatch &)>
                                  &edit = nullptr) {
  std::vector<RankRun> results(world);
  SessionOptions o;
  o.collectiveTimeoutSeconds = timeoutSeconds;
  o.overlap = overlap;
  o.recordTrace = true;
  o.threads = 2;
  runSessionRanks(plan, world, store, o, [&](int r, Session &session) {
    std::vector<ShardedTestBatch> locals = rankSlices(m, globals, world, r);
    std::vector<RunInputs> inputs;
    for (ShardedTestBatch &local : locals) {
      inputs.push_back(shardedTestInputs(m, local));
      if (edit)
        edit(inputs.size() - 1, inputs.back(), local);
    }
    auto start = std::chrono::steady_clock::now();
    if (depth == 0) {
      for (RunInputs &in : inputs) {
        RunOutputs out;
        results[r].status = session.run(in, &out);
        if (!results[r].status.isOk())
          break;
        results[r].batches.push_back(outputBytes(out));
      }
    } else {
      std::vector<RunOutputs> outs;
      results[r].status = session.runPipelined(inputs, depth, &outs);
      for (const RunOutputs &out : outs)
        results[r].batches.push_back(outputBytes(out));
    }
    results[r].seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    results[r].trace = session.takeTrace();
  });
  return results;
}

class PipelineTest : public ::testing::TestWithParam<ShardingCase> {
protected:
  void SetUp() override {
    if (!haveCommunicatorBackend())
      GTEST_SKIP() << "this build has no Gloo";
    const ShardingCase c = GetParam();
    model_ = shardingCaseModel(c);
    // Compute after the pooled embeddings arrive (stage B's rest).
    model_.interaction = true;
    auto sharded = writeShardedTestPlan(model_, c.sharding, c.world,
                                        dir_.path(), "sharded");
    ASSERT_TRUE(sharded.isOk()) << sharded.status().toString();
    plan_ = *sharded;
    compileStreams(plan_);
    batches_ = makeShardedTestBatches(model_, 4, c.batch, 40);
  }

  TempDir dir_;
  ShardedTestModel model_;
  std::string plan_;
  std::vector<ShardedTestBatch> batches_;
};

TEST_P(PipelineTest, SameBytesAsOneByOneInProgramOrder) {
  const int world = GetParam().world;
  auto reference =
      runRanks(plan_, model_, batches_, world, "off", dir_.file("s0"), 0);
  for (int r = 0; r < world; ++r) {
    ASSERT_TRUE(reference[r].status.isOk()) << reference[r].status.toString();
    ASSERT_EQ(reference[r].batches.size(), batches_.size());
    // Different batches give different outputs: a batch mixed up shows.
    EXPECT_NE(reference[r].batches[0], reference[r].batches[1]);
  }
  int store = 1;
  // Stage B's collectives on a thread of their own (the default) and on the
  // communication thread after the input distribution.
  for (const char *oneThread : {"0", "1"}) {
  ScopedEnv threads("EMBER_TEST_ONE_COMM_THREAD", oneThread);
  for (const char *delay : {"0", "20000"}) {
    ScopedEnv slow("EMBER_TEST_COMM_DELAY_US", delay);
    // Depth 5: the caller computes two batches ahead (on the collective
    // thread; one on the communication thread).
    for (int depth : {1, 2, 3, 5}) {
      auto piped = runRanks(plan_, model_, batches_, world, "streams",
                            dir_.file("s" + std::to_string(store++)), depth);
      for (int r = 0; r < world; ++r) {
        SCOPED_TRACE("rank " + std::to_string(r) + ", depth " +
                     std::to_string(depth) + ", delay " + delay +
                     ", one communication thread " + oneThread);
        ASSERT_TRUE(piped[r].status.isOk()) << piped[r].status.toString();
        EXPECT_EQ(piped[r].batches, reference[r].batches);
        ASSERT_EQ(piped[r].trace.runs.size(), batches_.size());
        if (depth < 2)
          continue;
        // The input distribution (instructions marked, among them a
        // collective) ran on the communication thread.
        int distributed = 0;
        for (const TraceSlice &s : piped[r].trace.runs[1])
          if (!s.wait && s.instruction == 0)
            distributed += s.track == 1;
        EXPECT_EQ(distributed, 1);
      }
    }
  }
  }
}

/// Where a rank program's stages end, found from the data (not from the
/// events the runtime reads): stage A is the marked prefix; the
/// compute-ahead part ends at the first stream-0 instruction after it that
/// reads a slot a stream-1 instruction after it writes.
struct Stages {
  int inputEnd = 0;
  int aheadEnd = 0;
};
Stages stagesOf(const std::string &planPath, int rank) {
  plan::Plan plan;
  EXPECT_TRUE(plan.ParseFromString(readFileBytes(planPath)));
  const plan::RankProgram &p = plan.programs(rank);
  Stages st;
  const int n = p.instructions_size();
  while (st.inputEnd < n && p.instructions(st.inputEnd).input_distribution())
    ++st.inputEnd;
  std::vector<int> writer(p.slots_size(), -1);
  for (int i = 0; i < n; ++i)
    for (int s : p.instructions(i).outputs())
      if (s >= 0)
        writer[s] = i;
  st.aheadEnd = n;
  for (int i = st.inputEnd; i < n && st.aheadEnd == n; ++i) {
    const plan::Instruction &in = p.instructions(i);
    if (in.stream() != 0)
      continue;
    for (int s : in.inputs())
      if (s >= 0 && writer[s] >= st.inputEnd &&
          p.instructions(writer[s]).stream() == 1)
        st.aheadEnd = i;
  }
  return st;
}

// The schedule itself (docs/runtime.md, "Cross-batch pipelining"): with the
// communication thread slowed down, at depth 2 and 3, the caller computes
// batch i+1's compute-ahead part (lookups, what needs no stage-B
// collective) before the rest of batch i, and some stage-B collective of
// batch i runs while the caller computes batch i+1; at depth 5, with stage
// B's collectives on their own thread, batch i+2's before the rest of
// batch i (one batch ahead on one communication thread). Fails when the
// caller runs the batches one after the other, or fewer ahead.
TEST_P(PipelineTest, ComputesTheNextBatchAheadWhileThisOnesCollectivesRun) {
  const int world = GetParam().world;
  ScopedEnv slow("EMBER_TEST_COMM_DELAY_US", "20000");
  // Batches large enough that the caller's compute (lookups over 20,000
  // bags per rank) takes longer than a thread hand-off.
  std::vector<ShardedTestBatch> large =
      makeShardedTestBatches(model_, 4, 20000 * world, 90);
  int store = 0;
  for (bool oneThread : {false, true}) {
  ScopedEnv threads("EMBER_TEST_ONE_COMM_THREAD", oneThread ? "1" : "0");
  // Where stage B's collectives run: their own thread (track 2), or the
  // communication thread after the input distribution (track 1).
  const int collectiveTrack = oneThread ? 1 : 2;
  for (int depth : {2, 3, 5}) {
    // How many batches ahead the caller computes.
    const size_t lead = depth >= 5 && !oneThread ? 2 : 1;
    auto piped = runRanks(plan_, model_, large, world, "streams",
                          dir_.file("o" + std::to_string(store++)), depth);
    for (int r = 0; r < world; ++r) {
      SCOPED_TRACE("rank " + std::to_string(r) + ", depth " +
                   std::to_string(depth) + ", one communication thread " +
                   (oneThread ? "yes" : "no"));
      ASSERT_TRUE(piped[r].status.isOk()) << piped[r].status.toString();
      const Stages st = stagesOf(plan_, r);
      ASSERT_GT(st.inputEnd, 0);
      ASSERT_GT(st.aheadEnd, st.inputEnd); // the lookups come before
      const auto &runs = piped[r].trace.runs;
      ASSERT_EQ(runs.size(), large.size());
      auto computes = [&](size_t b, int from, int to) {
        std::vector<const TraceSlice *> out;
        for (const TraceSlice &s : runs[b])
          if (!s.wait && s.track == 0 && s.instruction >= from &&
              s.instruction < to)
            out.push_back(&s);
        return out;
      };
      const int n = static_cast<int>(piped[r].trace.instructions.size());
      auto isCollective = [&](const TraceSlice &s) {
        return !s.wait &&
               piped[r].trace.instructions[s.instruction].collectiveSequence >=
                   0;
      };
      // Every collective on its thread: the input distribution's on the
      // communication thread, stage B's on `collectiveTrack`.
      for (const auto &run : runs)
        for (const TraceSlice &s : run)
          if (isCollective(s))
            EXPECT_EQ(s.track, s.instruction < st.inputEnd ? 1
                                                           : collectiveTrack)
                << "instruction " << s.instruction;
      // With a thread each, a stage-B collective of a batch runs while a
      // later batch's input distribution does (they do not take turns).
      bool shared = false;
      for (size_t i = 0; i < runs.size(); ++i)
        for (size_t j = i + 1; j < runs.size(); ++j)
          for (const TraceSlice &b : runs[i])
            for (const TraceSlice &a : runs[j])
              shared = shared ||
                       (isCollective(b) && b.instruction >= st.inputEnd &&
                        !a.wait && a.track == 1 &&
                        a.instruction < st.inputEnd &&
                        a.beginNs < b.endNs && b.beginNs < a.endNs);
      EXPECT_EQ(shared, !oneThread);
      bool overlapped = false;
      for (size_t i = 0; i + lead < runs.size(); ++i) {
        auto ahead = computes(i + lead, st.inputEnd, st.aheadEnd);
        auto rest = computes(i, st.aheadEnd, n);
        ASSERT_FALSE(ahead.empty());
        ASSERT_FALSE(rest.empty());
        int64_t aheadEnd = 0, restBegin = INT64_MAX;
        for (const TraceSlice *s : ahead)
          aheadEnd = std::max(aheadEnd, s->endNs);
        for (const TraceSlice *s : rest)
          restBegin = std::min(restBegin, s->beginNs);
        EXPECT_LE(aheadEnd, restBegin)
            << "batch " << i + lead << "'s compute-ahead part ran after batch "
            << i << "'s rest began";
        // On one communication thread, a stage-B collective of batch i in
        // flight while batch i+1's compute ran (it is queued behind batch
        // i+1's input distribution). On a thread of their own they may
        // finish before: the check above is theirs.
        if (!oneThread)
          continue;
        for (const TraceSlice &c : runs[i])
          if (!c.wait && c.track == collectiveTrack &&
              c.instruction >= st.inputEnd &&
              piped[r].trace.instructions[c.instruction].collectiveSequence >=
                  0)
            for (const TraceSlice *s : ahead)
              overlapped = overlapped ||
                           (s->beginNs < c.endNs && c.beginNs < s->endNs);
      }
      if (oneThread)
        EXPECT_TRUE(overlapped);
    }
  }
  }
}

INSTANTIATE_TEST_SUITE_P(Shardings, PipelineTest, twoAndFourRankCases(),
                         shardingCaseName);

/// A 2-rank table-wise plan compiled with streams (with or without marks).
std::string writePlan(TempDir &dir, const ShardedTestModel &m, bool marks) {
  auto plan = writeShardedTestPlan(m, TestSharding::kTableWise, 2, dir.path(),
                                   marks ? "marked" : "unmarked");
  EXPECT_TRUE(plan.isOk()) << plan.status().toString();
  compileStreams(*plan, marks);
  return *plan;
}

/// model_ (table-wise) and its 2-rank plan compiled with streams and
/// marks, plan_, in dir_; skipped without Gloo.
class MarkedTwoRankPlan : public ::testing::Test {
protected:
  void SetUp() override {
    if (!haveCommunicatorBackend())
      GTEST_SKIP() << "this build has no Gloo";
    plan_ = writePlan(dir_, model_, true);
  }

  TempDir dir_;
  ShardedTestModel model_ = makeTableWiseTestModel(5);
  std::string plan_;
};
using PipelineErrors = MarkedTwoRankPlan;
using PipelineErrorsDeathTest = MarkedTwoRankPlan;
using PipelineCApi = MarkedTwoRankPlan;
using PipelineStages = MarkedTwoRankPlan;

TEST_F(PipelineErrors, BadArguments) {
  const std::string unmarked = writePlan(dir_, model_, false);
  std::vector<ShardedTestBatch> batches =
      makeShardedTestBatches(model_, 2, 6, 1);
  auto expectAll = [](const std::vector<RankRun> &runs,
                      const std::string &needle) {
    for (const RankRun &run : runs) {
      EXPECT_FALSE(run.status.isOk());
      EXPECT_EQ(run.status.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(run.status.message().find(needle), std::string::npos)
          << run.status.toString();
      EXPECT_TRUE(run.batches.empty());
    }
  };
  expectAll(runRanks(plan_, model_, batches, 2, "streams", dir_.file("a"), -1),
            "pipeline depth -1");
  expectAll(
      runRanks(unmarked, model_, batches, 2, "streams", dir_.file("b"), 2),
      "marks no input distribution");
  expectAll(runRanks(plan_, model_, batches, 2, "off", dir_.file("c"), 2),
            "overlap 'off'");
  // A batch whose dense input has the wrong width: refused before any
  // collective, on both ranks, naming the batch.
  std::vector<RankRun> bad = runRanks(
      plan_, model_, batches, 2, "streams", dir_.file("d"), 2, 5,
      [](size_t b, RunInputs &in, ShardedTestBatch &local) {
        if (b == 1)
          in.set("dense",
                 Tensor::view(local.dense.data(), DType::kFloat32, {1, 2}));
      });
  for (const RankRun &run : bad) {
    EXPECT_FALSE(run.status.isOk());
    EXPECT_NE(run.status.message().find("batch 1"), std::string::npos)
        << run.status.toString();
    EXPECT_LT(run.seconds, 4.0) << run.status.toString();
  }
}

TEST_F(PipelineErrors, KernelFailingMidPipeline) {
  std::vector<ShardedTestBatch> batches =
      makeShardedTestBatches(model_, 5, 6, 60);
  // An id far outside every table in batch 2: its owner's lookup fails
  // (bounds check fatal) while the next batch's input distribution is
  // under way.
  ASSERT_FALSE(batches[2].values.empty());
  batches[2].values[0] = int64_t{1} << 40;
  // Depth 5: batch 2's lookup fails while the caller computes it two
  // batches ahead, before batch 0 is finished.
  for (int depth : {2, 3, 5}) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    auto runs = runRanks(plan_, model_, batches, 2, "streams",
                         dir_.file("e" + std::to_string(depth)), depth, 2);
    bool named = false;
    int collectiveFailures = 0;
    for (const RankRun &run : runs) {
      EXPECT_FALSE(run.status.isOk());
      EXPECT_TRUE(run.batches.empty());
      EXPECT_LT(run.seconds, 20.0) << run.status.toString();
      named =
          named || run.status.message().find("batch 2") != std::string::npos;
      collectiveFailures +=
          run.status.message().find("all_to_all") != std::string::npos;
    }
    EXPECT_TRUE(named) << runs[0].status.toString() << " / "
                       << runs[1].status.toString();
    // The rank that did not fail itself heard it as a failed collective.
    EXPECT_GE(collectiveFailures, 1) << runs[0].status.toString() << " / "
                                     << runs[1].status.toString();
  }
}

/// What one rank of MismatchedCalls did: its runPipelined call, then (the
/// session still usable?) the same 2 batches on every rank at depth 2,
/// and those batches run one by one for comparison.
struct MismatchRun {
  Status status;
  size_t outputsLeft = 0;
  double seconds = 0;
  Status after;
  std::vector<OutputBytes> afterPiped, afterOneByOne;
};

/// Rank r calls runPipelined with counts[r] batches at depths[r] (2 ranks,
/// threads), then every rank runs batches 0 and 1 at depth 2.
std::vector<MismatchRun> runMismatched(const std::string &plan,
                                       const ShardedTestModel &m,
                                       const std::vector<ShardedTestBatch> &globals,
                                       const std::string &store,
                                       const std::vector<size_t> &counts,
                                       const std::vector<int> &depths) {
  const int world = 2;
  std::vector<MismatchRun> results(world);
  SessionOptions o;
  o.collectiveTimeoutSeconds = 10;
  o.overlap = "streams";
  o.threads = 2;
  runSessionRanks(plan, world, store, o, [&](int r, Session &session) {
    std::vector<ShardedTestBatch> locals = rankSlices(m, globals, world, r);
    std::vector<RunInputs> inputs;
    for (ShardedTestBatch &local : locals)
      inputs.push_back(shardedTestInputs(m, local));
    std::vector<RunInputs> mine(inputs.begin(), inputs.begin() + counts[r]);
    std::vector<RunOutputs> outs(1); // cleared by the error
    auto start = std::chrono::steady_clock::now();
    results[r].status = session.runPipelined(mine, depths[r], &outs);
    results[r].seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    results[r].outputsLeft = outs.size();
    std::vector<RunInputs> two(inputs.begin(), inputs.begin() + 2);
    results[r].after = session.runPipelined(two, 2, &outs);
    for (const RunOutputs &out : outs)
      results[r].afterPiped.push_back(outputBytes(out));
    for (const RunInputs &in : two) {
      RunOutputs out;
      Status s = session.run(in, &out);
      if (!s.isOk()) {
        results[r].after = s;
        break;
      }
      results[r].afterOneByOne.push_back(outputBytes(out));
    }
  });
  return results;
}

// Ranks that call runPipelined with different batch counts or depths (in
// either direction, at depth 1 too) all get an error naming both ranks'
// values, at once (no collective timeout, no abort: before the agreement
// Gloo aborted the process on the first collectives that did not pair),
// and the session stays usable.
TEST_F(PipelineErrors, RanksPassingDifferentBatchCountsOrDepths) {
  std::vector<ShardedTestBatch> batches =
      makeShardedTestBatches(model_, 4, 6, 70);
  struct Mismatch {
    std::vector<size_t> counts;
    std::vector<int> depths;
  };
  const std::vector<Mismatch> cases = {
      {{4, 3}, {2, 2}}, {{3, 4}, {2, 2}}, // batch counts, both directions
      {{4, 4}, {2, 3}}, {{4, 4}, {3, 2}}, // depths, both directions
      {{4, 4}, {1, 2}}, {{4, 4}, {2, 1}}, // depth 1 against pipelined
      {{4, 2}, {1, 1}},                   // batch counts at depth 1
      {{0, 3}, {3, 3}},                   // no batches on one rank
      {{4, 4}, {0, 2}},                   // a bad depth on one rank
  };
  int store = 0;
  for (const Mismatch &c : cases) {
    auto values = [&](int r) {
      return "rank " + std::to_string(r) + " passed " +
             std::to_string(c.counts[r]) + " batch(es) at depth " +
             std::to_string(c.depths[r]);
    };
    SCOPED_TRACE(values(0) + ", " + values(1));
    auto runs = runMismatched(plan_, model_, batches,
                              dir_.file("m" + std::to_string(store++)),
                              c.counts, c.depths);
    for (int r = 0; r < 2; ++r) {
      SCOPED_TRACE("on rank " + std::to_string(r));
      const MismatchRun &run = runs[r];
      const int other = 1 - r;
      EXPECT_EQ(run.status.code(), StatusCode::kInvalidArgument)
          << run.status.toString();
      const std::string expected =
          "runPipelined: " + values(r) + ", rank " + std::to_string(other) +
          " passed " + std::to_string(c.counts[other]) + " at depth " +
          std::to_string(c.depths[other]) + "; every rank must pass the same";
      EXPECT_NE(run.status.message().find(expected), std::string::npos)
          << run.status.toString();
      EXPECT_EQ(run.outputsLeft, 0u);
      EXPECT_LT(run.seconds, 5.0) << "waited for a collective timeout";
      // Usable afterwards: the same call on every rank works and gives
      // the bytes of running the batches one by one.
      ASSERT_TRUE(run.after.isOk()) << run.after.toString();
      ASSERT_EQ(run.afterPiped.size(), 2u);
      EXPECT_EQ(run.afterPiped, run.afterOneByOne);
    }
  }
}

// Not covered by the agreement (docs/runtime.md explains why): one rank
// calling run while the other calls runPipelined. The agreement's exchange
// pairs with run's first one (the KJT all-to-all's sizes, larger), and
// Gloo ends the process on its network thread; run in a child process so
// that this binary survives, to keep the documented behaviour true.
TEST_F(PipelineErrorsDeathTest, RunAgainstRunPipelinedEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ShardedTestBatch global = makeShardedTestBatch(model_, 6, 5);
  auto mixCalls = [&] {
    SessionOptions o;
    o.collectiveTimeoutSeconds = 5;
    o.overlap = "streams";
    runSessionRanks(
        plan_, 2, dir_.file("mixed"), o, [&](int r, Session &session) {
          ShardedTestBatch local = rankSlice(model_, global, 2, r);
          std::vector<RunInputs> inputs = {shardedTestInputs(model_, local)};
          if (r == 0) {
            RunOutputs out;
            (void)session.run(inputs[0], &out);
          } else {
            std::vector<RunOutputs> outs;
            (void)session.runPipelined(inputs, 2, &outs);
          }
        });
    std::exit(0); // survived: the death test fails
  };
  // Rank 1's 16-byte receive (the agreement) gets rank 0's 40 bytes (the
  // sizes: 5 int64s).
  EXPECT_DEATH(mixCalls(), "Gloo's network thread failed.* 40 vs 16");
}

// The agreement is one all-gather of two int64s per call: measured with
// calls that run nothing else (no batches), it costs what a barrier does
// (printed), microseconds, against the milliseconds of a call that runs 4
// small batches.
TEST_F(PipelineErrors, AgreementCostsMicroseconds) {
  std::vector<ShardedTestBatch> batches =
      makeShardedTestBatches(model_, 4, 64, 20);
  constexpr int kCalls = 30;
  std::vector<double> agreeMicros(2), callMicros(2), barrierMicros(2);
  std::vector<Status> status(2);
  SessionOptions o;
  o.collectiveTimeoutSeconds = 30;
  o.overlap = "streams";
  o.threads = 2;
  auto measure = [&](int r, Session &session) {
    std::vector<RunInputs> inputs;
    std::vector<ShardedTestBatch> locals = rankSlices(model_, batches, 2, r);
    for (ShardedTestBatch &local : locals)
      inputs.push_back(shardedTestInputs(model_, local));
    std::vector<RunOutputs> outs;
    const std::vector<RunInputs> none;
    auto micros = [](auto start) {
      return std::chrono::duration<double, std::micro>(
                 std::chrono::steady_clock::now() - start)
          .count();
    };
    status[r] = session.runPipelined(inputs, 3, &outs); // warm up
    // Interleaved, so that all three see the same machine (a loaded
    // one slows every exchange alike), and medians: a shared machine
    // preempts a few calls for milliseconds.
    // The barrier first, so that the agreement after it does not also
    // wait for the other rank to finish its previous call.
    std::vector<double> agree, call, barrier;
    for (int i = 0; i < kCalls && status[r].isOk(); ++i) {
      auto start = std::chrono::steady_clock::now();
      status[r] = session.barrier();
      barrier.push_back(micros(start));
      start = std::chrono::steady_clock::now();
      if (status[r].isOk())
        status[r] = session.runPipelined(none, 3, &outs);
      agree.push_back(micros(start));
      start = std::chrono::steady_clock::now();
      if (status[r].isOk())
        status[r] = session.runPipelined(inputs, 3, &outs);
      call.push_back(micros(start));
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v.empty() ? 0.0 : v[v.size() / 2];
    };
    agreeMicros[r] = median(agree);
    callMicros[r] = median(call);
    barrierMicros[r] = median(barrier);
  };
  runSessionRanks(plan_, 2, dir_.file("store"), o, measure);
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(status[r].isOk()) << status[r].toString();
    std::printf("rank %d: median agreement (a call of no batches) %.1f us; "
                "median barrier %.1f us; median call of 4 batches (32 rows "
                "each per rank) %.1f us\n",
                r, agreeMicros[r], barrierMicros[r], callMicros[r]);
    // One exchange against the dozen or more of a call of 4 batches (each
    // batch's KJT all-to-all alone exchanges sizes, then ids): relative,
    // so that a loaded machine or ThreadSanitizer, which slow both, pass.
    EXPECT_LT(agreeMicros[r] * 2, callMicros[r]);
  }
}

TEST_F(PipelineCApi, SameBytesAsTheCppApiOneByOne) {
  std::vector<ShardedTestBatch> globals =
      makeShardedTestBatches(model_, 3, 6, 80);
  auto reference =
      runRanks(plan_, model_, globals, 2, "off", dir_.file("ref"), 0);
  const int64_t F = static_cast<int64_t>(model_.keys.size());
  runOnRankThreads(2, [&](int r) {
    ASSERT_TRUE(reference[r].status.isOk());
    EmberStatus *st = nullptr;
    EmberSessionOptions *options = ember_session_options_create();
    ASSERT_EQ(ember_session_options_set_rank(options, r, 2, &st), EMBER_OK);
    std::string rendezvous = "file:" + dir_.file("store");
    ASSERT_EQ(
        ember_session_options_set_rendezvous(options, rendezvous.c_str(), &st),
        EMBER_OK);
    EmberSession *session = nullptr;
    ASSERT_EQ(ember_session_create(plan_.c_str(), options, &session, &st),
              EMBER_OK)
        << ember_status_message(st);
    ember_session_options_free(options);
    std::vector<ShardedTestBatch> locals = rankSlices(model_, globals, 2, r);
    std::vector<EmberTensor *> tensors;
    std::vector<EmberInputs *> inputs;
    std::vector<const char *> keys;
    for (const std::string &k : model_.keys)
      keys.push_back(k.c_str());
    for (ShardedTestBatch &local : locals) {
      int64_t denseDims[2] = {local.batch, ShardedTestModel::kDenseWidth};
      int64_t nValues = static_cast<int64_t>(local.values.size());
      int64_t nLengths = static_cast<int64_t>(local.lengths.size());
      int64_t nWeights = static_cast<int64_t>(local.weights.size());
      EmberTensor *dense = nullptr, *values = nullptr, *lengths = nullptr,
                  *weights = nullptr;
      ember_tensor_create_view(EMBER_FLOAT32, denseDims, 2, local.dense.data(),
                               &dense, &st);
      ember_tensor_create_view(EMBER_INT64, &nValues, 1, local.values.data(),
                               &values, &st);
      ember_tensor_create_view(EMBER_INT64, &nLengths, 1, local.lengths.data(),
                               &lengths, &st);
      if (model_.weighted)
        ember_tensor_create_view(EMBER_FLOAT32, &nWeights, 1,
                                 local.weights.data(), &weights, &st);
      EmberInputs *in = ember_inputs_create();
      ember_inputs_set_tensor(in, "dense", dense, &st);
      ASSERT_EQ(ember_inputs_set_kjt(in, "sparse", keys.data(), F, values,
                                     lengths, weights, &st),
                EMBER_OK)
          << ember_status_message(st);
      inputs.push_back(in);
      tensors.insert(tensors.end(), {dense, values, lengths, weights});
    }
    std::vector<EmberOutputs *> outputs(inputs.size(), nullptr);
    // Refused before anything runs (the same on both ranks).
    EXPECT_EQ(ember_session_run_pipelined(session, inputs.data(), inputs.size(),
                                          0, outputs.data(), &st),
              EMBER_INVALID_ARGUMENT);
    EXPECT_EQ(ember_session_run_pipelined(session, nullptr, inputs.size(), 2,
                                          outputs.data(), &st),
              EMBER_INVALID_ARGUMENT);
    ASSERT_EQ(ember_session_run_pipelined(session, inputs.data(), inputs.size(),
                                          2, outputs.data(), &st),
              EMBER_OK)
        << ember_status_message(st);
    for (size_t b = 0; b < outputs.size(); ++b) {
      ASSERT_NE(outputs[b], nullptr);
      OutputBytes got;
      for (size_t i = 0; i < ember_outputs_count(outputs[b]); ++i) {
        const EmberTensor *t = nullptr;
        ASSERT_EQ(ember_outputs_get(outputs[b],
                                    ember_outputs_name(outputs[b], i), &t, &st),
                  EMBER_OK);
        const uint8_t *p = static_cast<const uint8_t *>(ember_tensor_data(t));
        got.emplace_back(p, p + ember_tensor_nbytes(t));
      }
      EXPECT_EQ(got, reference[r].batches[b]) << "rank " << r << " batch " << b;
      ember_outputs_free(outputs[b]);
    }
    for (EmberInputs *in : inputs)
      ember_inputs_free(in);
    for (EmberTensor *t : tensors)
      ember_tensor_free(t);
    ember_status_free(st);
    ember_session_free(session);
  });
}

TEST_F(PipelineStages, BadMarksAreRefusedAtLoad) {
  auto loadMutated = [&](const std::function<void(plan::Plan &)> &mutate) {
    plan::Plan plan;
    EXPECT_TRUE(plan.ParseFromString(readFileBytes(plan_)));
    mutate(plan);
    const std::string path = dir_.file("mutated.plan");
    std::string error;
    EXPECT_TRUE(writePlanFile(plan, path, &error)) << error;
    SessionOptions o; // rank 0 of 2 fails before the rendezvous
    o.worldSize = 2;
    o.rendezvous = "file:" + dir_.file("store");
    o.collectiveTimeoutSeconds = 1;
    auto session = Session::load(path, o);
    return session.isOk() ? Status::ok() : session.status();
  };
  auto firstUnmarked = [](const plan::RankProgram &p) {
    int i = 0;
    while (i < p.instructions_size() && p.instructions(i).input_distribution())
      ++i;
    return i;
  };
  // An unmarked instruction between marked ones.
  Status s = loadMutated([&](plan::Plan &p) {
    plan::RankProgram &r0 = *p.mutable_programs(0);
    int end = firstUnmarked(r0);
    ASSERT_LT(end + 1, r0.instructions_size());
    r0.mutable_instructions(end + 1)->set_input_distribution(true);
  });
  EXPECT_NE(s.message().find("must be a prefix"), std::string::npos)
      << s.toString();
  // Everything of rank 0 marked: a prefix still, but with the pooled
  // all-to-all, which rank 1 does not mark.
  s = loadMutated([&](plan::Plan &p) {
    plan::RankProgram &r0 = *p.mutable_programs(0);
    int end = firstUnmarked(r0);
    ASSERT_LT(end, r0.instructions_size());
    for (int i = end; i < r0.instructions_size(); ++i)
      r0.mutable_instructions(i)->set_input_distribution(true);
  });
  EXPECT_NE(s.message().find("rank 0 program marks 2 collective(s) as its "
                             "input distribution, rank 1 program 1"),
            std::string::npos)
      << s.toString();
  // Rank 1 marks nothing: the ranks would pair different collectives.
  s = loadMutated([&](plan::Plan &p) {
    for (plan::Instruction &in : *p.mutable_programs(1)->mutable_instructions())
      in.set_input_distribution(false);
  });
  EXPECT_NE(s.message().find("every rank must mark the same collectives"),
            std::string::npos)
      << s.toString();
}

} // namespace
