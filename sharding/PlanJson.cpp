//===- PlanJson.cpp - JSON in and out of the sharding planner -------------===//

#include "sharding/PlanJson.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include <cmath>

using namespace ember::sharding;
using llvm::StringRef;
namespace json = llvm::json;

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

llvm::Expected<json::Value> parseObject(StringRef text, StringRef what) {
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value)
    return makeError(
        what + " is not valid JSON: " + llvm::toString(value.takeError()));
  if (!value->getAsObject())
    return makeError(what + " must be a JSON object");
  return value;
}

/// A positive (or non-negative) finite number from `value`.
llvm::Expected<double> getNumber(const json::Value &value, StringRef field,
                                 bool allowZero) {
  std::optional<double> number = value.getAsNumber();
  if (!number || !std::isfinite(*number) || *number < 0 ||
      (!allowZero && *number == 0))
    return makeError("'" + field + "' must be a " +
                     (allowZero ? "non-negative" : "positive") + " number");
  return *number;
}

llvm::Expected<int64_t> getInteger(const json::Value &value, StringRef field) {
  std::optional<int64_t> number = value.getAsInteger();
  if (!number || *number < 1)
    return makeError("'" + field + "' must be a positive integer");
  return *number;
}

llvm::Expected<std::vector<int64_t>> getIntegerList(const json::Value &value,
                                                    StringRef field) {
  const json::Array *array = value.getAsArray();
  if (!array)
    return makeError("'" + field + "' must be a list of integers");
  std::vector<int64_t> result;
  for (const json::Value &element : *array) {
    std::optional<int64_t> number = element.getAsInteger();
    if (!number || *number < 0)
      return makeError("'" + field +
                       "' must be a list of non-negative "
                       "integers");
    result.push_back(*number);
  }
  return result;
}

/// The pooling factor of a stats entry {"pooling_factor": x}.
llvm::Expected<double> poolingFactorOf(const json::Value &entry,
                                       StringRef where) {
  const json::Object *object = entry.getAsObject();
  if (!object)
    return makeError(where + " must be an object like {\"pooling_factor\": "
                             "2.5}");
  std::optional<double> factor;
  for (const auto &[key, value] : *object) {
    if (key != "pooling_factor")
      return makeError(where + " has unknown field '" + key.str() + "'");
    llvm::Expected<double> number = getNumber(value, "pooling_factor", true);
    if (!number)
      return makeError(where + ": " + llvm::toString(number.takeError()));
    factor = *number;
  }
  if (!factor)
    return makeError(where + " has no 'pooling_factor'");
  return *factor;
}

} // namespace

