//===- fuzz_sharding_json.cpp - Fuzzing the sharding planner's inputs -----===//
//
// Input: [selector: u8][text]. The selector picks the parser of
// sharding/PlanJson.h the text goes to:
//
//   0  parseTopologyJson (--topology)
//   1  applyStatsJson (--sharding-stats) over three fixed tables
//   2  parsePlanJson (--plan: TorchRec ParameterSharding JSON)
//   3  parseTableOverride (--table-sharding NAME=KIND[:KERNEL][@R1/R2])
//   4  parseShardingChoice (--sharding)
//
// Whatever parses is then given to the planner with the fixed tables (a
// topology of at most 64 ranks; 4 ranks otherwise), which must return a
// plan or an error; a plan it returns must verify, and its JSON must parse
// back to the same shardings.
//
//===----------------------------------------------------------------------===//
#include "fuzz_support.h"
#include "sharding/PlanJson.h"
#include "sharding/Planner.h"

using namespace ember::sharding;

namespace {

std::vector<TableSpec> fixedTables() {
  std::vector<TableSpec> tables(3);
  tables[0].name = "t_user";
  tables[0].rows = 1000;
  tables[0].dim = 16;
  tables[0].features = {{"f_user", 2.0}};
  tables[1].name = "t_item";
  tables[1].rows = 50;
  tables[1].dim = 8;
  tables[1].format = TableFormat::Int8RowWise;
  tables[1].features = {{"f_item", 1.0}, {"f_item_hist", 4.0}};
  tables[2].name = "t_ctx";
  tables[2].rows = 10;
  tables[2].dim = 4;
  tables[2].weighted = true;
  tables[2].pooling = PoolingKind::Mean;
  tables[2].features = {{"f_ctx", 1.0}};
  return tables;
}

void planAndCheck(const std::vector<TableSpec> &tables,
                  const PlannerOptions &options) {
  if (options.topology.worldSize > 64)
    return; // the planner's search time grows with the world; not its parser
  llvm::Expected<ShardingPlan> plan = planSharding(tables, options);
  if (!plan) {
    llvm::consumeError(plan.takeError());
    return;
  }
  EMBER_FUZZ_CHECK(plan->tables.size() == tables.size(), "a table missing");
  for (size_t i = 0; i < tables.size(); ++i) {
    llvm::Error e = verifySharding(tables[i], plan->tables[i], plan->topology);
    EMBER_FUZZ_CHECK(!e, "the planner's plan does not verify: " +
                             llvm::toString(std::move(e)));
  }
  std::string json = planToJson(*plan);
  auto again = parsePlanJson(json);
  EMBER_FUZZ_CHECK(!!again, "the planner's JSON does not parse back: " +
                                llvm::toString(again.takeError()));
  for (const TableSharding &t : plan->tables) {
    auto it = again->find(t.table);
    EMBER_FUZZ_CHECK(it != again->end(), "table " + t.table + " lost");
    EMBER_FUZZ_CHECK(it->second.kind == t.kind &&
                         it->second.shards == t.shards &&
                         it->second.replicaRanks == t.replicaRanks,
                     "table " + t.table + " changed in a JSON round trip");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ember::fuzz::ByteReader in(data, size);
  uint8_t selector = in.u8();
  std::string text = in.rest();
  std::vector<TableSpec> tables = fixedTables();
  PlannerOptions options;
  options.topology.worldSize = 4;
  options.search = SearchMode::Greedy;
  switch (selector % 5) {
  case 0: {
    auto topology = parseTopologyJson(text, options.topology);
    if (!topology) {
      llvm::consumeError(topology.takeError());
      return 0;
    }
    options.topology = *topology;
    break;
  }
  case 1:
    if (llvm::Error e = applyStatsJson(text, tables)) {
      llvm::consumeError(std::move(e));
      return 0;
    }
    break;
  case 2: {
    auto plan = parsePlanJson(text);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      return 0;
    }
    options.imported = std::move(*plan);
    break;
  }
  case 3: {
    auto override = parseTableOverride(text);
    if (!override) {
      llvm::consumeError(override.takeError());
      return 0;
    }
    options.tables[override->first] = override->second;
    break;
  }
  default: {
    auto choice = parseShardingChoice(text);
    if (!choice) {
      llvm::consumeError(choice.takeError());
      return 0;
    }
    options.globalKind = *choice;
    break;
  }
  }
  planAndCheck(tables, options);
  return 0;
}
