//===- planner_vs_torchrec_test.cpp - no TorchRec plan beats Ember's ------===//
//
// The cases of bench/planner_vs_torchrec.py with the plan TorchRec 1.9.2's
// EmbeddingShardingPlanner made for each (Inputs/torchrec_*.json, written by
// the benchmark's --fixtures): Ember's own plan, with TorchRec's objective
// (training) and memory reservation, never scores worse under Ember's cost
// model than TorchRec's plan imported whole, neither on its score (the
// largest per-rank cost) nor on its collective step (each cost part at its
// busiest rank, summed), and TorchRec's plan imports (every sharding type it
// chose, table_column_wise included).
//
//===----------------------------------------------------------------------===//

#include "AllToAllBytes.h"
#include "sharding/PlanJson.h"
#include "sharding/Planner.h"
#include "sharding/ShardingDriver.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "gtest/gtest.h"
#include <map>
#include <optional>
#include <set>
#include <string>

using namespace ember::sharding;
namespace json = llvm::json;

namespace {

struct TorchRecCase {
  std::vector<TableSpec> tables;
  PlannerOptions options;
  std::string plan;
};

TorchRecCase loadCase(const std::string &name) {
  std::string path = std::string(EMBER_SHARDING_TEST_INPUTS) + "/" + name;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    ADD_FAILURE() << "cannot read " << path;
    return {};
  }
  llvm::Expected<json::Value> value = json::parse((*buffer)->getBuffer());
  if (!value) {
    ADD_FAILURE() << path << ": " << llvm::toString(value.takeError());
    return {};
  }
  const json::Object &root = *value->getAsObject();
  TorchRecCase result;
  for (const json::Value &entry : *root.getArray("tables")) {
    const json::Object &object = *entry.getAsObject();
    TableSpec table;
    table.name = object.getString("name")->str();
    table.rows = *object.getInteger("rows");
    table.dim = *object.getInteger("dim");
    for (const json::Value &feature : *object.getArray("features")) {
      const json::Array &pair = *feature.getAsArray();
      table.features.push_back(
          {pair[0].getAsString()->str(), *pair[1].getAsNumber()});
    }
    result.tables.push_back(std::move(table));
  }
  Topology &topo = result.options.topology;
  topo.worldSize = *root.getInteger("world_size");
  topo.ranksPerNode = *root.getInteger("ranks_per_node");
  topo.deviceMemoryBytes = *root.getInteger("device_memory_bytes");
  result.options.batchSizePerRank = *root.getInteger("batch_size");
  // Like for like: TorchRec plans for training with its reservation.
  result.options.includeBackward = true;
  topo.reservedDeviceFraction = torchrecReservedFraction(
      result.tables, result.options.batchSizePerRank, topo.deviceMemoryBytes);
  std::string plan;
  llvm::raw_string_ostream os(plan);
  os << *root.get("torchrec_plan");
  result.plan = plan;
  return result;
}

int64_t hostBytes(const ShardingPlan &plan) {
  int64_t bytes = 0;
  for (const RankLoad &rank : plan.ranks)
    bytes += rank.host.total();
  return bytes;
}

/// Ember's plan of case `c` under `options` and TorchRec's plan of it
/// imported whole under the same options (a fatal failure when either does
/// not plan).
void planBoth(const TorchRecCase &c, PlannerOptions options,
              std::optional<ShardingPlan> &own,
              std::optional<ShardingPlan> &theirs) {
  llvm::Expected<ShardingPlan> ours = planSharding(c.tables, options);
  ASSERT_TRUE(static_cast<bool>(ours)) << llvm::toString(ours.takeError());
  own = std::move(*ours);
  llvm::Expected<std::map<std::string, TableSharding>> imported =
      parsePlanJson(c.plan);
  ASSERT_TRUE(static_cast<bool>(imported))
      << llvm::toString(imported.takeError());
  ASSERT_EQ(imported->size(), c.tables.size());
  options.imported = *imported;
  llvm::Expected<ShardingPlan> torchrec = planSharding(c.tables, options);
  ASSERT_TRUE(static_cast<bool>(torchrec))
      << llvm::toString(torchrec.takeError());
  theirs = std::move(*torchrec);
}

