//===- plan_report_test.cpp - the sharding report's figures and forms -----===//
//
// buildPlanReport against figures recomputed from the plan, the choice of
// the report's form (chooseReportFormat) and its errors, and the HTML form:
// escaped names, no script or outside resource, the same per-rank figures as
// the text form. The end-to-end checks (ember-compile, a Chromium
// screenshot) are tests/e2e/sharding_report.
//
//===----------------------------------------------------------------------===//

#include "sharding/PlanReport.h"
#include "sharding/Planner.h"
#include "llvm/ADT/StringRef.h"
#include "gtest/gtest.h"
#include <algorithm>

using namespace ember::sharding;

namespace {

TableSpec makeTable(const std::string &name, int64_t rows, int64_t dim,
                    double poolingFactor,
                    PoolingKind pooling = PoolingKind::Sum) {
  TableSpec table;
  table.name = name;
  table.rows = rows;
  table.dim = dim;
  table.pooling = pooling;
  table.features.push_back({name + "_f", poolingFactor});
  return table;
}

ShardingPlan planOrFail(const std::vector<TableSpec> &tables,
                        const PlannerOptions &options) {
  llvm::Expected<ShardingPlan> plan = planSharding(tables, options);
  if (!plan) {
    ADD_FAILURE() << llvm::toString(plan.takeError());
    return {};
  }
  return *plan;
}

PlannerOptions fourRanks() {
  PlannerOptions options;
  options.topology.worldSize = 4;
  options.topology.ranksPerNode = 2;
  return options;
}

std::vector<TableSpec> someTables() {
  return {makeTable("user", 4'000'000, 128, 20),
          makeTable("item", 1'000'000, 64, 5),
          makeTable("<script>&\"'", 200'000, 32, 2, PoolingKind::Max),
          makeTable("small", 100, 16, 1)};
}

size_t count(llvm::StringRef text, llvm::StringRef needle) {
  return text.count(needle);
}

TEST(PlanReport, FiguresComeFromThePlan) {
  std::vector<TableSpec> tables = someTables();
  ShardingPlan plan = planOrFail(tables, fourRanks());
  PlanReport report = buildPlanReport(plan, tables);
  ASSERT_EQ(report.ranks.size(), 4u);
  ASSERT_EQ(report.tables.size(), tables.size());
  EXPECT_DOUBLE_EQ(report.maxCost, plan.maxRankCost());
  EXPECT_DOUBLE_EQ(report.totalCost, plan.totalCost());
  double sum = 0, max = 0;
  int64_t maxDevice = 0;
  double deviceSum = 0;
  for (const RankLoad &load : plan.ranks) {
    sum += load.cost.total();
    max = std::max(max, load.cost.total());
    maxDevice = std::max(maxDevice, load.device.total());
    deviceSum += static_cast<double>(load.device.total());
  }
  EXPECT_DOUBLE_EQ(report.meanCost, sum / 4);
  EXPECT_DOUBLE_EQ(report.imbalance, max / (sum / 4));
  EXPECT_GE(report.imbalance, 1.0);
  EXPECT_EQ(report.maxDeviceBytes, maxDevice);
  EXPECT_DOUBLE_EQ(report.deviceImbalance, maxDevice / (deviceSum / 4));
  for (size_t r = 0; r < report.ranks.size(); ++r)
    EXPECT_DOUBLE_EQ(
        report.ranks[r].deviceUse,
        static_cast<double>(plan.ranks[r].device.total()) /
            static_cast<double>(plan.topology.usableDeviceMemory()));
  EXPECT_EQ(report.tables[0].idsPerSample, 20);
  EXPECT_EQ(report.tables[2].name, "<script>&\"'");
  EXPECT_EQ(report.pipelineDepth, 2);
  EXPECT_FALSE(report.includeBackward);
}

TEST(PlanReport, ImbalanceOfAnIdlePlanIsOne) {
  // One rank: max = mean.
  PlannerOptions options;
  std::vector<TableSpec> tables = {makeTable("t", 10, 4, 1)};
  PlanReport report = buildPlanReport(planOrFail(tables, options), tables);
  EXPECT_DOUBLE_EQ(report.imbalance, 1.0);
  // No rank at all (an empty plan): no division by zero.
  PlanReport empty = buildPlanReport(ShardingPlan{}, {});
  EXPECT_DOUBLE_EQ(empty.imbalance, 1.0);
  EXPECT_DOUBLE_EQ(empty.deviceImbalance, 1.0);
  EXPECT_NE(formatPlanReportHtml(empty).find("</html>"), std::string::npos);
}

TEST(PlanReport, FormatFollowsTheFileNameOrTheRequest) {
  auto format = [](llvm::StringRef path, llvm::StringRef requested) {
    llvm::Expected<ReportFormat> chosen = chooseReportFormat(path, requested);
    if (!chosen) {
      ADD_FAILURE() << llvm::toString(chosen.takeError());
      return ReportFormat::Text;
    }
    return *chosen;
  };
  EXPECT_EQ(format("report.txt", ""), ReportFormat::Text);
  EXPECT_EQ(format("report", ""), ReportFormat::Text);
  EXPECT_EQ(format("-", ""), ReportFormat::Text);
  EXPECT_EQ(format("report.html", ""), ReportFormat::Html);
  EXPECT_EQ(format("dir.d/Report.HTM", ""), ReportFormat::Html);
  EXPECT_EQ(format("-", "html"), ReportFormat::Html);
  EXPECT_EQ(format("report.out", "html"), ReportFormat::Html);
  EXPECT_EQ(format("report.html", "html"), ReportFormat::Html);
  EXPECT_EQ(format("report.txt", "text"), ReportFormat::Text);
  EXPECT_EQ(format("report.html.txt", ""), ReportFormat::Text);
}

TEST(PlanReport, FormatErrorsSayWhy) {
  auto error = [](llvm::StringRef path, llvm::StringRef requested) {
    llvm::Expected<ReportFormat> chosen = chooseReportFormat(path, requested);
    if (chosen) {
      ADD_FAILURE() << path.str() << " with '" << requested.str()
                    << "' was accepted";
      return std::string();
    }
    return llvm::toString(chosen.takeError());
  };
  std::string message = error("report.html", "text");
  EXPECT_NE(message.find("contradicts the file name 'report.html'"),
            std::string::npos)
      << message;
  message = error("report.txt", "html");
  EXPECT_NE(message.find("'report.txt'"), std::string::npos) << message;
  message = error("report.html", "pdf");
  EXPECT_NE(message.find("unknown report format 'pdf'"), std::string::npos)
      << message;
  message = error("report", "HTML");
  EXPECT_NE(message.find("expected text or html"), std::string::npos)
      << message;
}

TEST(PlanReport, HtmlEscapesNamesAndLoadsNothing) {
  std::vector<TableSpec> tables = someTables();
  PlannerOptions options = fourRanks();
  // A forced kind the max-pooled table does not allow: a note naming it.
  options.globalKind = ShardingKind::RowWise;
  ShardingPlan plan = planOrFail(tables, options);
  ASSERT_FALSE(plan.notes.empty());
  std::string html = renderPlanReport(plan, tables, ReportFormat::Html);
  std::string lower = llvm::StringRef(html).lower();
  EXPECT_EQ(lower.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("\"'"), std::string::npos);
  // Tables, placement, matrix and the note.
  EXPECT_GE(count(html, "&lt;script&gt;&amp;&quot;&#39;"), 4u);
  for (llvm::StringRef outside :
       {"http:", "https:", "src=", "href=", "<link", "<img", "@import", "url(",
        "<iframe", "<object"})
    EXPECT_EQ(lower.find(outside.str()), std::string::npos) << outside.str();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  // The text form keeps the name as it is.
  std::string text = renderPlanReport(plan, tables, ReportFormat::Text);
  EXPECT_NE(text.find("<script>&\"'"), std::string::npos);
}

TEST(PlanReport, HtmlSaysTheTextFormsFigures) {
  std::vector<TableSpec> tables = someTables();
  PlannerOptions options = fourRanks();
  options.includeBackward = true;
  options.optimizer = Optimizer::Adam;
  ShardingPlan plan = planOrFail(tables, options);
  PlanReport report = buildPlanReport(plan, tables);
  std::string html = formatPlanReportHtml(report);
  std::string text = formatPlanReport(report);
  using namespace report_format;
  for (const ReportRank &rank : report.ranks) {
    const RankLoad &load = rank.load;
    // The HTML rank table's row holds the text line's figures in order.
    std::string row =
        "<tr><td class=\"num\">" + std::to_string(rank.rank) + "</td>";
    std::string textLine;
    for (const std::string &cell :
         {micros(load.cost.total()), micros(load.cost.lookup),
          micros(load.cost.inputDist), micros(load.cost.outputDist),
          micros(load.cost.backward), mib(load.device.weights),
          mib(load.device.optimizerState), mib(load.device.inputBuffers),
          mib(load.device.outputBuffers), mib(load.device.total()),
          percent(rank.deviceUse), mib(load.host.total())}) {
      row += "<td class=\"num\">" + cell + "</td>";
      EXPECT_NE(text.find(cell), std::string::npos) << cell;
    }
    EXPECT_NE(html.find(row), std::string::npos) << row;
  }
  EXPECT_GT(report.ranks[0].load.cost.backward, 0);
  EXPECT_GT(report.ranks[0].load.device.optimizerState +
                report.ranks[1].load.device.optimizerState +
                report.ranks[2].load.device.optimizerState +
                report.ranks[3].load.device.optimizerState,
            0);
  EXPECT_NE(html.find("data-legend=\"bwd\""), std::string::npos);
  EXPECT_NE(html.find("<span data-key=\"optimizer\">adam</span>"),
            std::string::npos);
  EXPECT_NE(text.find("optimizer adam"), std::string::npos);
  EXPECT_NE(text.find("forward and backward"), std::string::npos);
  EXPECT_NE(html.find("<span data-key=\"imbalance\">" +
                      ratio(report.imbalance) + "</span>"),
            std::string::npos);
  EXPECT_NE(text.find("cost " + ratio(report.imbalance)), std::string::npos);
}

} // namespace
