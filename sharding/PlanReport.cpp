//===- PlanReport.cpp - readable report of a sharding plan ----------------===//
//
// The report's figures (buildPlanReport), how they are printed
// (report_format), the text form and the choice between text and HTML.
//
//===----------------------------------------------------------------------===//

#include "sharding/PlanReport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>

using namespace ember::sharding;

//===----------------------------------------------------------------------===//
// Figures
//===----------------------------------------------------------------------===//

PlanReport ember::sharding::buildPlanReport(const ShardingPlan &plan,
                                            llvm::ArrayRef<TableSpec> tables) {
  PlanReport report;
  report.topology = plan.topology;
  report.batchSizePerRank = plan.batchSizePerRank;
  report.optimizer = plan.optimizer;
  report.pipelineDepth = plan.pipelineDepth;
  report.includeBackward = plan.includeBackward;
  report.leanTraffic = plan.leanTraffic;
  report.search = plan.search;
  report.notes = plan.notes;

  for (size_t t = 0; t < plan.tables.size() && t < tables.size(); ++t) {
    const TableSpec &spec = tables[t];
    ReportTable table;
    table.name = spec.name;
    table.rows = spec.rows;
    table.dim = spec.dim;
    table.format = spec.format;
    table.pooling = spec.pooling;
    for (const FeatureSpec &feature : spec.features)
      table.idsPerSample += feature.poolingFactor;
    table.sharding = plan.tables[t];
    report.tables.push_back(std::move(table));
  }

  int64_t deviceCap = plan.topology.usableDeviceMemory();
  int64_t hostCap = plan.topology.hostMemoryBytes;
  double deviceSum = 0;
  for (size_t r = 0; r < plan.ranks.size(); ++r) {
    ReportRank rank;
    rank.rank = static_cast<int64_t>(r);
    rank.load = plan.ranks[r];
    int64_t device = rank.load.device.total();
    int64_t host = rank.load.host.total();
    rank.deviceUse = deviceCap > 0 ? static_cast<double>(device) /
                                         static_cast<double>(deviceCap)
                                   : 0;
    rank.hostUse =
        hostCap > 0 ? static_cast<double>(host) / static_cast<double>(hostCap)
                    : 0;
    report.maxCost = std::max(report.maxCost, rank.load.cost.total());
    report.totalCost += rank.load.cost.total();
    report.maxDeviceBytes = std::max(report.maxDeviceBytes, device);
    deviceSum += static_cast<double>(device);
    report.ranks.push_back(rank);
  }
  report.collectiveStep = plan.collectiveStepCost();
  if (!report.ranks.empty()) {
    double n = static_cast<double>(report.ranks.size());
    report.meanCost = report.totalCost / n;
    report.meanDeviceBytes = deviceSum / n;
  }
  report.imbalance =
      report.meanCost > 0 ? report.maxCost / report.meanCost : 1.0;
  report.deviceImbalance =
      report.meanDeviceBytes > 0
          ? static_cast<double>(report.maxDeviceBytes) / report.meanDeviceBytes
          : 1.0;
  return report;
}

//===----------------------------------------------------------------------===//
// Printing figures
//===----------------------------------------------------------------------===//

namespace rf = ember::sharding::report_format;

std::string rf::tableFormatName(TableFormat format) {
  switch (format) {
  case TableFormat::F32:
    return "f32";
  case TableFormat::F16:
    return "f16";
  case TableFormat::BF16:
    return "bf16";
  case TableFormat::Int8RowWise:
    return "int8_rowwise";
  case TableFormat::Int4RowWise:
    return "int4_rowwise";
  }
  return "?";
}

std::string rf::micros(double seconds) {
  return llvm::formatv("{0:F2}", seconds * 1e6).str();
}

std::string rf::mib(int64_t bytes) {
  return llvm::formatv("{0:F1}", static_cast<double>(bytes) / (1024.0 * 1024.0))
      .str();
}

std::string rf::gib(int64_t bytes) {
  return llvm::formatv("{0:F1}",
                       static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0))
      .str();
}

