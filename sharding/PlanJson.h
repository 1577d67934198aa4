//===- PlanJson.h - JSON in and out of the sharding planner -----*- C++ -*-===//
//
// The planner's files: the topology (--topology), table statistics
// (--stats), and plans in the shape of TorchRec's ParameterSharding (import
// with --plan, export). Also the textual per-table overrides of the command
// line and the pass. Formats: docs/sharding.md.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_SHARDING_PLANJSON_H
#define EMBER_SHARDING_PLANJSON_H

#include "sharding/ShardingTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace ember::sharding {

/// Reads a topology JSON object over `defaults` (fields not given keep their
/// default). Unknown fields and wrong types are errors.
llvm::Expected<Topology> parseTopologyJson(llvm::StringRef text,
                                           const Topology &defaults);

/// Applies a statistics JSON object to `tables`: pooling factors per table
/// ("tables": {name: {"pooling_factor": x}}) and per feature ("features":
/// {name: {"pooling_factor": x}}; a feature's own entry wins). Names the
/// tables do not have are errors.
llvm::Error applyStatsJson(llvm::StringRef text,
                           std::vector<TableSpec> &tables);

/// Reads a plan: {table name: ParameterSharding}. `ranksPerNode` checks the
/// placement strings' devices. Every problem is an error naming the table.
llvm::Expected<std::map<std::string, TableSharding>>
parsePlanJson(llvm::StringRef text);

/// Writes `plan` as TorchRec's ShardingPlan (pretty-printed): {module path:
/// {table name: ParameterSharding}} for the tables whose spec in `tables`
/// names a module, {table name: ParameterSharding} for the others.
std::string planToJson(const ShardingPlan &plan,
                       const std::vector<TableSpec> &tables = {});

/// TorchRec's placement string of a shard on `rank`: "rank:<rank>/cuda:<local
/// rank>".
std::string placementString(int64_t rank, int64_t ranksPerNode);

/// The sharding named on the command line: "auto" (nullopt) or a kind.
llvm::Expected<std::optional<ShardingKind>>
parseShardingChoice(llvm::StringRef text);

/// One per-table override, "NAME=KIND[:KERNEL][@R1/R2/...]" (KIND may be
/// "auto"; "@..." pins ranks), for example "t_user=row_wise",
/// "t_item=table_wise@3", "t_ads=auto:fused_uvm_caching".
llvm::Expected<std::pair<std::string, TableConstraint>>
parseTableOverride(llvm::StringRef text);

} // namespace ember::sharding

#endif // EMBER_SHARDING_PLANJSON_H
