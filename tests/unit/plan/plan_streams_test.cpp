//===- plan_streams_test.cpp - The communication-stream schedule ----------===//
//
// assignCommunicationStream on random programs (random DAGs of compute and
// collective instructions, the collectives on stream 1 as the emitter puts
// them after ember-assign-streams), checked against what the CUDA runtime relies on,
// by replaying the streams and events:
//   - the result is a permutation of the instructions in a topological order,
//     with the collectives in their original order;
//   - collectives on stream 1, everything else on stream 0;
//   - every read of a slot happens after its definition (program order on a
//     stream, record -> wait across streams);
//   - a collective happens after every stream-0 instruction issued before it;
//   - every slot a collective reads or writes is kept alive (keepUntil) until
//     the first stream-0 instruction that happens after the collective, or
//     the end of the program;
//   - the input distribution (PlanPipelineStages.cpp) is a prefix of the
//     program, reads only program inputs and its own results, and holds
//     exactly the first collectives that read no collective's result
//     (directly or through compute); by hand: bucketize and the KJT
//     all-to-all go first, the MLP and what needs the all-to-all after.
//
//===----------------------------------------------------------------------===//
#include "plan/PlanStreams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace mlir::ember::plan_emitter;
namespace pb = ::ember::plan;

namespace {

/// Appends instruction `name` to `p`, reading `inputs` and defining
/// `output`: the collective `collectiveKernel` on stream 1 (where the
/// emitter puts collectives after ember-assign-streams), or, without one, a
/// "linear".
void addInstruction(pb::RankProgram &p, const std::string &name,
                    const std::vector<int> &inputs, int output,
                    const char *collectiveKernel = nullptr) {
  pb::Instruction *in = p.add_instructions();
  in->set_name(name);
  in->set_kernel(collectiveKernel ? collectiveKernel : "linear");
  if (collectiveKernel) {
    in->set_collective(1);
    in->set_stream(1);
  }
  for (int s : inputs)
    in->add_inputs(s);
  in->add_outputs(output);
}

/// A program of `n` unnamed slots and no instructions yet.
pb::RankProgram programWithSlots(int n) {
  pb::RankProgram p;
  for (int s = 0; s < n; ++s)
    p.add_slots();
  return p;
}

/// A random program: `inputs` program inputs, then `n` instructions, each
/// reading 1-3 earlier slots and defining one; about a fifth collectives.
pb::RankProgram randomProgram(std::mt19937 &rng, int n, int inputs) {
  pb::RankProgram p;
  for (int s = 0; s < inputs + n; ++s)
    p.add_slots()->set_name("s" + std::to_string(s));
  for (int i = 0; i < n; ++i) {
    bool collective = std::uniform_int_distribution<int>(0, 4)(rng) == 0;
    int available = inputs + i;
    int reads = std::uniform_int_distribution<int>(1, 3)(rng);
    std::vector<int> read;
    for (int r = 0; r < reads; ++r)
      read.push_back(std::uniform_int_distribution<int>(0, available - 1)(rng));
    addInstruction(p, "i" + std::to_string(i), read, inputs + i,
                   collective ? "pooled_all_to_all" : nullptr);
  }
  return p;
}

/// happensBefore[a][b]: instruction a (new order) completes before b starts,
/// replaying program order per stream and record -> wait edges.
std::vector<std::vector<char>> happensBefore(const pb::RankProgram &p) {
  const int n = p.instructions_size();
  std::vector<std::vector<char>> hb(n, std::vector<char>(n, 0));
  std::vector<int> lastOnStream(2, -1);
  std::vector<int> recordedBy(p.num_events(), -1);
  for (int j = 0; j < n; ++j) {
    const pb::Instruction &in = p.instructions(j);
    std::vector<int> preds;
    if (lastOnStream[in.stream()] >= 0)
      preds.push_back(lastOnStream[in.stream()]);
    for (int e : in.wait_events()) {
      EXPECT_GE(recordedBy[e], 0)
          << "event " << e << " awaited before it is recorded";
      if (recordedBy[e] >= 0)
        preds.push_back(recordedBy[e]);
    }
    for (int q : preds) {
      hb[q][j] = 1;
      for (int a = 0; a < n; ++a)
        if (hb[a][q])
          hb[a][j] = 1;
    }
    lastOnStream[in.stream()] = j;
    for (int e : in.record_events())
      recordedBy[e] = j;
  }
  return hb;
}

TEST(PlanStreams, RandomProgramsKeepTheRuntimeContract) {
  std::mt19937 rng(1234);
  int withCollectives = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, 40)(rng);
    const int inputs = 3;
    pb::RankProgram original = randomProgram(rng, n, inputs);
    pb::RankProgram p = original;
    std::vector<int> keepUntil = assignCommunicationStream(p);
    ASSERT_EQ(p.instructions_size(), n);
    ASSERT_EQ(static_cast<int>(keepUntil.size()), p.slots_size());