std::string rf::percent(double fraction) {
  return llvm::formatv("{0:F1}", 100.0 * fraction).str();
}

std::string rf::ratio(double value) {
  return llvm::formatv("{0:F2}", value).str();
}

std::string rf::idsPerSample(double ids) {
  return llvm::formatv("{0:F1}", ids).str();
}

std::string rf::rankList(const std::vector<int64_t> &ranks) {
  if (ranks.size() > 8)
    return llvm::formatv("{0} ranks ({1}..{2})", ranks.size(), ranks.front(),
                         ranks.back())
        .str();
  return "[" +
         llvm::join(
             llvm::map_range(ranks,
                             [](int64_t rank) { return std::to_string(rank); }),
             ", ") +
         "]";
}

std::string rf::gbPerSecond(double bytesPerSecond) {
  double gbs = bytesPerSecond / 1e9;
  return gbs >= 10 ? llvm::formatv("{0:F0}", gbs).str()
                   : llvm::formatv("{0:F1}", gbs).str();
}

std::string rf::gb(int64_t bytes) {
  return llvm::formatv("{0:F1}", static_cast<double>(bytes) / 1e9).str();
}

std::string rf::reservationRuleText(const Topology &topology) {
  return topology.reservationRule == "torchrec"
             ? " by TorchRec's rule: 15% and 20 copies of the input ids"
             : "";
}