llvm::Expected<Topology>
ember::sharding::parseTopologyJson(StringRef text, const Topology &defaults) {
  llvm::Expected<json::Value> parsed = parseObject(text, "the topology");
  if (!parsed)
    return parsed.takeError();
  Topology topology = defaults;
  constexpr double kGB = 1e9;
  for (const auto &entry : *parsed->getAsObject()) {
    std::string key = entry.first.str();
    const json::Value &value = entry.second;
    auto fail = [&](llvm::Error error) {
      return makeError("topology: " + llvm::toString(std::move(error)));
    };
    auto number = [&](double &out, double scale,
                      bool allowZero) -> llvm::Error {
      llvm::Expected<double> result = getNumber(value, key, allowZero);
      if (!result)
        return fail(result.takeError());
      out = *result * scale;
      return llvm::Error::success();
    };
    auto bytes = [&](int64_t &out) -> llvm::Error {
      double result = 0;
      if (llvm::Error error =
              number(result, kGB,
                     key == "host_memory_gb" ||
                         key == "embedding_memory_cap_gb"))
        return error;
      // Bytes are int64: refuse what does not fit (2^62 bytes, 4.6e9 GB).
      constexpr double kMaxBytes = 4611686018427387904.0;
      if (result > kMaxBytes)
        return fail(makeError("'" + key + "' must be at most 4.6e9 (GB)"));
      out = static_cast<int64_t>(result);
      return llvm::Error::success();
    };
    auto integer = [&](int64_t &out) -> llvm::Error {
      llvm::Expected<int64_t> result = getInteger(value, key);
      if (!result)
        return fail(result.takeError());
      out = *result;
      return llvm::Error::success();
    };
    llvm::Error error = llvm::Error::success();
    if (key == "world_size")
      error = integer(topology.worldSize);
    else if (key == "ranks_per_node")
      error = integer(topology.ranksPerNode);
    else if (key == "device_memory_gb")
      error = bytes(topology.deviceMemoryBytes);
    else if (key == "host_memory_gb")
      error = bytes(topology.hostMemoryBytes);
    else if (key == "reserved_device_fraction")
      error = number(topology.reservedDeviceFraction, 1, true);
    else if (key == "embedding_memory_cap_gb")
      error = bytes(topology.embeddingMemoryCapBytes);
    else if (key == "device_bandwidth_gb_per_s")
      error = number(topology.deviceBandwidth, kGB, false);
    else if (key == "lookup_efficiency")
      error = number(topology.lookupEfficiency, 1, false);
    else if (key == "intra_node_bandwidth_gb_per_s")
      error = number(topology.intraNodeBandwidth, kGB, false);
    else if (key == "inter_node_bandwidth_gb_per_s")
      error = number(topology.interNodeBandwidth, kGB, false);
    else if (key == "host_to_device_bandwidth_gb_per_s")
      error = number(topology.hostToDeviceBandwidth, kGB, false);
    else if (key == "device_tflops")
      error = number(topology.deviceFlops, 1e12, false);
    else if (key == "kernel_launch_us")
      error = number(topology.kernelLaunchSeconds, 1e-6, true);
    else if (key == "collective_latency_us")
      error = number(topology.collectiveLatencySeconds, 1e-6, true);
    else
      error = makeError("topology: unknown field '" + key +
                        "' (known: world_size, ranks_per_node, "
                        "device_memory_gb, host_memory_gb, "
                        "reserved_device_fraction, embedding_memory_cap_gb, "
                        "device_bandwidth_gb_per_s, "
                        "lookup_efficiency, intra_node_bandwidth_gb_per_s, "
                        "inter_node_bandwidth_gb_per_s, "
                        "host_to_device_bandwidth_gb_per_s, device_tflops, "
                        "kernel_launch_us, collective_latency_us)");
    if (error)
      return error;
  }
  if (topology.reservedDeviceFraction >= 1)
    return makeError("topology: 'reserved_device_fraction' must be below 1");
  if (topology.lookupEfficiency > 1)
    return makeError("topology: 'lookup_efficiency' must be at most 1");
  return topology;
}

llvm::Error ember::sharding::applyStatsJson(StringRef text,
                                            std::vector<TableSpec> &tables) {
  llvm::Expected<json::Value> parsed = parseObject(text, "the statistics");
  if (!parsed)
    return parsed.takeError();
  const json::Object &root = *parsed->getAsObject();
  for (const auto &[key, value] : root)
    if (key != "tables" && key != "features")
      return makeError("statistics: unknown field '" + key.str() +
                       "' (known: tables, features)");
  if (const json::Value *tableStats = root.get("tables")) {
    const json::Object *object = tableStats->getAsObject();
    if (!object)
      return makeError("statistics: 'tables' must be an object");
    for (const auto &[nameRef, entry] : *object) {
      StringRef name = nameRef;
      auto it = llvm::find_if(
          tables, [&](const TableSpec &table) { return table.name == name; });
      if (it == tables.end())
        return makeError("statistics: unknown table '" + name.str() + "'");
      llvm::Expected<double> factor =
          poolingFactorOf(entry, "statistics of table '" + name.str() + "'");
      if (!factor)
        return factor.takeError();
      for (FeatureSpec &feature : it->features)
        feature.poolingFactor = *factor;
    }
  }
  if (const json::Value *featureStats = root.get("features")) {
    const json::Object *object = featureStats->getAsObject();
    if (!object)
      return makeError("statistics: 'features' must be an object");
    for (const auto &[name, entry] : *object) {
      llvm::Expected<double> factor =
          poolingFactorOf(entry, "statistics of feature '" + name.str() + "'");
      if (!factor)
        return factor.takeError();
      bool found = false;
      for (TableSpec &table : tables)
        for (FeatureSpec &feature : table.features)
          if (feature.name == name) {
            feature.poolingFactor = *factor;
            found = true;
          }
      if (!found)
        return makeError("statistics: unknown feature '" + name.str() + "'");
    }
  }
  return llvm::Error::success();
}

