//===- plan_json_test.cpp - planner files: topology, stats, plans ---------===//

#include "sharding/PlanJson.h"
#include "sharding/ShardingDriver.h"
#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

using namespace ember::sharding;

namespace {

std::string errorOf(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : std::string();
}

template <typename T> std::string errorOf(llvm::Expected<T> value) {
  return value ? std::string() : llvm::toString(value.takeError());
}

TEST(PlanJson, TopologyOverridesDefaults) {
  Topology defaults;
  llvm::Expected<Topology> topology = parseTopologyJson(
      R"({"world_size": 16, "ranks_per_node": 4, "device_memory_gb": 141,
          "inter_node_bandwidth_gb_per_s": 25, "lookup_efficiency": 0.5})",
      defaults);
  ASSERT_TRUE(static_cast<bool>(topology)) << errorOf(topology.takeError());
  EXPECT_EQ(topology->worldSize, 16);
  EXPECT_EQ(topology->ranksPerNode, 4);
  EXPECT_EQ(topology->deviceMemoryBytes, 141'000'000'000);
  EXPECT_DOUBLE_EQ(topology->interNodeBandwidth, 25e9);
  EXPECT_DOUBLE_EQ(topology->lookupEfficiency, 0.5);
  EXPECT_DOUBLE_EQ(topology->intraNodeBandwidth, defaults.intraNodeBandwidth);
  EXPECT_EQ(topology->numNodes(), 4);
}