void expectEmberAtLeastAsGood(const std::string &name) {
  SCOPED_TRACE(name);
  TorchRecCase c = loadCase(name);
  ASSERT_FALSE(c.tables.empty());
  std::optional<ShardingPlan> own, theirs;
  ASSERT_NO_FATAL_FAILURE(planBoth(c, c.options, own, theirs));
  EXPECT_LE(own->maxRankCost(), theirs->maxRankCost() * (1 + 1e-9))
      << "Ember's plan " << own->maxRankCost() * 1e6 << " us, TorchRec's "
      << theirs->maxRankCost() * 1e6 << " us per batch (Ember's model)";
  EXPECT_LE(own->collectiveStepCost(),
            theirs->collectiveStepCost() * (1 + 1e-9))
      << "collective step: Ember's plan " << own->collectiveStepCost() * 1e6
      << " us, TorchRec's " << theirs->collectiveStepCost() * 1e6
      << " us per batch (Ember's model)";
  // Host memory: never where TorchRec's plan fits device memory, and never
  // more than TorchRec's plan serves from it, for training and inference.
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "training" : "inference");
    PlannerOptions objective = c.options;
    objective.includeBackward = training;
    llvm::Expected<ShardingPlan> plan = planSharding(c.tables, objective);
    ASSERT_TRUE(static_cast<bool>(plan)) << llvm::toString(plan.takeError());
    if (hostBytes(*theirs) == 0) {
      EXPECT_EQ(hostBytes(*plan), 0);
    }
    EXPECT_LE(hostBytes(*plan), hostBytes(*theirs));
  }
}

TEST(PlannerVsTorchRec, Criteo26TablesOn8Ranks) {
  expectEmberAtLeastAsGood("torchrec_criteo_8.json");
}

TEST(PlannerVsTorchRec, Criteo26TablesOn16Ranks) {
  expectEmberAtLeastAsGood("torchrec_criteo_16.json");
}

TEST(PlannerVsTorchRec, PowerLaw100TablesOn32Ranks) {
  expectEmberAtLeastAsGood("torchrec_powerlaw_32.json");
}

TEST(PlannerVsTorchRec, Criteo26TablesOn8RanksAt85PercentOfMemory) {
  expectEmberAtLeastAsGood("torchrec_criteo_8_tight.json");
}