std::string ember::sharding::placementString(int64_t rank,
                                             int64_t ranksPerNode) {
  int64_t local = ranksPerNode > 0 ? rank % ranksPerNode : rank;
  return llvm::formatv("rank:{0}/cuda:{1}", rank, local).str();
}

namespace {

/// Reads one ParameterSharding object.
llvm::Expected<TableSharding> parseParameterSharding(StringRef table,
                                                     const json::Value &value) {
  const json::Object *object = value.getAsObject();
  if (!object)
    return makeError("must be a ParameterSharding object");
  TableSharding sharding;
  sharding.table = table.str();
  std::optional<std::vector<int64_t>> ranks;
  const json::Value *spec = nullptr;
  bool haveKind = false;
  sharding.kernel = ComputeKernel::Fused;
  bool haveKernel = false;
  for (const auto &[keyRef, field] : *object) {
    StringRef key = keyRef;
    if (key == "sharding_type") {
      std::optional<StringRef> name = field.getAsString();
      std::optional<ShardingKind> kind =
          name ? parseShardingKind(*name) : std::nullopt;
      // TorchRec's table_column_wise is column shards placed on the ranks
      // of one node: the same shards and lookups as column_wise for Ember
      // (its partitioning does not depend on where the shards are).
      if (name && *name == "table_column_wise")
        kind = ShardingKind::ColumnWise;
      if (!kind)
        return makeError("'sharding_type' must be one of table_wise, "
                         "row_wise, column_wise, table_row_wise, "
                         "table_column_wise, data_parallel");
      sharding.kind = *kind;
      haveKind = true;
    } else if (key == "compute_kernel") {
      std::optional<StringRef> name = field.getAsString();
      std::optional<ComputeKernel> kernel =
          name ? parseComputeKernel(*name) : std::nullopt;
      if (!kernel)
        return makeError("'compute_kernel' must be one of fused, "
                         "fused_uvm_caching, fused_uvm, dense");
      sharding.kernel = *kernel;
      haveKernel = true;
    } else if (key == "ranks") {
      if (field.kind() == json::Value::Null)
        continue;
      llvm::Expected<std::vector<int64_t>> list = getIntegerList(field, key);
      if (!list)
        return list.takeError();
      ranks = *list;
    } else if (key == "sharding_spec") {
      if (field.kind() != json::Value::Null)
        spec = &field;
    } else if (key == "cache_params" || key == "enforce_hbm" ||
               key == "stochastic_rounding" || key == "bounds_check_mode" ||
               key == "output_dtype" || key == "key_value_params") {
      // The other fields of TorchRec 1.9's ParameterSharding: accepted,
      // not used by Ember.
    } else {
      return makeError("unknown field '" + key + "'");
    }
  }
  if (!haveKind)
    return makeError("has no 'sharding_type'");
  if (!haveKernel && sharding.kind == ShardingKind::DataParallel)
    sharding.kernel = ComputeKernel::Dense;

  if (sharding.kind == ShardingKind::DataParallel) {
    if (spec)
      return makeError("data_parallel takes no 'sharding_spec'");
    if (ranks)
      sharding.replicaRanks = *ranks;
    llvm::sort(sharding.replicaRanks);
    return sharding;
  }
  if (!spec)
    return makeError("has no 'sharding_spec'");
  const json::Object *specObject = spec->getAsObject();
  const json::Array *shards =
      specObject ? specObject->getArray("shards") : nullptr;
  if (!shards)
    return makeError("'sharding_spec' must be an object with a 'shards' "
                     "list");
  for (const auto &[key, unused] : *specObject)
    if (key != "shards")
      return makeError("'sharding_spec' has unknown field '" + key.str() + "'");
  for (size_t i = 0; i < shards->size(); ++i) {
    const json::Object *shardObject = (*shards)[i].getAsObject();
    std::string where = llvm::formatv("shard #{0}", i).str();
    if (!shardObject)
      return makeError(where + " must be an object");
    Shard shard;
    bool haveOffsets = false, haveSizes = false, havePlacement = false;
    for (const auto &[keyRef, field] : *shardObject) {
      StringRef key = keyRef;
      if (key == "shard_offsets" || key == "shard_sizes") {
        llvm::Expected<std::vector<int64_t>> list = getIntegerList(field, key);
        if (!list)
          return makeError(where + ": " + llvm::toString(list.takeError()));
        if (list->size() != 2)
          return makeError(where + ": '" + key +
                           "' must have two entries (rows, columns)");
        if (key == "shard_offsets") {
          shard.rowOffset = (*list)[0];
          shard.colOffset = (*list)[1];
          haveOffsets = true;
        } else {
          shard.rows = (*list)[0];
          shard.cols = (*list)[1];
          haveSizes = true;
        }
      } else if (key == "placement") {
        std::optional<StringRef> text = field.getAsString();
        StringRef rest = text ? *text : StringRef();
        int64_t rank = -1;
        if (!rest.consume_front("rank:") ||
            rest.take_until([](char c) { return c == '/'; })
                .getAsInteger(10, rank) ||
            rank < 0)
          return makeError(where + ": 'placement' must look like "
                                   "\"rank:3/cuda:3\"");
        shard.rank = rank;
        havePlacement = true;
      } else {
        return makeError(where + " has unknown field '" + key + "'");
      }
    }
    if (!haveOffsets || !haveSizes || !havePlacement)
      return makeError(where + " needs 'shard_offsets', 'shard_sizes' and "
                               "'placement'");
    sharding.shards.push_back(shard);
  }
  if (ranks) {
    std::vector<int64_t> shardRanks = sharding.ranks();
    if (*ranks != shardRanks)
      return makeError("'ranks' does not list the ranks of the shards' "
                       "placements in order");
  }
  return sharding;
}

} // namespace

