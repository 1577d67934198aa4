//===- memory_plan_test.cpp - Plans with a static arena and bounds --------===//
//
// Format 2 plan fields: the compiler's static arena offsets
// (Slot.arena_offset, RankProgram.arena_bytes), symbol bounds (--max-batch)
// and the target backend. The test DLRM plan gets offsets assigned here by
// two independent schemes (every slot its own bytes; first-fit reuse by
// lifetime) and must still match the plain-loop reference; every
// inconsistent memory plan is refused at load with a message naming it.
//
//===----------------------------------------------------------------------===//
#include "ember/session.h"
#include "plan/ember_plan.pb.h"
#include "plan/plan_format.h"
#include "plan/plan_writer.h"
#include "support/dlrm_inputs.h"
#include "support/dlrm_model.h"
#include "support/expect_status.h"
#include "support/file_bytes.h"
#include "support/plan_builder.h"
#include "support/temp_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <set>

using namespace ember;
using namespace ember::testing;

namespace {

constexpr int64_t kMaxBatch = 64;

int64_t dtypeBytes(int dtype) {
  switch (dtype) {
  case plan::FLOAT32:
  case plan::INT32:
    return 4;
  case plan::INT64:
  case plan::FLOAT64:
    return 8;
  case plan::FLOAT16:
  case plan::BFLOAT16:
    return 2;
  default:
    return 1;
  }
}

/// Size of a slot at B = kMaxBatch; -1 when another symbol is involved.
int64_t boundedBytes(const plan::Slot &s) {
  int64_t bytes = dtypeBytes(s.dtype());
  for (const plan::Dim &d : s.shape()) {
    if (d.kind_case() == plan::Dim::kSize)
      bytes *= d.size();
    else if (d.symbol() == "B")
      bytes *= kMaxBatch * (d.factor() == 0 ? 1 : d.factor());
    else
      return -1;
  }
  return bytes;
}

struct Interval {
  int slot, first, last;
  int64_t bytes;
};

/// Instruction results of bounded size, with [definition, last use]
/// (outputs: to the end). The test DLRM has no view kernels.
std::vector<Interval> plannable(const plan::RankProgram &rp) {
  std::vector<int> def(rp.slots_size(), -1), last(rp.slots_size(), -1);
  for (int i = 0; i < rp.instructions_size(); ++i) {
    for (int s : rp.instructions(i).inputs())
      if (s >= 0)
        last[s] = i;
    for (int s : rp.instructions(i).outputs()) {
      def[s] = i;
      last[s] = std::max(last[s], i);
    }
  }
  for (int s : rp.output_slots())
    last[s] = rp.instructions_size();
  std::vector<Interval> out;
  for (int s = 0; s < rp.slots_size(); ++s) {
    int64_t bytes = boundedBytes(rp.slots(s));
    if (def[s] >= 0 && bytes > 0)
      out.push_back({s, def[s], last[s], bytes});
  }
  return out;
}

int64_t align64(int64_t v) { return (v + 63) / 64 * 64; }

class MemoryPlanTest : public ::testing::Test {
protected:
  void SetUp() override {
    model_ = makeDlrmModel(5);
    auto path = writeDlrmPlan(model_, dir_.path(), "dlrm");
    ASSERT_TRUE(path.isOk()) << path.status().toString();
    planPath_ = *path;
    ASSERT_TRUE(plan_.ParseFromString(readFileBytes(planPath_)));
    ASSERT_EQ(plan_.format_version(), kPlanFormatVersion);
    plan::SymbolBound *bound = plan_.add_symbol_bounds();
    bound->set_symbol("B");
    bound->set_max(kMaxBatch);
  }

  /// Every plannable slot gets bytes of its own.
  void planDistinct(plan::Plan &p) {
    plan::RankProgram &rp = *p.mutable_programs(0);
    int64_t offset = 0;
    for (const Interval &iv : plannable(rp)) {
      rp.mutable_slots(iv.slot)->set_arena_offset(offset);
      offset += align64(iv.bytes);
    }
    rp.set_arena_bytes(offset);
  }
  /// First fit in definition order, reusing bytes of dead slots.
  void planFirstFit(plan::Plan &p) {
    plan::RankProgram &rp = *p.mutable_programs(0);
    std::vector<Interval> ivs = plannable(rp);
    std::vector<std::pair<Interval, int64_t>> placed;
    int64_t arena = 0;
    for (const Interval &iv : ivs) {
      int64_t offset = 0;
      bool moved = true;
      while (moved) {
        moved = false;
        for (auto &[other, at] : placed)
          if (other.first <= iv.last && iv.first <= other.last &&
              offset < at + align64(other.bytes) && at < offset + iv.bytes) {
            offset = at + align64(other.bytes);
            moved = true;
          }
      }
      placed.push_back({iv, offset});
      rp.mutable_slots(iv.slot)->set_arena_offset(offset);
      arena = std::max(arena, align64(offset + iv.bytes));
    }
    rp.set_arena_bytes(arena);
  }