TEST(PlanJson, TopologyEmbeddingMemoryCap) {
  Topology defaults;
  llvm::Expected<Topology> topology = parseTopologyJson(
      R"({"device_memory_gb": 80, "reserved_device_fraction": 0.1,
          "embedding_memory_cap_gb": 20.5})",
      defaults);
  ASSERT_TRUE(static_cast<bool>(topology)) << errorOf(topology.takeError());
  EXPECT_EQ(topology->embeddingMemoryCapBytes, 20'500'000'000);
  // The cap below what the reservation leaves (72 GB) is what embeddings get.
  EXPECT_EQ(topology->usableDeviceMemory(), 20'500'000'000);
  topology = parseTopologyJson(R"({"embedding_memory_cap_gb": 100})", defaults);
  ASSERT_TRUE(static_cast<bool>(topology)) << errorOf(topology.takeError());
  EXPECT_EQ(topology->usableDeviceMemory(), 72'000'000'000);
  // 0: no cap.
  topology = parseTopologyJson(R"({"embedding_memory_cap_gb": 0})", defaults);
  ASSERT_TRUE(static_cast<bool>(topology)) << errorOf(topology.takeError());
  EXPECT_EQ(topology->usableDeviceMemory(), 72'000'000'000);
  EXPECT_NE(errorOf(parseTopologyJson(R"({"embedding_memory_cap_gb": -1})",
                                      defaults))
                .find("'embedding_memory_cap_gb'"),
            std::string::npos);
  EXPECT_NE(errorOf(parseTopologyJson(R"({"embedding_memory_cap_gb": "20"})",
                                      defaults))
                .find("'embedding_memory_cap_gb'"),
            std::string::npos);
  EXPECT_NE(errorOf(parseTopologyJson(R"({"embedding_memory_cap_gb": 1e30})",
                                      defaults))
                .find("'embedding_memory_cap_gb' must be at most 4.6e9"),
            std::string::npos);
}

TEST(PlanJson, TopologyErrors) {
  Topology defaults;
  EXPECT_NE(errorOf(parseTopologyJson("{", defaults)).find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(errorOf(parseTopologyJson("[1]", defaults)).find("JSON object"),
            std::string::npos);
  EXPECT_NE(errorOf(parseTopologyJson(R"({"hbm": 3})", defaults))
                .find("unknown field 'hbm'"),
            std::string::npos);
  EXPECT_NE(errorOf(parseTopologyJson(R"({"world_size": 0})", defaults))
                .find("'world_size' must be a positive integer"),
            std::string::npos);
  EXPECT_NE(
      errorOf(parseTopologyJson(R"({"device_memory_gb": "80"})", defaults))
          .find("'device_memory_gb'"),
      std::string::npos);
  // Found by fuzz_sharding_json: a size past int64 bytes was converted
  // (undefined behaviour) instead of refused.
  EXPECT_NE(errorOf(parseTopologyJson(
                        R"({"host_memory_gb": 033333333333333333333333333})",
                        defaults))
                .find("'host_memory_gb' must be at most 4.6e9"),
            std::string::npos);
}

TEST(PlanJson, StatsSetPoolingFactors) {
  std::vector<TableSpec> tables(2);
  tables[0].name = "t_user";
  tables[0].features = {{"user", 1}, {"user_hist", 1}};
  tables[1].name = "t_item";
  tables[1].features = {{"item", 1}};
  ASSERT_EQ(errorOf(applyStatsJson(
                R"({"tables": {"t_user": {"pooling_factor": 4}},
                    "features": {"user_hist": {"pooling_factor": 30.5},
                                 "item": {"pooling_factor": 0}}})",
                tables)),
            "");
  EXPECT_EQ(tables[0].features[0].poolingFactor, 4);
  EXPECT_EQ(tables[0].features[1].poolingFactor, 30.5);
  EXPECT_EQ(tables[1].features[0].poolingFactor, 0);
  EXPECT_NE(
      errorOf(applyStatsJson(R"({"features": {"nope": {"pooling_factor": 1}}})",
                             tables))
          .find("unknown feature 'nope'"),
      std::string::npos);
  EXPECT_NE(
      errorOf(applyStatsJson(
                  R"({"tables": {"t_item": {"pooling_factor": -1}}})", tables))
          .find("non-negative"),
      std::string::npos);
  EXPECT_NE(errorOf(applyStatsJson(R"({"table": {}})", tables))
                .find("unknown field 'table'"),
            std::string::npos);
}

TEST(PlanJson, ReadsTorchRecParameterSharding) {
  llvm::Expected<std::map<std::string, TableSharding>> plan = parsePlanJson(R"({
    "t_user": {"sharding_type": "row_wise", "compute_kernel": "fused",
               "ranks": [0, 1],
               "sharding_spec": {"shards": [
                 {"shard_offsets": [0, 0], "shard_sizes": [500, 64],
                  "placement": "rank:0/cuda:0"},
                 {"shard_offsets": [500, 0], "shard_sizes": [500, 64],
                  "placement": "rank:1/cuda:1"}]},
               "cache_params": null, "enforce_hbm": null,
               "stochastic_rounding": null, "bounds_check_mode": null,
               "output_dtype": "FP32", "key_value_params": null},
    "t_item": {"sharding_type": "data_parallel", "compute_kernel": "dense",
               "ranks": [1, 0], "sharding_spec": null,
               "output_dtype": null, "key_value_params": null}
  })");
  ASSERT_TRUE(static_cast<bool>(plan)) << errorOf(plan.takeError());
  const TableSharding &user = plan->at("t_user");
  EXPECT_EQ(user.kind, ShardingKind::RowWise);
  ASSERT_EQ(user.shards.size(), 2u);
  EXPECT_EQ(user.shards[1], (Shard{500, 0, 500, 64, 1}));
  const TableSharding &item = plan->at("t_item");
  EXPECT_EQ(item.kind, ShardingKind::DataParallel);
  EXPECT_EQ(item.kernel, ComputeKernel::Dense);
  EXPECT_EQ(item.replicaRanks, std::vector<int64_t>({0, 1}));
}

TEST(PlanJson, ReadsTorchRecTableColumnWiseAsColumnWise) {
  llvm::Expected<std::map<std::string, TableSharding>> plan = parsePlanJson(R"({
    "t": {"sharding_type": "table_column_wise", "compute_kernel": "fused",
          "ranks": [2, 3],
          "sharding_spec": {"shards": [
            {"shard_offsets": [0, 0], "shard_sizes": [100, 32],
             "placement": "rank:2/cuda:2"},
            {"shard_offsets": [0, 32], "shard_sizes": [100, 32],
             "placement": "rank:3/cuda:3"}]}}
  })");
  ASSERT_TRUE(static_cast<bool>(plan)) << errorOf(plan.takeError());
  const TableSharding &t = plan->at("t");
  EXPECT_EQ(t.kind, ShardingKind::ColumnWise);
  ASSERT_EQ(t.shards.size(), 2u);
  EXPECT_EQ(t.shards[1], (Shard{0, 32, 100, 32, 3}));
}