llvm::Expected<std::map<std::string, TableSharding>>
ember::sharding::parsePlanJson(StringRef text) {
  llvm::Expected<json::Value> parsed = parseObject(text, "the plan");
  if (!parsed)
    return parsed.takeError();
  std::map<std::string, TableSharding> plan;
  auto addTable = [&](StringRef name, const json::Value &value) -> llvm::Error {
    llvm::Expected<TableSharding> sharding =
        parseParameterSharding(name, value);
    if (!sharding)
      return makeError("plan: table '" + name +
                       "': " + llvm::toString(sharding.takeError()));
    if (!plan.emplace(name.str(), std::move(*sharding)).second)
      return makeError("plan: table '" + name + "' appears twice");
    return llvm::Error::success();
  };
  for (const auto &entry : *parsed->getAsObject()) {
    StringRef name = entry.first;
    const json::Value &value = entry.second;
    // TorchRec's ShardingPlan nests the tables under module paths
    // ({"sparse.ebc": {"t_user": {...}}}): an entry without a sharding_type
    // whose members are all ParameterSharding objects is such a module.
    const json::Object *object = value.getAsObject();
    bool isModule = object && !object->get("sharding_type") &&
                    !object->empty() &&
                    llvm::all_of(*object, [](const auto &member) {
                      const json::Object *inner = member.second.getAsObject();
                      return inner && inner->get("sharding_type");
                    });
    if (!isModule) {
      if (llvm::Error error = addTable(name, value))
        return error;
      continue;
    }
    for (const auto &member : *object)
      if (llvm::Error error = addTable(member.first, member.second))
        return error;
  }
  return plan;
}