  Result<std::unique_ptr<Session>> loadWith(const plan::Plan &p) {
    std::string error;
    EXPECT_TRUE(writePlanFile(p, planPath_, &error)) << error;
    return Session::load(planPath_);
  }
  Status loadStatus(const std::function<void(plan::Plan &)> &mutate) {
    plan::Plan p = plan_;
    mutate(p);
    auto session = loadWith(p);
    return session.isOk() ? Status::ok() : session.status();
  }
  void expectMatchesReference(Session &session, std::vector<int64_t> batches) {
    for (int64_t b : batches) {
      DlrmBatch batch = makeDlrmBatch(model_, b, 300 + b);
      RunInputs in = dlrmInputs(model_, batch);
      auto out = session.run(in);
      ASSERT_TRUE(out.isOk()) << out.status().toString();
      ember::testing::expectMatchesReference(*out->find("prob"),
                                             referenceDlrm(model_, batch));
    }
  }

  TempDir dir_;
  DlrmModel model_;
  std::string planPath_;
  plan::Plan plan_;
};

TEST_F(MemoryPlanTest, DistinctOffsetsMatchTheReference) {
  plan::Plan p = plan_;
  planDistinct(p);
  ASSERT_GT(p.programs(0).arena_bytes(), 0u);
  auto session = loadWith(p);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  expectMatchesReference(**session, {1, 7, kMaxBatch, 3});
  // Planned slots come from the static arena: one per context.
  EXPECT_GE((*session)->stats().arenaBytes,
            static_cast<int64_t>(p.programs(0).arena_bytes()));
  // ... and not from the dynamic arena: the same runs without the memory
  // plan need many more dynamic blocks.
  auto unplanned = loadWith(plan_);
  ASSERT_TRUE(unplanned.isOk()) << unplanned.status().toString();
  expectMatchesReference(**unplanned, {1, 7, kMaxBatch, 3});
  EXPECT_LT((*session)->stats().arenaGrowths + 3,
            (*unplanned)->stats().arenaGrowths);
}

TEST_F(MemoryPlanTest, ReusedOffsetsMatchTheReferenceInLessMemory) {
  plan::Plan distinct = plan_, packed = plan_;
  planDistinct(distinct);
  planFirstFit(packed);
  EXPECT_LT(packed.programs(0).arena_bytes(),
            distinct.programs(0).arena_bytes());
  // Some slot really shares bytes with another.
  std::set<uint64_t> offsets;
  int planned = 0;
  for (const plan::Slot &s : packed.programs(0).slots())
    if (s.has_arena_offset()) {
      offsets.insert(s.arena_offset());
      ++planned;
    }
  EXPECT_LT(static_cast<int>(offsets.size()), planned);
  auto session = loadWith(packed);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  expectMatchesReference(**session, {kMaxBatch, 1, 33});
  // Steady state: no dynamic allocation for the planned slots.
  DlrmBatch batch = makeDlrmBatch(model_, 16, 1);
  RunInputs in = dlrmInputs(model_, batch);
  RunOutputs out;
  ASSERT_TRUE((*session)->run(in, &out).isOk());
  int64_t growths = (*session)->stats().arenaGrowths;
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE((*session)->run(in, &out).isOk());
  EXPECT_EQ((*session)->stats().arenaGrowths, growths);
}

TEST_F(MemoryPlanTest, BatchAboveTheBoundIsRefused) {
  plan::Plan p = plan_;
  planFirstFit(p);
  auto session = loadWith(p);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  DlrmBatch batch = makeDlrmBatch(model_, kMaxBatch + 1, 9);
  RunInputs in = dlrmInputs(model_, batch);
  RunOutputs out;
  EXPECT_ERROR((*session)->run(in, &out), StatusCode::kInvalidArgument,
               "'B' is 65 for sparse, above the plan's bound of 64 "
               "(compiled with --max-batch 64");
  // The session still works for a batch within the bound.
  expectMatchesReference(**session, {kMaxBatch});
}

TEST_F(MemoryPlanTest, OverlappingLiveSlotsAreRefused) {
  // The output and the planned input of the instruction defining it are
  // alive together: giving them the same bytes must be refused.
  EXPECT_ERROR(
      loadStatus([&](plan::Plan &p) {
        planDistinct(p);
        plan::RankProgram &rp = *p.mutable_programs(0);
        int out = rp.output_slots(0);
        for (const plan::Instruction &in : rp.instructions())
          if (std::count(in.outputs().begin(), in.outputs().end(), out))
            for (int s : in.inputs())
              if (s >= 0 && rp.slots(s).has_arena_offset())
                rp.mutable_slots(out)->set_arena_offset(
                    rp.slots(s).arena_offset());
      }),
      StatusCode::kInvalidArgument, "the memory plan overlaps");
}

TEST_F(MemoryPlanTest, InconsistentMemoryPlansAreRefused) {
  auto firstPlanned = [](plan::RankProgram &rp) -> plan::Slot * {
    for (plan::Slot &s : *rp.mutable_slots())
      if (s.has_arena_offset())
        return &s;
    return nullptr;
  };
  EXPECT_ERROR(loadStatus([&](plan::Plan &p) {
                 planDistinct(p);
                 firstPlanned(*p.mutable_programs(0))->set_arena_offset(32);
               }),
               StatusCode::kInvalidArgument, "not a multiple of 64");
  EXPECT_ERROR(loadStatus([&](plan::Plan &p) {
                 planDistinct(p);
                 p.mutable_programs(0)->set_arena_bytes(
                     p.programs(0).arena_bytes() - 64);
               }),
               StatusCode::kInvalidArgument, "of a static arena of");
  EXPECT_ERROR(loadStatus([&](plan::Plan &p) {
                 planDistinct(p);
                 p.mutable_programs(0)->set_arena_bytes(100);
               }),
               StatusCode::kInvalidArgument, "arena_bytes 100");
  EXPECT_ERROR(loadStatus([&](plan::Plan &p) {
                 planDistinct(p);
                 p.clear_symbol_bounds();
               }),
               StatusCode::kInvalidArgument, "which has no bound in the plan");
  EXPECT_ERROR(loadStatus([&](plan::Plan &p) {
                 planDistinct(p);
                 plan::RankProgram &rp = *p.mutable_programs(0);
                 rp.mutable_slots(rp.input_slots(0))->set_arena_offset(0);
               }),
               StatusCode::kInvalidArgument,
               "is not the result of an instruction");
  EXPECT_ERROR(loadStatus([&](plan::Plan &p) {
                 p.mutable_symbol_bounds(0)->set_max(0);
               }),
               StatusCode::kInvalidArgument, "the bound of symbol 'B' is 0");
  EXPECT_ERROR(loadStatus([&](plan::Plan &p) {
                 *p.add_symbol_bounds() = p.symbol_bounds(0);
               }),
               StatusCode::kInvalidArgument, "symbol 'B' is bounded twice");
}

TEST_F(MemoryPlanTest, PlansForAnotherTargetAreRefused) {
  EXPECT_ERROR(
      loadStatus([](plan::Plan &p) { p.set_target(plan::TARGET_CUDA); }),
      StatusCode::kFailedPrecondition,
      "the plan was compiled for the cuda target (ember-compile "
      "--target cuda) but this session runs on the cpu backend");
  EXPECT_ERROR(loadStatus([](plan::Plan &p) {
                 p.set_target(static_cast<plan::Target>(7));
               }),
               StatusCode::kInvalidArgument, "unknown target 7");
  EXPECT_TRUE(
      loadStatus([](plan::Plan &p) { p.set_target(plan::TARGET_CPU); }).isOk());
}

TEST_F(MemoryPlanTest, FormatOnePlansStillLoad) {
  plan::Plan p = plan_;
  p.set_format_version(1);
  p.clear_symbol_bounds();
  auto session = loadWith(p);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  expectMatchesReference(**session, {5, 200});
}

/// x [B, 8] -> t1 = tanh(x) -> t2 = sigmoid(t1) -> t3 = add(t2, t1 or t2)
/// = y, with arena offsets for t1, t2, t3 (bound B <= 4: 128 bytes each).
struct ChainPlan {
  PlanBuilder b;
  int x, t1, t2, t3;
  explicit ChainPlan(bool addReadsT1) {
    x = b.input("x", DType::kFloat32, {"B", 8});
    t1 = b.slot("t1", DType::kFloat32, {"B", 8});
    t2 = b.slot("t2", DType::kFloat32, {"B", 8});
    t3 = b.slot("t3", DType::kFloat32, {"B", 8});
    b.instruction("tanh", {x}, {t1});
    b.instruction("sigmoid", {t1}, {t2});
    b.instruction("add", {t2, addReadsT1 ? t1 : t2}, {t3});
    b.output("y", t3);
    plan::SymbolBound *bound = b.proto().add_symbol_bounds();
    bound->set_symbol("B");
    bound->set_max(4);
  }
  void place(int64_t o1, int64_t o2, int64_t o3, int64_t arena) {
    b.program().mutable_slots(t1)->set_arena_offset(o1);
    b.program().mutable_slots(t2)->set_arena_offset(o2);
    b.program().mutable_slots(t3)->set_arena_offset(o3);
    b.program().set_arena_bytes(arena);
  }
};

TEST(MemoryPlanInPlace, ElementwiseChainInOneBufferMatchesTheFormula) {
  TempDir dir;
  ChainPlan chain(/*addReadsT1=*/false);
  chain.place(0, 0, 0, 128); // every step overwrites its input
  auto path = chain.b.write(dir.path(), "chain");
  ASSERT_TRUE(path.isOk()) << path.status().toString();
  auto session = Session::load(*path);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  for (int64_t batch : {4, 1, 3}) {
    std::vector<float> x(batch * 8);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = 0.37f * static_cast<float>(i) - 3.1f;
    RunInputs in;
    in.set("x", Tensor::view(x.data(), DType::kFloat32, {batch, 8}));
    auto out = (*session)->run(in);
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    const Tensor &y = *out->find("y");
    ASSERT_EQ(y.shape(), Shape({batch, 8}));
    for (size_t i = 0; i < x.size(); ++i) {
      double s = 1.0 / (1.0 + std::exp(-std::tanh(double(x[i]))));
      EXPECT_NEAR(y.data<float>()[i], 2.0 * s, 1e-6) << "element " << i;
    }
  }
}

TEST(MemoryPlanInPlace, OnlyAnInputThatDiesThereMayBeOverwritten) {
  TempDir dir;
  // t1 is read again by the add: sigmoid may not overwrite it.
  ChainPlan reread(/*addReadsT1=*/true);
  reread.place(0, 0, 128, 256);
  auto path = reread.b.write(dir.path(), "reread");
  ASSERT_TRUE(path.isOk());
  EXPECT_ERROR(Session::load(*path).status(), StatusCode::kInvalidArgument,
               "the memory plan overlaps slot 1 't1'");
  // The same plan with t2 elsewhere is fine, and the add may overwrite t2.
  ChainPlan ok(/*addReadsT1=*/true);
  ok.place(0, 128, 128, 256);
  path = ok.b.write(dir.path(), "ok");
  ASSERT_TRUE(path.isOk());
  EXPECT_TRUE(Session::load(*path).isOk());
  // A result that only partly overlaps its input is never in place.
  ChainPlan shifted(/*addReadsT1=*/false);
  shifted.place(0, 64, 64, 256);
  path = shifted.b.write(dir.path(), "shifted");
  ASSERT_TRUE(path.isOk());
  EXPECT_ERROR(Session::load(*path).status(), StatusCode::kInvalidArgument,
               "the memory plan overlaps slot 1 't1'");
}

TEST(MemoryPlanViews, ViewsExtendTheLifetimeOfWhatTheyView) {
  // t1 = tanh(x); v = reshape(t1); t2 = sigmoid(x); y = add(t2, v).
  // t1 is last read by the reshape, but its view v is read by the add: t1's
  // bytes stay alive until then, so t2 may not take them.
  auto build = [](int64_t t2Offset, bool offsetOnView) {
    auto b = std::make_unique<PlanBuilder>();
    int x = b->input("x", DType::kFloat32, {"B", 8});
    int t1 = b->slot("t1", DType::kFloat32, {"B", 8});
    int v = b->slot("v", DType::kFloat32, {"B", 8});
    int t2 = b->slot("t2", DType::kFloat32, {"B", 8});
    int y = b->slot("y", DType::kFloat32, {"B", 8});
    b->instruction("tanh", {x}, {t1});
    b->instruction("reshape", {t1}, {v}).attr("shape",
                                             std::vector<int64_t>{-1, 8});
    b->instruction("sigmoid", {x}, {t2});
    b->instruction("add", {t2, v}, {y});
    b->output("y", y);
    plan::SymbolBound *bound = b->proto().add_symbol_bounds();
    bound->set_symbol("B");
    bound->set_max(4);
    plan::RankProgram &rp = b->program();
    rp.mutable_slots(t1)->set_arena_offset(0);
    rp.mutable_slots(t2)->set_arena_offset(t2Offset);
    rp.mutable_slots(y)->set_arena_offset(256);
    if (offsetOnView)
      rp.mutable_slots(v)->set_arena_offset(384);
    rp.set_arena_bytes(512);
    return b;
  };
  TempDir dir;
  auto path = build(0, false)->write(dir.path(), "reuse");
  ASSERT_TRUE(path.isOk());
  EXPECT_ERROR(Session::load(*path).status(), StatusCode::kInvalidArgument,
               "the memory plan overlaps slot 1 't1' (arena bytes [0, 128), "
               "alive in instructions 0..3)");
  path = build(0, true)->write(dir.path(), "view");
  ASSERT_TRUE(path.isOk());
  EXPECT_ERROR(Session::load(*path).status(), StatusCode::kInvalidArgument,
               "'v' has an arena offset but its kernel 'reshape' makes it a "
               "view of an input");
  // Apart, the plan loads and computes tanh(x) + sigmoid(x).
  path = build(128, false)->write(dir.path(), "apart");
  ASSERT_TRUE(path.isOk());
  auto session = Session::load(*path);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  std::vector<float> x(3 * 8);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 0.25f * static_cast<float>(i) - 2.0f;
  RunInputs in;
  in.set("x", Tensor::view(x.data(), DType::kFloat32, {3, 8}));
  auto out = (*session)->run(in);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(out->find("y")->data<float>()[i],
                std::tanh(x[i]) + 1.0 / (1.0 + std::exp(-double(x[i]))), 1e-6);
}

} // namespace

