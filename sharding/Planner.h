//===- Planner.h - the sharding planner's search ----------------*- C++ -*-===//
//
// Chooses a sharding for every table: enumerates the shardings each table
// allows (or the user forced, pinned or imported), then searches placements
// that minimise the largest per-rank cost under the per-rank memory limits.
// docs/sharding.md describes the search.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_SHARDING_PLANNER_H
#define EMBER_SHARDING_PLANNER_H

#include "sharding/ShardingTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace ember::sharding {

/// Plans every table of `tables` (names unique, at least one feature each).
/// Fails with one error naming every problem: an invalid table or option, a
/// constraint or imported sharding that does not fit its table, or tables
/// that fit on no rank (with the shortfall of each). On success the plan has
/// exactly one sharding per table, in input order.
llvm::Expected<ShardingPlan> planSharding(llvm::ArrayRef<TableSpec> tables,
                                          const PlannerOptions &options);

/// Whether `table` may be sharded as `kind`; `why` gets the reason when not.
bool isKindAllowed(const TableSpec &table, ShardingKind kind,
                   std::string *why = nullptr);

/// Checks that `sharding` tiles `table` the way its kind says and that its
/// ranks exist in `topology` (used for imported plans; every plan the
/// planner returns passes it).
llvm::Error verifySharding(const TableSpec &table,
                           const TableSharding &sharding,
                           const Topology &topology);

/// Recomputes the per-rank loads of `plan` (its shardings) from the cost and
/// storage models.
std::vector<RankLoad> computeRankLoads(llvm::ArrayRef<TableSpec> tables,
                                       llvm::ArrayRef<TableSharding> shardings,
                                       const PlannerOptions &options);

} // namespace ember::sharding

#endif // EMBER_SHARDING_PLANNER_H