TEST(PlanJson, ReadsTorchRecModuleNesting) {
  // TorchRec's ShardingPlan: module path -> table -> ParameterSharding.
  const char *text = R"({
    "sparse.ebc": {
      "t_user": {"sharding_type": "table_wise", "compute_kernel": "fused",
                 "ranks": [1], "sharding_spec": {"shards": [
                   {"shard_offsets": [0, 0], "shard_sizes": [10, 4],
                    "placement": "rank:1/cuda:1"}]}}},
    "t_item": {"sharding_type": "data_parallel", "compute_kernel": "dense",
               "ranks": null, "sharding_spec": null}
  })";
  llvm::Expected<std::map<std::string, TableSharding>> plan =
      parsePlanJson(text);
  ASSERT_TRUE(static_cast<bool>(plan)) << errorOf(plan.takeError());
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ(plan->at("t_user").shards, (std::vector<Shard>{{0, 0, 10, 4, 1}}));
  EXPECT_TRUE(plan->at("t_item").replicaRanks.empty());

  std::string twice = errorOf(parsePlanJson(R"({
    "a": {"t": {"sharding_type": "data_parallel"}},
    "b": {"t": {"sharding_type": "data_parallel"}}})"));
  EXPECT_NE(twice.find("table 't' appears twice"), std::string::npos) << twice;
}

TEST(PlanJson, PlanErrorsNameTheTable) {
  auto error = [](const char *text) { return errorOf(parsePlanJson(text)); };
  EXPECT_NE(error("{\"t\": 3"
                  "")
                .find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(error(R"({"t": {"compute_kernel": "fused"}})")
                .find("table 't': has no 'sharding_type'"),
            std::string::npos);
  EXPECT_NE(error(R"({"t": {"sharding_type": "diagonal"}})")
                .find("'sharding_type' must be one of"),
            std::string::npos);
  EXPECT_NE(error(R"({"t": {"sharding_type": "table_wise"}})")
                .find("no 'sharding_spec'"),
            std::string::npos);
  EXPECT_NE(error(R"({"t": {"sharding_type": "table_wise", "sharding_spec":
                   {"shards": [{"shard_offsets": [0, 0], "shard_sizes": [1, 4],
                                "placement": "cuda:0"}]}}})")
                .find("'placement' must look like"),
            std::string::npos);
  EXPECT_NE(error(R"({"t": {"sharding_type": "table_wise", "ranks": [1],
                   "sharding_spec": {"shards": [{"shard_offsets": [0, 0],
                   "shard_sizes": [1, 4], "placement": "rank:0/cuda:0"}]}}})")
                .find("'ranks' does not list"),
            std::string::npos);
  EXPECT_NE(error(R"({"t": {"sharding_type": "table_wise", "sharding_spec":
                   {"shards": [{"shard_offsets": [0], "shard_sizes": [1, 4],
                                "placement": "rank:0/cuda:0"}]}}})")
                .find("two entries"),
            std::string::npos);
  EXPECT_NE(error(R"({"t": {"sharding_type": "table_wise", "colour": 1}})")
                .find("unknown field 'colour'"),
            std::string::npos);
}

TEST(PlanJson, ExportShape) {
  ShardingPlan plan;
  plan.topology.ranksPerNode = 2;
  TableSharding tw;
  tw.table = "a";
  tw.kind = ShardingKind::TableWise;
  tw.shards = {Shard{0, 0, 10, 8, 3}};
  TableSharding dp;
  dp.table = "b";
  dp.kind = ShardingKind::DataParallel;
  dp.kernel = ComputeKernel::Dense;
  dp.replicaRanks = {0, 1};
  plan.tables = {tw, dp};
  std::string json = planToJson(plan);
  EXPECT_NE(json.find("\"placement\": \"rank:3/cuda:1\""), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"shard_sizes\": [\n"), std::string::npos) << json;
  EXPECT_NE(json.find("\"sharding_spec\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"sharding_type\": \"data_parallel\""),
            std::string::npos)
      << json;
  llvm::Expected<std::map<std::string, TableSharding>> back =
      parsePlanJson(json);
  ASSERT_TRUE(static_cast<bool>(back)) << errorOf(back.takeError());
  EXPECT_EQ(back->at("a").shards, tw.shards);
  EXPECT_EQ(back->at("b").replicaRanks, dp.replicaRanks);
}