    // Which original instruction each new position holds (outputs are unique).
    std::vector<int> origin(n);
    std::set<int> seen;
    for (int j = 0; j < n; ++j) {
      origin[j] = p.instructions(j).outputs(0) - inputs;
      EXPECT_EQ(p.instructions(j).name(), "i" + std::to_string(origin[j]));
      seen.insert(origin[j]);
    }
    ASSERT_EQ(static_cast<int>(seen.size()), n) << "not a permutation";

    bool anyCollective = false;
    for (int j = 0; j < n; ++j)
      anyCollective |= p.instructions(j).collective() > 0;
    if (!anyCollective) {
      EXPECT_EQ(p.num_streams(), 0) << "no collective: nothing changes";
      for (int j = 0; j < n; ++j)
        EXPECT_EQ(origin[j], j);
      continue;
    }
    ++withCollectives;
    EXPECT_EQ(p.num_streams(), 2);

    std::vector<int> definedAt(p.slots_size(), -1);
    int lastCollectiveOrigin = -1;
    for (int j = 0; j < n; ++j) {
      const pb::Instruction &in = p.instructions(j);
      bool collective = in.collective() > 0;
      EXPECT_EQ(in.stream(), collective ? 1 : 0);
      for (int s : in.inputs())
        EXPECT_TRUE(s < inputs || definedAt[s] >= 0)
            << "slot " << s << " read before it is defined";
      if (collective) {
        EXPECT_GT(origin[j], lastCollectiveOrigin) << "collectives reordered";
        lastCollectiveOrigin = origin[j];
      }
      definedAt[in.outputs(0)] = j;
    }

    auto hb = happensBefore(p);
    for (int j = 0; j < n; ++j) {
      const pb::Instruction &in = p.instructions(j);
      for (int s : in.inputs()) {
        if (s >= inputs) {
          EXPECT_TRUE(definedAt[s] == j || hb[definedAt[s]][j])
              << "trial " << trial << ": instruction " << j << " may read slot "
              << s << " before instruction " << definedAt[s] << " wrote it";
        }
      }
      if (in.collective() > 0) {
        for (int k = 0; k < j; ++k) {
          if (p.instructions(k).stream() == 0) {
            EXPECT_TRUE(hb[k][j]) << "trial " << trial << ": collective " << j
                                  << " may overlap earlier compute " << k;
          }
        }
        // Until stream 0 has waited for it, what it touches stays alive.
        int firstAfter = n;
        for (int k = j + 1; k < n; ++k)
          if (p.instructions(k).stream() == 0 && hb[j][k]) {
            firstAfter = k;
            break;
          }
        std::vector<int> touched(in.inputs().begin(), in.inputs().end());
        touched.push_back(in.outputs(0));
        for (int s : touched) {
          if (s >= inputs) {
            EXPECT_GE(keepUntil[s], firstAfter)
                << "trial " << trial << ": slot " << s << " of collective " << j
                << " may be reused before instruction " << firstAfter;
          }
        }
      }
    }
  }
  EXPECT_GT(withCollectives, 200) << "the generator must exercise collectives";
}