std::string rf::objective(const PlanReport &report) {
  std::string text = !report.includeBackward ? "inference: "
                     : report.leanTraffic
                         ? "training-lean (within the inference plan's "
                           "bytes): "
                         : "training: ";
  text += "the largest per-rank cost, then the sum over ranks (";
  text += report.includeBackward ? "forward and backward" : "forward only";
  text += report.search == SearchMode::Greedy ? "; one greedy pass)"
                                              : "; greedy seeds and local "
                                                "search)";
  return text;
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

std::string ember::sharding::formatPlanReport(const PlanReport &report) {
  using namespace report_format;
  std::string text;
  llvm::raw_string_ostream os(text);
  const Topology &topo = report.topology;
  os << llvm::formatv("Sharding plan: {0} rank(s), {1} per node, batch {2} "
                      "per rank\n",
                      topo.worldSize, topo.ranksPerNode,
                      report.batchSizePerRank);
  os << llvm::formatv("Score (max per-rank cost): {0} us per batch; "
                      "collective step {1} us; sum over ranks {2} us\n",
                      micros(report.maxCost), micros(report.collectiveStep),
                      micros(report.totalCost));
  os << llvm::formatv("Imbalance (max/mean): cost {0} (mean {1} us), device "
                      "memory {2}\n",
                      ratio(report.imbalance), micros(report.meanCost),
                      ratio(report.deviceImbalance));
  os << llvm::formatv("Memory per rank: {0} GiB of device memory for "
                      "embeddings (of {1} GiB{3}), {2} GiB of host memory\n",
                      gib(topo.usableDeviceMemory()),
                      gib(topo.deviceMemoryBytes), gib(topo.hostMemoryBytes),
                      topo.embeddingMemoryCapBytes > 0
                          ? "; capped at " +
                                gib(topo.embeddingMemoryCapBytes) + " GiB"
                          : std::string());
  os << "Objective: " << objective(report) << "\n";
  os << llvm::formatv(
      "Topology: device {0} GB ({1}% reserved{10}), host {2} GB, device "
      "bandwidth {3} GB/s ({4}% for lookups), intra-node {5} GB/s, "
      "inter-node {6} GB/s, host to device {7} GB/s; optimizer {8}, "
      "pipeline depth {9}\n\n",
      gb(topo.deviceMemoryBytes), percent(topo.reservedDeviceFraction),
      gb(topo.hostMemoryBytes), gbPerSecond(topo.deviceBandwidth),
      percent(topo.lookupEfficiency), gbPerSecond(topo.intraNodeBandwidth),
      gbPerSecond(topo.interNodeBandwidth),
      gbPerSecond(topo.hostToDeviceBandwidth), optimizerName(report.optimizer),
      report.pipelineDepth, reservationRuleText(topo));

  os << "Tables:\n";
  os << llvm::formatv("  {0,-24} {1,14} {2,-12} {3,-5} {4,-8} {5,-15} {6,-18} "
                      "{7}\n",
                      "table", "rows x dim", "format", "pool", "ids/sample",
                      "sharding", "kernel", "ranks");
  for (const ReportTable &table : report.tables) {
    os << llvm::formatv(
        "  {0,-24} {1,14} {2,-12} {3,-5} {4,-8} {5,-15} {6,-18} {7}\n",
        table.name,
        std::to_string(table.rows) + "x" + std::to_string(table.dim),
        tableFormatName(table.format), poolingKindName(table.pooling),
        idsPerSample(table.idsPerSample), shardingKindName(table.sharding.kind),
        computeKernelName(table.sharding.kernel),
        rankList(table.sharding.ranks()));
  }

  os << "\nPer rank (cost in us per batch, memory in MiB):\n";
  os << llvm::formatv("  {0,4} {1,9} {2,9} {3,9} {4,9} {5,9} | {6,10} {7,10} "
                      "{8,9} {9,9} {10,10} {11,6} | {12,10}\n",
                      "rank", "cost", "lookup", "in_dist", "out_dist", "bwd",
                      "weights", "optimizer", "inputs", "outputs", "device",
                      "use%", "host");
  for (const ReportRank &rank : report.ranks) {
    const RankLoad &load = rank.load;
    os << llvm::formatv(
        "  {0,4} {1,9} {2,9} {3,9} {4,9} {5,9} | {6,10} "
        "{7,10} {8,9} {9,9} {10,10} {11,6} | {12,10}\n",
        rank.rank, micros(load.cost.total()), micros(load.cost.lookup),
        micros(load.cost.inputDist), micros(load.cost.outputDist),
        micros(load.cost.backward), mib(load.device.weights),
        mib(load.device.optimizerState), mib(load.device.inputBuffers),
        mib(load.device.outputBuffers), mib(load.device.total()),
        percent(rank.deviceUse), mib(load.host.total()));
  }
  if (!report.notes.empty()) {
    os << "\nNotes:\n";
    for (const std::string &note : report.notes)
      os << "  " << note << "\n";
  }
  return text;
}

std::string
ember::sharding::formatPlanReport(const ShardingPlan &plan,
                                  llvm::ArrayRef<TableSpec> tables) {
  return formatPlanReport(buildPlanReport(plan, tables));
}

//===----------------------------------------------------------------------===//
// Which form
//===----------------------------------------------------------------------===//

llvm::Expected<ReportFormat>
ember::sharding::chooseReportFormat(llvm::StringRef path,
                                    llvm::StringRef requested) {
  std::string extension = llvm::sys::path::extension(path).lower();
  std::optional<ReportFormat> byName;
  if (path != "-") {
    if (extension == ".html" || extension == ".htm")
      byName = ReportFormat::Html;
    else if (extension == ".txt")
      byName = ReportFormat::Text;
  }
  if (requested.empty())
    return byName.value_or(ReportFormat::Text);
  std::optional<ReportFormat> asked;
  if (requested == "text")
    asked = ReportFormat::Text;
  else if (requested == "html")
    asked = ReportFormat::Html;
  else
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown report format '" + requested +
                                       "' (expected text or html)");
  if (byName && *byName != *asked)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the report format " + requested + " contradicts the file name '" +
            path + "' (a " + extension + " file gets the " +
            (*byName == ReportFormat::Html ? "html" : "text") +
            " report): drop the format or rename the file");
  return *asked;
}

std::string ember::sharding::renderPlanReport(const ShardingPlan &plan,
                                              llvm::ArrayRef<TableSpec> tables,
                                              ReportFormat format) {
  PlanReport report = buildPlanReport(plan, tables);
  return format == ReportFormat::Html ? formatPlanReportHtml(report)
                                      : formatPlanReport(report);
}