// Memory before UVM: on the 26 Criteo tables at 85% of 8 ranks' memory,
// planned for inference, a greedy pass leaves no room for the last tables
// and another serves criteo_21 (20.3 GB) from host memory; the repair step
// makes room by moving and re-splitting the other tables, so only what the
// ranks cannot hold together goes to host memory (one table of 0.3 GB), and
// the plan says why.
TEST(PlannerVsTorchRec, TightCriteoForInferenceMakesRoomBeforeHostMemory) {
  TorchRecCase c = loadCase("torchrec_criteo_8_tight.json");
  ASSERT_FALSE(c.tables.empty());
  c.options.includeBackward = false;
  llvm::Expected<ShardingPlan> plan = planSharding(c.tables, c.options);
  ASSERT_TRUE(static_cast<bool>(plan)) << llvm::toString(plan.takeError());
  EXPECT_LE(hostBytes(*plan), int64_t(400'000'000));
  int spilled = 0;
  for (size_t t = 0; t < c.tables.size(); ++t) {
    if (plan->tables[t].kernel != ComputeKernel::FusedUvmCaching)
      continue;
    ++spilled;
    EXPECT_LT(c.tables[t].rows * c.tables[t].dim * 4, int64_t(1'000'000'000))
        << c.tables[t].name << " is served from host memory";
  }
  ASSERT_EQ(plan->notes.size(), static_cast<size_t>(spilled));
  for (const std::string &note : plan->notes) {
    EXPECT_NE(note.find("is short by"), std::string::npos) << note;
    EXPECT_NE(note.find("more than the 8 ranks' device memory together"),
              std::string::npos)
        << note;
  }
}

int64_t maxDeviceBytes(const ShardingPlan &plan) {
  int64_t result = 0;
  for (const RankLoad &rank : plan.ranks)
    result = std::max(result, rank.device.total());
  return result;
}

// Memory that buys nothing is given back (step 8): where TorchRec's plan and
// Ember's both fit device memory, Ember's training plan's fullest rank holds
// no more than TorchRec's in Ember's memory model (weights and buffers).
// Without step 8 the 26 Criteo tables on 8 ranks keep a quarter of the
// largest table beside another 20 GB table (31.4% of a device against
// TorchRec's 25.6%, for the same score).
TEST(PlannerVsTorchRec, TrainingPlansHoldNoMoreDeviceMemoryThanTorchRecs) {
  for (const char *name : {"torchrec_criteo_8.json", "torchrec_criteo_16.json",
                           "torchrec_powerlaw_32.json"}) {
    SCOPED_TRACE(name);
    TorchRecCase c = loadCase(name);
    ASSERT_FALSE(c.tables.empty());
    std::optional<ShardingPlan> own, theirs;
    ASSERT_NO_FATAL_FAILURE(planBoth(c, c.options, own, theirs));
    ASSERT_EQ(hostBytes(*theirs), 0);
    EXPECT_LE(maxDeviceBytes(*own), maxDeviceBytes(*theirs));
  }
}

// The search sees its collectives: no single move of a table-wise table off
// the busiest rank of a cost part (every other table where Ember put it, the
// plan imported whole) lowers the collective step without raising the
// plan's score or its fullest rank's device memory.
TEST(PlannerVsTorchRec, NoMoveOffABusiestRankLowersTheCollectiveStep) {
  TorchRecCase c = loadCase("torchrec_powerlaw_32.json");
  ASSERT_FALSE(c.tables.empty());
  llvm::Expected<ShardingPlan> own = planSharding(c.tables, c.options);
  ASSERT_TRUE(static_cast<bool>(own)) << llvm::toString(own.takeError());
  double score = own->maxRankCost();
  double step = own->collectiveStepCost();
  int64_t device = maxDeviceBytes(*own);
  ASSERT_LT(score, step); // the parts' busiest ranks differ on this case

  std::set<int64_t> busiest;
  auto busiestOf = [&](double CostParts::*part) {
    int64_t best = 0;
    for (size_t r = 0; r < own->ranks.size(); ++r)
      if (own->ranks[r].cost.*part > own->ranks[best].cost.*part)
        best = r;
    busiest.insert(best);
  };
  busiestOf(&CostParts::lookup);
  busiestOf(&CostParts::inputDist);
  busiestOf(&CostParts::outputDist);
  busiestOf(&CostParts::backward);

  std::map<std::string, TableSharding> whole;
  for (const TableSharding &sharding : own->tables)
    whole[sharding.table] = sharding;
  int tried = 0;
  for (const TableSharding &sharding : own->tables) {
    if (sharding.kind != ShardingKind::TableWise ||
        !busiest.count(sharding.shards[0].rank))
      continue;
    for (int64_t rank = 0; rank < c.options.topology.worldSize; ++rank) {
      if (rank == sharding.shards[0].rank)
        continue;
      PlannerOptions moved = c.options;
      moved.imported = whole;
      moved.imported[sharding.table].shards[0].rank = rank;
      llvm::Expected<ShardingPlan> other = planSharding(c.tables, moved);
      if (!other) { // does not fit on that rank
        llvm::consumeError(other.takeError());
        continue;
      }
      ++tried;
      if (other->maxRankCost() > score * (1 + 1e-9) ||
          maxDeviceBytes(*other) > device)
        continue;
      EXPECT_GE(other->collectiveStepCost(), step * (1 - 1e-9))
          << "moving " << sharding.table << " to rank " << rank
          << " lowers the collective step from " << step * 1e6 << " to "
          << other->collectiveStepCost() * 1e6 << " us";
    }
  }
  EXPECT_GT(tried, 0);
}

// The search lowers the busiest rank's all-to-all bytes: on 100 power-law
// tables x 32 ranks, for training no move of a table-wise table off the rank
// that moves the most bytes lowers that maximum without raising the plan's
// score, its collective step or its fullest rank's device memory; for
// inference the busiest rank moves fewer bytes than in TorchRec's plan.
TEST(PlannerVsTorchRec, NoMoveOffTheBusiestRankLowersItsAllToAllBytes) {
  TorchRecCase c = loadCase("torchrec_powerlaw_32.json");
  ASSERT_FALSE(c.tables.empty());
  {
    SCOPED_TRACE("inference");
    PlannerOptions inference = c.options;
    inference.includeBackward = false;
    std::optional<ShardingPlan> own, theirs;
    ASSERT_NO_FATAL_FAILURE(planBoth(c, inference, own, theirs));
    std::vector<double> ours =
        allToAllBytes(*own, c.tables, c.options.batchSizePerRank);
    std::vector<double> torchrec =
        allToAllBytes(*theirs, c.tables, c.options.batchSizePerRank);
    EXPECT_LE(*std::max_element(ours.begin(), ours.end()),
              *std::max_element(torchrec.begin(), torchrec.end()));
  }
  {
    SCOPED_TRACE("training");
    llvm::Expected<ShardingPlan> own = planSharding(c.tables, c.options);
    ASSERT_TRUE(static_cast<bool>(own)) << llvm::toString(own.takeError());
    std::vector<double> bytes =
        allToAllBytes(*own, c.tables, c.options.batchSizePerRank);
    double busiest = *std::max_element(bytes.begin(), bytes.end());
    int64_t from = std::max_element(bytes.begin(), bytes.end()) - bytes.begin();
    double score = own->maxRankCost(), step = own->collectiveStepCost();
    int64_t device = maxDeviceBytes(*own);

    std::map<std::string, TableSharding> whole;
    for (const TableSharding &sharding : own->tables)
      whole[sharding.table] = sharding;
    int tried = 0;
    for (const TableSharding &sharding : own->tables) {
      if (sharding.kind != ShardingKind::TableWise ||
          sharding.shards[0].rank != from)
        continue;
      for (int64_t rank = 0; rank < c.options.topology.worldSize; ++rank) {
        if (rank == from)
          continue;
        PlannerOptions moved = c.options;
        moved.imported = whole;
        moved.imported[sharding.table].shards[0].rank = rank;
        llvm::Expected<ShardingPlan> other = planSharding(c.tables, moved);
        if (!other) {
          llvm::consumeError(other.takeError());
          continue;
        }
        ++tried;
        if (other->maxRankCost() > score * (1 + 1e-9) ||
            other->collectiveStepCost() > step * (1 + 1e-9) ||
            maxDeviceBytes(*other) > device)
          continue;
        std::vector<double> after =
            allToAllBytes(*other, c.tables, c.options.batchSizePerRank);
        EXPECT_GE(*std::max_element(after.begin(), after.end()),
                  busiest * (1 - 1e-9))
            << "moving " << sharding.table << " to rank " << rank
            << " lowers the busiest rank's all-to-all bytes from " << busiest
            << " to " << *std::max_element(after.begin(), after.end());
      }
    }
    EXPECT_GT(tried, 0);
  }
}

// Two re-shards at once (step 3b): on the 100 power-law tables x 32 ranks
// for training, splitting pl_41 or pl_54 alone lowers the score but raises
// the busiest rank's all-to-all bytes; both split together lower both. The
// plan's busiest rank moves no more bytes than TorchRec's, and the plan
// holds no more device memory and scores better in Ember's model.
TEST(PlannerVsTorchRec, PowerLawTrainingMovesNoMoreBytesThanTorchRec) {
  TorchRecCase c = loadCase("torchrec_powerlaw_32.json");
  ASSERT_FALSE(c.tables.empty());
  std::optional<ShardingPlan> own, theirs;
  ASSERT_NO_FATAL_FAILURE(planBoth(c, c.options, own, theirs));
  std::vector<double> ours =
      allToAllBytes(*own, c.tables, c.options.batchSizePerRank);
  std::vector<double> torchrec =
      allToAllBytes(*theirs, c.tables, c.options.batchSizePerRank);
  EXPECT_LE(*std::max_element(ours.begin(), ours.end()),
            *std::max_element(torchrec.begin(), torchrec.end()));
  EXPECT_LE(maxDeviceBytes(*own), maxDeviceBytes(*theirs));
  EXPECT_LT(own->maxRankCost(), theirs->maxRankCost());
}

} // namespace
