//===- PlanReport.h - readable report of a sharding plan --------*- C++ -*-===//

#ifndef EMBER_SHARDING_PLANREPORT_H
#define EMBER_SHARDING_PLANREPORT_H

#include "sharding/ShardingTypes.h"
#include "llvm/ADT/ArrayRef.h"

namespace ember::sharding {

/// A text report of `plan` over `tables` (the tables it was planned for):
/// the sharding of every table, then every rank's cost by part and memory by
/// part against its limits.
std::string formatPlanReport(const ShardingPlan &plan,
                             llvm::ArrayRef<TableSpec> tables);

} // namespace ember::sharding

#endif // EMBER_SHARDING_PLANREPORT_H