std::string ember::sharding::planToJson(const ShardingPlan &plan,
                                        const std::vector<TableSpec> &tables) {
  json::Object root;
  for (const TableSharding &sharding : plan.tables) {
    std::string module;
    for (const TableSpec &spec : tables)
      if (spec.name == sharding.table)
        module = spec.module;
    json::Object entry;
    entry["sharding_type"] = shardingKindName(sharding.kind).str();
    entry["compute_kernel"] = computeKernelName(sharding.kernel).str();
    json::Array ranks;
    for (int64_t rank : sharding.ranks())
      ranks.push_back(rank);
    entry["ranks"] = std::move(ranks);
    if (sharding.kind == ShardingKind::DataParallel) {
      entry["sharding_spec"] = nullptr;
    } else {
      json::Array shards;
      for (const Shard &shard : sharding.shards)
        shards.push_back(json::Object{
            {"shard_offsets", json::Array{shard.rowOffset, shard.colOffset}},
            {"shard_sizes", json::Array{shard.rows, shard.cols}},
            {"placement",
             placementString(shard.rank, plan.topology.ranksPerNode)}});
      entry["sharding_spec"] = json::Object{{"shards", std::move(shards)}};
    }
    if (module.empty()) {
      root[sharding.table] = std::move(entry);
      continue;
    }
    json::Value &holder = root[module];
    if (!holder.getAsObject())
      holder = json::Object();
    (*holder.getAsObject())[sharding.table] = std::move(entry);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", json::Value(std::move(root))) << "\n";
  return text;
}

llvm::Expected<std::optional<ShardingKind>>
ember::sharding::parseShardingChoice(StringRef text) {
  if (text == "auto" || text.empty())
    return std::optional<ShardingKind>();
  if (std::optional<ShardingKind> kind = parseShardingKind(text))
    return kind;
  return makeError("unknown sharding '" + text +
                   "' (expected auto, table_wise, row_wise, column_wise, "
                   "table_row_wise or data_parallel)");
}

llvm::Expected<std::pair<std::string, TableConstraint>>
ember::sharding::parseTableOverride(StringRef text) {
  auto [name, rest] = text.split('=');
  name = name.trim();
  if (name.empty() || rest.empty())
    return makeError("table override '" + text +
                     "' must look like NAME=KIND[:KERNEL][@R1/R2/...]");
  TableConstraint constraint;
  auto [choice, pins] = rest.split('@');
  auto [kindText, kernelText] = choice.split(':');
  llvm::Expected<std::optional<ShardingKind>> kind =
      parseShardingChoice(kindText.trim());
  if (!kind)
    return makeError("table override '" + text +
                     "': " + llvm::toString(kind.takeError()));
  constraint.kind = *kind;
  if (!kernelText.empty()) {
    constraint.kernel = parseComputeKernel(kernelText.trim());
    if (!constraint.kernel)
      return makeError("table override '" + text +
                       "': unknown compute "
                       "kernel '" +
                       kernelText +
                       "' (expected fused, fused_uvm_caching, fused_uvm or "
                       "dense)");
  }
  if (rest.contains('@')) {
    llvm::SmallVector<StringRef> parts;
    pins.split(parts, '/');
    for (StringRef part : parts) {
      int64_t rank = -1;
      if (part.trim().getAsInteger(10, rank) || rank < 0)
        return makeError("table override '" + text + "': '" + part +
                         "' is not a rank");
      constraint.ranks.push_back(rank);
    }
  }
  return std::make_pair(name.str(), constraint);
}
