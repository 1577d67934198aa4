//===- timeline_simulator_test.cpp - the predicted timeline, by hand ------===//
//
// Two ranks on a topology of round numbers (1 GB/s memory and links, dense
// math free): relu moves in + out bytes, all_gather receives its output's
// bytes from the peer (a2a: half of them, at 1 GB/s). Every time below is
// computed by hand.
//
//===----------------------------------------------------------------------===//
#include "timeline/TimelineSimulator.h"
#include "timeline/TraceJson.h"

#include <gtest/gtest.h>

#include <string>

namespace {

namespace pb = ::ember::plan;
using ember::timeline::simulatePlan;
using ember::timeline::SizeAssumptions;
using ember::timeline::Slice;
using ember::timeline::SliceKind;
using ember::timeline::Timeline;

constexpr double kUs = 1e-6;

ember::sharding::Topology roundTopology() {
  ember::sharding::Topology t;
  t.worldSize = 2;
  t.ranksPerNode = 8;
  t.deviceBandwidth = 1e9;
  t.deviceFlops = 1e30;
  t.intraNodeBandwidth = 1e9;
  t.interNodeBandwidth = 1e9;
  return t;
}

void addSlot(pb::RankProgram &p, int64_t elements) {
  pb::Slot *slot = p.add_slots();
  slot->set_dtype(pb::FLOAT32);
  slot->add_shape()->set_size(elements);
}

pb::Instruction *add(pb::RankProgram &p, const std::string &kernel, int in,
                     int out, int stream = 0) {
  pb::Instruction *i = p.add_instructions();
  i->set_kernel(kernel);
  i->add_inputs(in);
  i->add_outputs(out);
  i->set_stream(stream);
  i->set_name("loc_" + std::to_string(p.instructions_size() - 1));
  return i;
}

/// Rank r: [rank 1 only: relu %0 -> %5 (2 us)], relu %0 -> %1 (2 us,
/// records event 0), all_gather %1 -> %2 on stream 1 (waits 0, records 1),
/// relu %0 -> %3 (2 us), relu %2 -> %4 (4 us, waits 1).
pb::Plan twoRankPlan(bool streams) {
  pb::Plan plan;
  plan.set_world_size(2);
  pb::CollectiveDescriptor *d = plan.add_collectives();
  d->set_kind(pb::CollectiveDescriptor::ALL_GATHER);
  d->add_group_ranks(0);
  d->add_group_ranks(1);
  for (int r = 0; r < 2; ++r) {
    pb::RankProgram &p = *plan.add_programs();
    p.set_rank(r);
    for (int64_t n : {250, 250, 500, 250, 500, 250})
      addSlot(p, n);
    p.add_input_slots(0);
    if (r == 1)
      add(p, "relu", 0, 5);
    pb::Instruction *first = add(p, "relu", 0, 1);
    pb::Instruction *gather = add(p, "all_gather", 1, 2, streams ? 1 : 0);
    gather->set_collective(1);
    add(p, "relu", 0, 3);
    pb::Instruction *last = add(p, "relu", 2, 4);
    if (streams) {
      first->add_record_events(0);
      gather->add_wait_events(0);
      gather->add_record_events(1);
      last->add_wait_events(1);
      p.set_num_streams(2);
      p.set_num_events(2);
    }
  }
  return plan;
}

const Slice &sliceOf(const Timeline &t, int rank, int instruction,
                     SliceKind kind) {
  for (const Slice &s : t.slices)
    if (s.rank == rank && s.instruction == instruction && s.kind == kind)
      return s;
  ADD_FAILURE() << "no slice of rank " << rank << " instruction "
                << instruction;
  return t.slices.front();
}

void expectSpan(const Slice &s, double startUs, double endUs, int stream) {
  EXPECT_NEAR(s.start, startUs * kUs, 1e-12) << s.kernel;
  EXPECT_NEAR(s.end, endUs * kUs, 1e-12) << s.kernel;
  EXPECT_EQ(s.stream, stream) << s.kernel;
}

TEST(TimelineSimulator, StreamsEventsAndTheSlowestRank) {
  llvm::Expected<Timeline> t =
      simulatePlan(twoRankPlan(true), roundTopology(), SizeAssumptions());
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  // Rank 1 issues the gather at 4 us (after its extra relu), rank 0 at 2:
  // it moves data from 4 to 5 us on both.
  expectSpan(sliceOf(*t, 0, 0, SliceKind::Compute), 0, 2, 0);
  expectSpan(sliceOf(*t, 0, 1, SliceKind::Collective), 2, 5, 1);
  expectSpan(sliceOf(*t, 0, 2, SliceKind::Compute), 2, 4, 0);
  // Rank 0's last relu waits for the gather's event from 4 to 5 us.
  const Slice &wait = sliceOf(*t, 0, 1, SliceKind::Wait);
  expectSpan(wait, 4, 5, 0);
  EXPECT_EQ(wait.kernel, "all_gather");
  expectSpan(sliceOf(*t, 0, 3, SliceKind::Compute), 5, 9, 0);
  expectSpan(sliceOf(*t, 1, 1, SliceKind::Compute), 2, 4, 0);
  expectSpan(sliceOf(*t, 1, 2, SliceKind::Collective), 4, 5, 1);
  // Rank 1's independent relu runs 4-6, so its last one starts at 6: no
  // wait (the event came at 5).
  expectSpan(sliceOf(*t, 1, 3, SliceKind::Compute), 4, 6, 0);
  expectSpan(sliceOf(*t, 1, 4, SliceKind::Compute), 6, 10, 0);
  // Stream 1 of rank 1 waits for event 0 (its second relu) from 0 to 4.
  expectSpan(sliceOf(*t, 1, 1, SliceKind::Wait), 0, 4, 1);
  int rank1Waits = 0;
  for (const Slice &s : t->slices)
    rank1Waits += s.rank == 1 && s.kind == SliceKind::Wait;
  EXPECT_EQ(rank1Waits, 1);
  ASSERT_EQ(t->collectives.size(), 1u);
  EXPECT_NEAR(t->collectives[0].transferStart, 4 * kUs, 1e-12);
  EXPECT_NEAR(t->collectives[0].transferEnd, 5 * kUs, 1e-12);
  EXPECT_EQ(sliceOf(*t, 0, 1, SliceKind::Collective).bytes, 3000);
}

TEST(TimelineSimulator, ProgramOrderOnOneStream) {
  llvm::Expected<Timeline> t =
      simulatePlan(twoRankPlan(false), roundTopology(), SizeAssumptions());
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  // Rank 0 reaches the gather at 2 us and blocks in it until 5.
  expectSpan(sliceOf(*t, 0, 1, SliceKind::Collective), 2, 5, 0);
  expectSpan(sliceOf(*t, 0, 2, SliceKind::Compute), 5, 7, 0);
  expectSpan(sliceOf(*t, 0, 3, SliceKind::Compute), 7, 11, 0);
  expectSpan(sliceOf(*t, 1, 2, SliceKind::Collective), 4, 5, 0);
  expectSpan(sliceOf(*t, 1, 4, SliceKind::Compute), 7, 11, 0);
  for (const Slice &s : t->slices)
    EXPECT_NE(s.kind, SliceKind::Wait);
  EXPECT_EQ(t->streamsPerRank, (std::vector<int>{1, 1}));
}

TEST(TimelineSimulator, FixedCostsPerKernelAndCollective) {
  ember::sharding::Topology topology = roundTopology();
  topology.kernelLaunchSeconds = 1 * kUs;
  topology.collectiveLatencySeconds = 1 * kUs;
  llvm::Expected<Timeline> t =
      simulatePlan(twoRankPlan(false), topology, SizeAssumptions());
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  // Each relu 1 us longer; rank 1 issues the gather at 6 us; it takes its
  // 1 us of bytes plus 1 us of latency.
  expectSpan(sliceOf(*t, 0, 0, SliceKind::Compute), 0, 3, 0);
  expectSpan(sliceOf(*t, 0, 1, SliceKind::Collective), 3, 8, 0);
  expectSpan(sliceOf(*t, 1, 2, SliceKind::Collective), 6, 8, 0);
  expectSpan(sliceOf(*t, 0, 3, SliceKind::Compute), 11, 16, 0);
}

TEST(TimelineSimulator, TraceJsonFlowsAndMetadata) {
  llvm::Expected<Timeline> t =
      simulatePlan(twoRankPlan(true), roundTopology(), SizeAssumptions());
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  std::string json = ember::timeline::traceJson(
      *t, roundTopology(), SizeAssumptions(), {"m.onnx", "cpu", ""});
  EXPECT_NE(json.find("{\"ph\":\"s\",\"id\":0,\"cat\":\"collective\",\"name\":"
                      "\"all_gather\",\"pid\":0,\"tid\":1,\"ts\":4.5}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"ph\":\"f\",\"bp\":\"e\",\"id\":0,\"cat\":"
                      "\"collective\",\"name\":\"all_gather\",\"pid\":1,"
                      "\"tid\":1,\"ts\":4.5}"),
            std::string::npos);
  EXPECT_NE(json.find("\"name\":\"wait all_gather\",\"cat\":\"wait\""),
            std::string::npos);
  EXPECT_NE(json.find("\"kind\":\"predicted\",\"ranks\":2"), std::string::npos);
}

TEST(TimelineSimulator, CollectivesOutOfOrderAreAnError) {
  pb::Plan plan = twoRankPlan(true);
  plan.mutable_programs(1)->mutable_instructions(2)->set_collective(2);
  plan.add_collectives()->CopyFrom(plan.collectives(0));
  llvm::Expected<Timeline> t =
      simulatePlan(plan, roundTopology(), SizeAssumptions());
  ASSERT_FALSE(static_cast<bool>(t));
  std::string message = llvm::toString(t.takeError());
  EXPECT_NE(message.find("instruction 2 of rank 1 ('all_gather') runs "
                         "collective 1 where collective 0 comes next"),
            std::string::npos)
      << message;
}

TEST(TimelineSimulator, MissingCollectiveIsAnError) {
  pb::Plan plan = twoRankPlan(true);
  plan.add_collectives()->CopyFrom(plan.collectives(0));
  llvm::Expected<Timeline> t =
      simulatePlan(plan, roundTopology(), SizeAssumptions());
  ASSERT_FALSE(static_cast<bool>(t));
  EXPECT_NE(llvm::toString(t.takeError())
                .find("rank 0 runs 1 collectives, the plan lists 2"),
            std::string::npos);
}

} // namespace
