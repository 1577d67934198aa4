//===- PlanReportHtml.cpp - the sharding report as one HTML page ----------===//
//
// formatPlanReportHtml: the figures of a PlanReport as one self-contained
// page (inline CSS, inline SVG bars, no script, no fonts or images from
// elsewhere). Every figure is printed by report_format, as in the text form,
// so both say the same numbers; every name from the model (tables, notes)
// goes through escapeHtml. docs/sharding.md, "Report".
//
//===----------------------------------------------------------------------===//

#include "sharding/PlanReport.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>

using namespace ember::sharding;
using namespace ember::sharding::report_format;

namespace {

/// Text for HTML content and attribute values (quoted with ").
std::string escapeHtml(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// One part of a stacked bar: its name (legend and CSS class), colour and
/// value.
struct BarPart {
  const char *name;
  const char *label;
  const char *colour;
  double value;
};

// The parts' colours (the legend shows them; the test looks for them in a
// screenshot).
constexpr const char *kLookupColour = "#4e79a7";
constexpr const char *kInputDistColour = "#f28e2b";
constexpr const char *kOutputDistColour = "#59a14f";
constexpr const char *kBackwardColour = "#b07aa1";
constexpr const char *kWeightsColour = "#76b7b2";
constexpr const char *kOptimizerColour = "#edc948";
constexpr const char *kInputsColour = "#ff9da7";
constexpr const char *kOutputsColour = "#9c755f";
constexpr const char *kHostColour = "#8c6bb1";
constexpr const char *kTrackColour = "#eeeeee";

// Bar chart geometry (px).
constexpr int kLabelWidth = 70;
constexpr int kBarWidth = 520;
constexpr int kValueWidth = 250;
constexpr int kRowHeight = 22;
constexpr int kBarHeight = 14;
constexpr int kChartWidth = kLabelWidth + kBarWidth + kValueWidth;

std::string px(double value) { return llvm::formatv("{0:F2}", value).str(); }

void writeLegend(llvm::raw_ostream &os, llvm::ArrayRef<BarPart> parts) {
  os << "<p class=\"legend\">";
  for (const BarPart &part : parts)
    os << "<span><svg width=\"12\" height=\"12\" aria-hidden=\"true\">"
       << "<rect data-legend=\"" << part.name
       << "\" width=\"12\" height=\"12\" fill=\"" << part.colour
       << "\"/></svg> " << part.label << "</span>";
  os << "</p>\n";
}

/// A row of a bar chart: `parts` stacked from the left, scaled so that
/// `scale` fills the bar; a grey track behind them when `track`; `value`
/// written after the bar.
void writeBarRow(llvm::raw_ostream &os, int row, llvm::StringRef label,
                 llvm::StringRef kind, int64_t rank,
                 llvm::ArrayRef<BarPart> parts, double scale, bool track,
                 llvm::StringRef value, llvm::StringRef title) {
  double y = row * kRowHeight + (kRowHeight - kBarHeight) / 2.0;
  os << "<g class=\"" << kind << "\" data-rank=\"" << rank << "\">";
  os << "<title>" << title << "</title>";
  os << "<text x=\"" << kLabelWidth - 8 << "\" y=\"" << px(y + kBarHeight - 3)
     << "\" text-anchor=\"end\">" << label << "</text>";
  if (track)
    os << "<rect class=\"track\" x=\"" << kLabelWidth << "\" y=\"" << px(y)
       << "\" width=\"" << kBarWidth << "\" height=\"" << kBarHeight
       << "\" fill=\"" << kTrackColour << "\"/>";
  double x = kLabelWidth;
  for (const BarPart &part : parts) {
    if (part.value <= 0 || scale <= 0)
      continue;
    // A figure past the scale (memory over its limit) ends at the bar's end.
    double width =
        std::min(part.value / scale * kBarWidth, kLabelWidth + kBarWidth - x);
    if (width <= 0)
      continue;
    os << "<rect class=\"bar " << part.name << "\" x=\"" << px(x) << "\" y=\""
       << px(y) << "\" width=\"" << px(width) << "\" height=\"" << kBarHeight
       << "\" fill=\"" << part.colour << "\"/>";
    x += width;
  }
  os << "<text x=\"" << kLabelWidth + kBarWidth + 8 << "\" y=\""
     << px(y + kBarHeight - 3) << "\">" << value << "</text>";
  os << "</g>\n";
}

void openChart(llvm::raw_ostream &os, llvm::StringRef id, int rows,
               llvm::StringRef description) {
  os << "<svg id=\"" << id << "\" class=\"chart\" width=\"" << kChartWidth
     << "\" height=\"" << rows * kRowHeight << "\" viewBox=\"0 0 "
     << kChartWidth << " " << rows * kRowHeight
     << "\" role=\"img\" aria-label=\"" << description << "\">\n";
}

void writeHead(llvm::raw_ostream &os, const PlanReport &report) {
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
        "charset=\"utf-8\">\n"
     << "<meta name=\"generator\" content=\"ember sharding planner\">\n"
     << "<title>Sharding plan: " << report.topology.worldSize
     << " rank(s)</title>\n"
     << "<style>\n"
        "body{font-family:sans-serif;font-size:14px;color:#222;"
        "background:#fff;margin:24px;max-width:1100px}\n"
        "h1{font-size:22px;margin:0 0 8px}\n"
        "h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid "
        "#ccc;padding-bottom:4px}\n"
        "dl{display:grid;grid-template-columns:max-content auto;"
        "gap:3px 16px;margin:0}\n"
        "dt{color:#555}dd{margin:0}\n"
        "table{border-collapse:collapse;font-size:13px}\n"
        "th,td{border:1px solid #ddd;padding:3px 7px;vertical-align:top}\n"
        "th{background:#f3f3f3;text-align:left}\n"
        "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
        "td.name{font-family:monospace}\n"
        "ul.shards{margin:0;padding-left:16px}\n"
        "svg.chart text{font-size:12px;fill:#222}\n"
        ".legend span{margin-right:16px;white-space:nowrap}\n"
        ".legend svg{vertical-align:-1px}\n"
        ".note{color:#555}\n"
        "td.share{text-align:center;min-width:34px}\n"
        "</style>\n</head>\n<body>\n";
}

/// A figure of a <dl>: its term, and its value (marked with `key`, the name
/// the tests read it by) followed by its unit.
void writeItem(llvm::raw_ostream &os, llvm::StringRef term, llvm::StringRef key,
               llvm::StringRef value, llvm::StringRef unit) {
  os << "<dt>" << term << "</dt><dd><span data-key=\"" << key << "\">" << value
     << "</span>" << (unit.empty() ? "" : " ") << unit << "</dd>\n";
}

void writeSummary(llvm::raw_ostream &os, const PlanReport &report) {
  const Topology &topo = report.topology;
  auto item = [&os](llvm::StringRef term, llvm::StringRef key,
                    llvm::StringRef value, llvm::StringRef unit) {
    writeItem(os, term, key, value, unit);
  };
  os << "<h1>Sharding plan</h1>\n<dl id=\"summary\">\n";
  item("Ranks", "world_size", std::to_string(topo.worldSize), "");
  item("Ranks per node", "ranks_per_node", std::to_string(topo.ranksPerNode),
       "");
  item("Batch per rank", "batch", std::to_string(report.batchSizePerRank),
       "samples");
  item("Score (max per-rank cost)", "max_cost", micros(report.maxCost),
       "&#181;s per batch");
  item("Collective step (each part at its busiest rank)", "collective_step",
       micros(report.collectiveStep), "&#181;s per batch");
  item("Sum over ranks", "total_cost", micros(report.totalCost),
       "&#181;s per batch");
  item("Mean per rank", "mean_cost", micros(report.meanCost),
       "&#181;s per batch");
  item("Cost imbalance (max/mean)", "imbalance", ratio(report.imbalance), "");
  item("Device memory imbalance (max/mean)", "device_imbalance",
       ratio(report.deviceImbalance), "");
  item("Device memory for embeddings", "usable_device_gib",
       gib(topo.usableDeviceMemory()), "GiB per rank");
  item("Device memory", "device_gib", gib(topo.deviceMemoryBytes),
       "GiB per rank");
  item("Host memory", "host_gib", gib(topo.hostMemoryBytes), "GiB per rank");
  item("Objective", "objective", escapeHtml(objective(report)), "");
  os << "</dl>\n";
}

void writeTopology(llvm::raw_ostream &os, const PlanReport &report) {
  const Topology &topo = report.topology;
  auto item = [&os](llvm::StringRef term, llvm::StringRef key,
                    llvm::StringRef value, llvm::StringRef unit) {
    writeItem(os, term, key, value, unit);
  };
  os << "<h2>Topology and options</h2>\n<dl id=\"topology\">\n";
  item("Device memory", "topo_device_gb", gb(topo.deviceMemoryBytes), "GB");
  item("Reserved for the dense model", "topo_reserved_percent",
       percent(topo.reservedDeviceFraction),
       "%" + reservationRuleText(topo));
  item("Host memory", "topo_host_gb", gb(topo.hostMemoryBytes), "GB");
  item("Device bandwidth", "topo_device_bw", gbPerSecond(topo.deviceBandwidth),
       "GB/s");
  item("Lookup efficiency", "topo_lookup_percent",
       percent(topo.lookupEfficiency), "% of the device bandwidth");
  item("Intra-node bandwidth", "topo_intra_bw",
       gbPerSecond(topo.intraNodeBandwidth), "GB/s");
  item("Inter-node bandwidth", "topo_inter_bw",
       gbPerSecond(topo.interNodeBandwidth), "GB/s");
  item("Host to device bandwidth", "topo_h2d_bw",
       gbPerSecond(topo.hostToDeviceBandwidth), "GB/s");
  item("Optimizer", "optimizer", optimizerName(report.optimizer), "");
  item("Pipeline depth", "pipeline_depth", std::to_string(report.pipelineDepth),
       "batches in flight");
  os << "</dl>\n";
}

void writeCostChart(llvm::raw_ostream &os, const PlanReport &report) {
  os << "<h2>Cost per rank</h2>\n"
     << "<p class=\"note\">Estimated seconds per batch by the planner's cost "
        "model, in &#181;s; the longest bar is the score. The dashed line is "
        "the mean over ranks.</p>\n";
  std::vector<BarPart> legend = {
      {"lookup", "lookup", kLookupColour, 0},
      {"in_dist", "input distribution", kInputDistColour, 0},
      {"out_dist", "output distribution", kOutputDistColour, 0}};
  if (report.includeBackward)
    legend.push_back({"bwd", "backward", kBackwardColour, 0});
  writeLegend(os, legend);
  int rows = static_cast<int>(report.ranks.size());
  openChart(os, "cost-chart", rows, "estimated cost per rank");
  for (const ReportRank &rank : report.ranks) {
    const CostParts &cost = rank.load.cost;
    std::vector<BarPart> parts = {
        {"lookup", "", kLookupColour, cost.lookup},
        {"in_dist", "", kInputDistColour, cost.inputDist},
        {"out_dist", "", kOutputDistColour, cost.outputDist},
        {"bwd", "", kBackwardColour, cost.backward}};
    std::string title = llvm::formatv(
        "rank {0}: {1} us (lookup {2}, input distribution {3}, output "
        "distribution {4}, backward {5})",
        rank.rank, micros(cost.total()), micros(cost.lookup),
        micros(cost.inputDist), micros(cost.outputDist), micros(cost.backward));
    writeBarRow(os, static_cast<int>(rank.rank),
                "rank " + std::to_string(rank.rank), "cost", rank.rank, parts,
                report.maxCost, /*track=*/false,
                micros(cost.total()) + " &#181;s", title);
  }
  if (report.maxCost > 0 && rows > 0) {
    double x = kLabelWidth + report.meanCost / report.maxCost * kBarWidth;
    os << "<line class=\"mean\" x1=\"" << px(x) << "\" x2=\"" << px(x)
       << "\" y1=\"0\" y2=\"" << rows * kRowHeight
       << "\" stroke=\"#222\" stroke-width=\"1\" "
          "stroke-dasharray=\"4 3\"/>\n";
  }
  os << "</svg>\n";
}

void writeMemoryCharts(llvm::raw_ostream &os, const PlanReport &report) {
  int64_t deviceCap = report.topology.usableDeviceMemory();
  int64_t hostCap = report.topology.hostMemoryBytes;
  os << "<h2>Memory per rank</h2>\n"
     << "<p class=\"note\">Device memory used for embeddings against the "
        "usable device memory of a rank ("
     << mib(deviceCap) << " MiB: " << gib(report.topology.deviceMemoryBytes)
     << " GiB less " << percent(report.topology.reservedDeviceFraction)
     << "% kept for the dense model); the grey track is that limit.</p>\n";
  writeLegend(os, {{"weights", "weights", kWeightsColour, 0},
                   {"optimizer", "optimizer state", kOptimizerColour, 0},
                   {"inputs", "input buffers", kInputsColour, 0},
                   {"outputs", "output buffers", kOutputsColour, 0}});
  int rows = static_cast<int>(report.ranks.size());
  openChart(os, "device-chart", rows, "device memory per rank");
  for (const ReportRank &rank : report.ranks) {
    const StorageParts &device = rank.load.device;
    std::vector<BarPart> parts = {
        {"weights", "", kWeightsColour, static_cast<double>(device.weights)},
        {"optimizer", "", kOptimizerColour,
         static_cast<double>(device.optimizerState)},
        {"inputs", "", kInputsColour, static_cast<double>(device.inputBuffers)},
        {"outputs", "", kOutputsColour,
         static_cast<double>(device.outputBuffers)}};
    std::string title = llvm::formatv(
        "rank {0}: {1} MiB of {2} MiB ({3}%): weights {4}, optimizer {5}, "
        "inputs {6}, outputs {7}",
        rank.rank, mib(device.total()), mib(deviceCap), percent(rank.deviceUse),
        mib(device.weights), mib(device.optimizerState),
        mib(device.inputBuffers), mib(device.outputBuffers));
    writeBarRow(os, static_cast<int>(rank.rank),
                "rank " + std::to_string(rank.rank), "device", rank.rank, parts,
                static_cast<double>(deviceCap), /*track=*/true,
                mib(device.total()) + " MiB (" + percent(rank.deviceUse) + "%)",
                title);
  }
  os << "</svg>\n";

  bool anyHost = llvm::any_of(report.ranks, [](const ReportRank &rank) {
    return rank.load.host.total() > 0;
  });
  if (!anyHost) {
    os << "<p class=\"note\" id=\"host-chart\">No rank keeps embeddings in "
          "host memory (a rank has "
       << mib(hostCap) << " MiB).</p>\n";
    return;
  }
  os << "<p class=\"note\">Host memory (UVM kernels) against a rank's host "
        "memory ("
     << mib(hostCap) << " MiB).</p>\n";
  writeLegend(os, {{"host", "host memory", kHostColour, 0}});
  openChart(os, "host-chart", rows, "host memory per rank");
  for (const ReportRank &rank : report.ranks) {
    int64_t host = rank.load.host.total();
    std::string title = llvm::formatv(
        "rank {0}: {1} MiB of host memory of {2} MiB ({3}%)", rank.rank,
        mib(host), mib(hostCap), percent(rank.hostUse));
    writeBarRow(os, static_cast<int>(rank.rank),
                "rank " + std::to_string(rank.rank), "host", rank.rank,
                {{"host", "", kHostColour, static_cast<double>(host)}},
                static_cast<double>(hostCap), /*track=*/true,
                mib(host) + " MiB (" + percent(rank.hostUse) + "%)", title);
  }
  os << "</svg>\n";
}

void writeTables(llvm::raw_ostream &os, const PlanReport &report) {
  os << "<h2>Tables</h2>\n<table id=\"tables\">\n<tr><th>table</th><th>rows "
        "x dim</th><th>format</th><th>pool</th><th>ids/sample</th>"
        "<th>sharding</th><th>kernel</th><th>ranks</th></tr>\n";
  for (const ReportTable &table : report.tables) {
    os << "<tr><td class=\"name\">" << escapeHtml(table.name)
       << "</td><td class=\"num\">" << table.rows << "x" << table.dim
       << "</td><td>" << tableFormatName(table.format) << "</td><td>"
       << poolingKindName(table.pooling) << "</td><td class=\"num\">"
       << idsPerSample(table.idsPerSample) << "</td><td>"
       << shardingKindName(table.sharding.kind) << "</td><td>"
       << computeKernelName(table.sharding.kernel) << "</td><td>"
       << rankList(table.sharding.ranks()) << "</td></tr>\n";
  }
  os << "</table>\n";
}

/// Percent of the table's elements on each rank (replicas: 100 each).
std::vector<double> sharePerRank(const ReportTable &table, int64_t worldSize) {
  std::vector<double> share(static_cast<size_t>(worldSize), 0.0);
  double elements =
      static_cast<double>(table.rows) * static_cast<double>(table.dim);
  if (table.sharding.kind == ShardingKind::DataParallel) {
    for (int64_t rank : table.sharding.replicaRanks)
      if (rank >= 0 && rank < worldSize)
        share[rank] = 100.0;
    return share;
  }
  for (const Shard &shard : table.sharding.shards)
    if (shard.rank >= 0 && shard.rank < worldSize && elements > 0)
      share[shard.rank] += 100.0 * static_cast<double>(shard.rows) *
                           static_cast<double>(shard.cols) / elements;
  return share;
}

void writePlacement(llvm::raw_ostream &os, const PlanReport &report) {
  os << "<h2>Placement</h2>\n<table id=\"placement\">\n<tr><th>table</th>"
        "<th>sharding</th><th>kernel</th><th>shards (rank: rows x "
        "columns)</th></tr>\n";
  for (const ReportTable &table : report.tables) {
    const TableSharding &sharding = table.sharding;
    os << "<tr><td class=\"name\">" << escapeHtml(table.name) << "</td><td>"
       << shardingKindName(sharding.kind) << "</td><td>"
       << computeKernelName(sharding.kernel) << "</td><td>";
    if (sharding.kind == ShardingKind::DataParallel) {
      os << "a whole replica (" << table.rows << "x" << table.dim << ") on "
         << (sharding.replicaRanks.size() > 8 ? "" : "ranks ")
         << rankList(sharding.replicaRanks);
      if (sharding.replicaRanks.size() > 8) {
        os << ": ";
        for (size_t i = 0; i < sharding.replicaRanks.size(); ++i)
          os << (i ? ", " : "") << sharding.replicaRanks[i];
      }
    } else {
      os << "<ul class=\"shards\">";
      for (const Shard &shard : sharding.shards)
        os << "<li>rank " << shard.rank << ": rows " << shard.rowOffset << ".."
           << shard.rowOffset + shard.rows - 1 << " x columns "
           << shard.colOffset << ".." << shard.colOffset + shard.cols - 1
           << " (" << shard.rows << "x" << shard.cols << ")</li>";
      os << "</ul>";
    }
    os << "</td></tr>\n";
  }
  os << "</table>\n";

  // At a glance: which share of each table every rank holds.
  int64_t worldSize = report.topology.worldSize;
  if (worldSize > 32 || report.tables.empty())
    return;
  os << "<p class=\"note\">Share of each table's rows x columns on each rank "
        "(R: a whole replica).</p>\n<table id=\"placement-matrix\">\n<tr>"
        "<th>table</th>";
  for (int64_t rank = 0; rank < worldSize; ++rank)
    os << "<th>" << rank << "</th>";
  os << "</tr>\n";
  for (const ReportTable &table : report.tables) {
    std::vector<double> share = sharePerRank(table, worldSize);
    bool replica = table.sharding.kind == ShardingKind::DataParallel;
    os << "<tr><td class=\"name\">" << escapeHtml(table.name) << "</td>";
    for (double value : share) {
      if (value <= 0) {
        os << "<td class=\"share\"></td>";
        continue;
      }
      // Light to dark blue with the share.
      int shade = 235 - static_cast<int>(std::min(value, 100.0) * 1.1);
      os << "<td class=\"share\" style=\"background:rgb(" << shade << ","
         << std::min(shade + 10, 245) << ",250)\">"
         << (replica ? std::string("R") : llvm::formatv("{0:F0}%", value).str())
         << "</td>";
    }
    os << "</tr>\n";
  }
  os << "</table>\n";
}

void writeRankTable(llvm::raw_ostream &os, const PlanReport &report) {
  os << "<h2>Per rank</h2>\n<p class=\"note\">Cost in &#181;s per batch, "
        "memory in MiB.</p>\n<table id=\"ranks\">\n<tr><th>rank</th>"
        "<th>cost</th><th>lookup</th><th>in_dist</th><th>out_dist</th>"
        "<th>bwd</th><th>weights</th><th>optimizer</th><th>inputs</th>"
        "<th>outputs</th><th>device</th><th>use%</th><th>host</th></tr>\n";
  for (const ReportRank &rank : report.ranks) {
    const RankLoad &load = rank.load;
    os << "<tr>";
    for (const std::string &cell :
         {std::to_string(rank.rank), micros(load.cost.total()),
          micros(load.cost.lookup), micros(load.cost.inputDist),
          micros(load.cost.outputDist), micros(load.cost.backward),
          mib(load.device.weights), mib(load.device.optimizerState),
          mib(load.device.inputBuffers), mib(load.device.outputBuffers),
          mib(load.device.total()), percent(rank.deviceUse),
          mib(load.host.total())})
      os << "<td class=\"num\">" << cell << "</td>";
    os << "</tr>\n";
  }
  os << "</table>\n";
}

void writeNotes(llvm::raw_ostream &os, const PlanReport &report) {
  if (report.notes.empty())
    return;
  os << "<h2>Notes</h2>\n<ul id=\"notes\">\n";
  for (const std::string &note : report.notes)
    os << "<li>" << escapeHtml(note) << "</li>\n";
  os << "</ul>\n";
}

} // namespace

std::string ember::sharding::formatPlanReportHtml(const PlanReport &report) {
  std::string html;
  llvm::raw_string_ostream os(html);
  writeHead(os, report);
  writeSummary(os, report);
  writeNotes(os, report);
  writeTopology(os, report);
  writeCostChart(os, report);
  writeMemoryCharts(os, report);
  writeRankTable(os, report);
  writeTables(os, report);
  writePlacement(os, report);
  os << "</body>\n</html>\n";
  return html;
}