// An instruction whose optional output the plan leaves out (slot -1: an
// unweighted KJT's weights) next to outputs at static arena offsets: the
// loader's lifetime check must skip the -1 (it once wrote before its array).
TEST(MemoryPlanOptionalOutputs, LeftOutOutputsAreSkipped) {
  PlanBuilder b;
  KjtSlotIds in = b.kjtInput("sparse", {"f0", "f1"});
  int values = b.slot("values", DType::kInt64, {"N"});
  int lengths = b.slot("lengths", DType::kInt64, {Dim("B", 2)});
  b.instruction("kjt_permute", {in.values, in.lengths, -1},
                {values, lengths, -1})
      .attr("permutation", std::vector<int64_t>{1, 0})
      .attr("num_keys", int64_t{2});
  b.output("values", values);
  b.output("lengths", lengths);
  plan::RankProgram &rp = b.program();
  rp.mutable_slots(lengths)->set_arena_offset(0);
  rp.set_arena_bytes(2 * 8 * 8);
  plan::SymbolBound *bound = b.proto().add_symbol_bounds();
  bound->set_symbol("B");
  bound->set_max(8);
  TempDir dir;
  auto path = b.write(dir.path(), "permute");
  ASSERT_TRUE(path.isOk()) << path.status().toString();
  auto session = Session::load(*path);
  ASSERT_TRUE(session.isOk()) << session.status().toString();

  std::vector<int64_t> ids = {1, 2, 3, 4, 5};
  std::vector<int64_t> lens = {1, 2, 0, 2}; // f0: [1], [2 3]; f1: [], [4 5]
  RunInputs inputs;
  inputs.set("sparse",
             *KeyedJaggedTensor::fromLengths(
                 {"f0", "f1"}, Tensor::view(ids.data(), DType::kInt64, {5}),
                 Tensor::view(lens.data(), DType::kInt64, {4})));
  auto out = (*session)->run(inputs);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  const Tensor &l = *out->find("lengths");
  const Tensor &v = *out->find("values");
  EXPECT_EQ(std::vector<int64_t>(l.data<int64_t>(), l.data<int64_t>() + 4),
            (std::vector<int64_t>{0, 2, 1, 2}));
  EXPECT_EQ(std::vector<int64_t>(v.data<int64_t>(), v.data<int64_t>() + 5),
            (std::vector<int64_t>{4, 5, 1, 2, 3}));
}