TEST(PlanJson, ExportNestsTablesUnderTheirModule) {
  // TorchRec's ShardingPlan shape for tables whose collection has a module
  // path; the others stay at the top level. The import reads both back.
  ShardingPlan plan;
  TableSharding user, item, loose;
  user.table = "t_user";
  item.table = "t_item";
  loose.table = "bag0";
  for (TableSharding *t : {&user, &item, &loose}) {
    t->kind = ShardingKind::DataParallel;
    t->kernel = ComputeKernel::Dense;
    t->replicaRanks = {0, 1};
  }
  plan.tables = {user, item, loose};
  TableSpec userSpec, itemSpec, looseSpec;
  userSpec.name = "t_user";
  itemSpec.name = "t_item";
  userSpec.module = itemSpec.module = "sparse_arch.embedding_bag_collection";
  looseSpec.name = "bag0";
  std::string json = planToJson(plan, {userSpec, itemSpec, looseSpec});
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  ASSERT_TRUE(static_cast<bool>(parsed)) << errorOf(parsed.takeError());
  const llvm::json::Object *root = parsed->getAsObject();
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->size(), 2u) << json;
  const llvm::json::Object *module =
      root->getObject("sparse_arch.embedding_bag_collection");
  ASSERT_NE(module, nullptr) << json;
  EXPECT_NE(module->getObject("t_user"), nullptr) << json;
  EXPECT_NE(module->getObject("t_item"), nullptr) << json;
  EXPECT_NE(root->getObject("bag0"), nullptr) << json;
  llvm::Expected<std::map<std::string, TableSharding>> back =
      parsePlanJson(json);
  ASSERT_TRUE(static_cast<bool>(back)) << errorOf(back.takeError());
  EXPECT_EQ(back->size(), 3u);
}

TEST(PlanJson, TableOverrides) {
  auto parsed = parseTableOverride("t_user=row_wise");
  ASSERT_TRUE(static_cast<bool>(parsed));
  EXPECT_EQ(parsed->first, "t_user");
  EXPECT_EQ(parsed->second.kind, ShardingKind::RowWise);
  EXPECT_TRUE(parsed->second.ranks.empty());

  parsed = parseTableOverride("t=column_wise:fused_uvm_caching@2/2/5");
  ASSERT_TRUE(static_cast<bool>(parsed));
  EXPECT_EQ(parsed->second.kind, ShardingKind::ColumnWise);
  EXPECT_EQ(parsed->second.kernel, ComputeKernel::FusedUvmCaching);
  EXPECT_EQ(parsed->second.ranks, std::vector<int64_t>({2, 2, 5}));

  parsed = parseTableOverride("t=auto@3");
  ASSERT_TRUE(static_cast<bool>(parsed));
  EXPECT_FALSE(parsed->second.kind.has_value());
  EXPECT_EQ(parsed->second.ranks, std::vector<int64_t>({3}));

  EXPECT_NE(errorOf(parseTableOverride("t")).find("must look like"),
            std::string::npos);
  EXPECT_NE(errorOf(parseTableOverride("t=diagonal")).find("unknown sharding"),
            std::string::npos);
  EXPECT_NE(errorOf(parseTableOverride("t=row_wise:gpu")).find("kernel 'gpu'"),
            std::string::npos);
  EXPECT_NE(errorOf(parseTableOverride("t=row_wise@x")).find("not a rank"),
            std::string::npos);
}

TEST(PlanJson, DriverRejectsBadRequests) {
  std::vector<TableSpec> tables;
  ShardingRequest request;
  request.sharding = "sideways";
  EXPECT_NE(errorOf(preparePlannerOptions(request, tables)).find("sideways"),
            std::string::npos);
  request.sharding = "auto";
  request.topologyFile = "/nonexistent/topology.json";
  EXPECT_NE(errorOf(preparePlannerOptions(request, tables))
                .find("cannot read the topology file"),
            std::string::npos);
  request.topologyFile.clear();
  request.tableOverrides = {"a=row_wise", "a=table_wise"};
  EXPECT_NE(
      errorOf(preparePlannerOptions(request, tables)).find("overridden twice"),
      std::string::npos);
  request.tableOverrides.clear();
  request.worldSize = 4;
  request.optimizer = "adam";
  llvm::Expected<PlannerOptions> options =
      preparePlannerOptions(request, tables);
  ASSERT_TRUE(static_cast<bool>(options));
  EXPECT_EQ(options->topology.worldSize, 4);
  EXPECT_EQ(options->optimizer, Optimizer::Adam);
  EXPECT_FALSE(options->globalKind.has_value());
}

} // namespace
