//===- PlanReport.h - readable report of a sharding plan --------*- C++ -*-===//
//
// The report of a sharding plan: its figures (PlanReport, computed once from
// the plan) and two forms of them, text (formatPlanReport) and a
// self-contained HTML page (formatPlanReportHtml, PlanReportHtml.cpp). Both
// print every figure with the same formatting functions below, so they say
// the same numbers. docs/sharding.md, "Report".
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_SHARDING_PLANREPORT_H
#define EMBER_SHARDING_PLANREPORT_H

#include "sharding/ShardingTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace ember::sharding {

/// One table of the report: what it is and how it is placed.
struct ReportTable {
  std::string name;
  int64_t rows = 0;
  int64_t dim = 0;
  TableFormat format = TableFormat::F32;
  PoolingKind pooling = PoolingKind::Sum;
  /// Ids per sample (sum of the features' pooling factors).
  double idsPerSample = 0;
  /// The planner's decision (shards, replica ranks, kind, kernel).
  TableSharding sharding;
};

/// One rank of the report.
struct ReportRank {
  int64_t rank = 0;
  RankLoad load;
  /// Device bytes used / usable device bytes (0 when there are none).
  double deviceUse = 0;
  /// Host bytes used / host memory (0 when there is none).
  double hostUse = 0;
};

/// Every figure the report shows, from the plan and its tables.
struct PlanReport {
  Topology topology;
  int64_t batchSizePerRank = 0;
  Optimizer optimizer = Optimizer::None;
  int64_t pipelineDepth = 0;
  bool includeBackward = false;
  bool leanTraffic = false;
  SearchMode search = SearchMode::Local;
  /// The score (largest per-rank cost), the sum and the mean over ranks, in
  /// seconds per batch; imbalance = max / mean (1 when balanced, also when
  /// every cost is 0).
  double maxCost = 0;
  /// Each cost part at its busiest rank, summed
  /// (ShardingPlan::collectiveStepCost).
  double collectiveStep = 0;
  double totalCost = 0;
  double meanCost = 0;
  double imbalance = 0;
  /// The same for device memory bytes.
  int64_t maxDeviceBytes = 0;
  double meanDeviceBytes = 0;
  double deviceImbalance = 0;
  std::vector<ReportTable> tables;
  std::vector<ReportRank> ranks;
  std::vector<std::string> notes;
};

/// The figures of `plan` over `tables` (the tables it was planned for, in
/// the plan's order).
PlanReport buildPlanReport(const ShardingPlan &plan,
                           llvm::ArrayRef<TableSpec> tables);

/// The text report: a header (ranks, score, imbalance, memory, objective,
/// topology), a line per table, a line per rank (cost by part, memory by
/// part against its limits), then the notes.
std::string formatPlanReport(const PlanReport &report);
std::string formatPlanReport(const ShardingPlan &plan,
                             llvm::ArrayRef<TableSpec> tables);

/// The HTML report (PlanReportHtml.cpp): one self-contained page, inline CSS
/// and SVG, no script, nothing loaded from elsewhere; every name from the
/// model escaped.
std::string formatPlanReportHtml(const PlanReport &report);

/// The report's two forms.
enum class ReportFormat { Text, Html };

/// The form of the report written to `path` (docs/sharding.md, "Report"):
/// `requested` ("text" or "html") when given, else HTML for a file name
/// ending in .html or .htm (any case) and text otherwise. An error when
/// `requested` is neither, or when it contradicts the file name (text to an
/// .html/.htm file, html to a .txt file).
llvm::Expected<ReportFormat> chooseReportFormat(llvm::StringRef path,
                                                llvm::StringRef requested);

/// The report of `plan` in `format`.
std::string renderPlanReport(const ShardingPlan &plan,
                             llvm::ArrayRef<TableSpec> tables,
                             ReportFormat format);

/// How both forms print figures (one place, so they agree).
namespace report_format {
std::string tableFormatName(TableFormat format);
/// Microseconds with 2 decimals ("12.34").
std::string micros(double seconds);
/// MiB with 1 decimal.
std::string mib(int64_t bytes);
/// GiB with 1 decimal.
std::string gib(int64_t bytes);
/// A percentage of `fraction` with 1 decimal ("12.5").
std::string percent(double fraction);
/// A ratio with 2 decimals ("1.07").
std::string ratio(double value);
/// Ids per sample with 1 decimal.
std::string idsPerSample(double ids);
/// "[0, 1, 2]", or "12 ranks (0..11)" past 8 ranks.
std::string rankList(const std::vector<int64_t> &ranks);
/// Bytes per second as GB/s (10^9) without decimals past 10 ("3350").
std::string gbPerSecond(double bytesPerSecond);
/// Bytes as GB (10^9) with 1 decimal.
std::string gb(int64_t bytes);
/// What the planner minimised ("the largest per-rank cost, then the sum
/// over ranks; forward only").
std::string objective(const PlanReport &report);
/// How the reserved fraction was chosen, after "N% reserved": nothing for the
/// topology's own, TorchRec's rule when memory-reservation=torchrec set it.
std::string reservationRuleText(const Topology &topology);
} // namespace report_format

} // namespace ember::sharding

#endif // EMBER_SHARDING_PLANREPORT_H