TEST(PlanStreams, ComputeThatNeedsNoCommunicationMovesBeforeTheWait) {
  // x -> c1 (collective) -> y ; z = f(input) independent ; w = g(y, z)
  pb::RankProgram p = programWithSlots(5);
  addInstruction(p, "a2a", {0}, 1, "kjt_all_to_all"); // slot 1 = a2a(slot 0)
  addInstruction(p, "lookup", {1}, 2);                // needs the a2a
  addInstruction(p, "mlp", {0}, 3);                   // does not
  addInstruction(p, "top", {2, 3}, 4);
  assignCommunicationStream(p);
  std::vector<std::string> order;
  for (const pb::Instruction &in : p.instructions())
    order.push_back(in.name());
  EXPECT_EQ(order, (std::vector<std::string>{"a2a", "mlp", "lookup", "top"}));
  EXPECT_EQ(p.instructions(2).wait_events_size(), 1) << "the lookup waits";
  EXPECT_EQ(p.instructions(1).wait_events_size(), 0) << "the MLP does not";
}

/// Per instruction of `p`: whether it reads, directly or through compute, a
/// collective's result.
std::vector<char> afterCollective(const pb::RankProgram &p, int inputs) {
  std::vector<int> definedBy(p.slots_size(), -1);
  std::vector<char> after(p.instructions_size(), 0);
  for (int i = 0; i < p.instructions_size(); ++i) {
    for (int s : p.instructions(i).inputs())
      if (s >= inputs && definedBy[s] >= 0)
        after[i] = after[i] || p.instructions(definedBy[s]).stream() == 1 ||
                   after[definedBy[s]];
    for (int s : p.instructions(i).outputs())
      definedBy[s] = i;
  }
  return after;
}

TEST(PlanPipelineStages, RandomProgramsMarkTheirInputDistribution) {
  std::mt19937 rng(7);
  int withMarks = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int inputs = 2;
    pb::RankProgram p = randomProgram(rng, 4 + trial % 20, inputs);
    assignCommunicationStream(p);
    const int n = p.instructions_size();
    int end = 0;
    while (end < n && p.instructions(end).input_distribution())
      ++end;
    for (int i = end; i < n; ++i)
      EXPECT_FALSE(p.instructions(i).input_distribution())
          << "trial " << trial << ": marks not a prefix";
    std::set<int> written;
    for (int i = 0; i < end; ++i) {
      for (int s : p.instructions(i).inputs())
        EXPECT_TRUE(s < inputs || written.count(s))
            << "trial " << trial << ": a marked instruction reads slot " << s;
      for (int s : p.instructions(i).outputs())
        written.insert(s);
    }
    // The marked collectives: the first ones, up to the first that reads a
    // collective's result.
    std::vector<char> after = afterCollective(p, inputs);
    bool stillFirst = true;
    for (int i = 0; i < n; ++i) {
      if (p.instructions(i).stream() != 1)
        continue;
      stillFirst = stillFirst && !after[i];
      EXPECT_EQ(static_cast<bool>(p.instructions(i).input_distribution()),
                stillFirst)
          << "trial " << trial << ": collective " << p.instructions(i).name();
    }
    withMarks += end > 0;
  }
  EXPECT_GT(withMarks, 100);
}

TEST(PlanPipelineStages, BucketizeAndKjtAllToAllFirst) {
  // mlp(dense); bucketize(ids) -> kjt a2a -> lookup -> pooled a2a;
  // top(mlp, pooled)
  pb::RankProgram p = programWithSlots(8);
  addInstruction(p, "mlp", {0}, 2);
  addInstruction(p, "bucketize", {1}, 3);
  addInstruction(p, "kjt_a2a", {3}, 4, "all_to_all");
  addInstruction(p, "lookup", {4}, 5);
  addInstruction(p, "pooled_a2a", {5}, 6, "all_to_all");
  addInstruction(p, "top", {2, 6}, 7);
  assignCommunicationStream(p);
  std::vector<std::string> order, marked;
  for (const pb::Instruction &in : p.instructions()) {
    order.push_back(in.name());
    if (in.input_distribution())
      marked.push_back(in.name());
  }
  EXPECT_EQ(marked, (std::vector<std::string>{"bucketize", "kjt_a2a"}));
  EXPECT_EQ(order[0], "bucketize");
  EXPECT_EQ(order[1], "kjt_a2a");
  // A program without collectives gets no marks.
  pb::RankProgram local = programWithSlots(2);
  addInstruction(local, "", {0}, 1);
  assignCommunicationStream(local);
  EXPECT_FALSE(local.instructions(0).input_distribution());
}

} // namespace
