//===- progress_format.cpp - The text of progress bars and lines ----------===//
#include "progress/progress_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ember::progress {

namespace {

/// `value` with 3 significant digits (at least one decimal below 100).
std::string threeDigits(double value) {
  char buf[32];
  if (value < 10)
    std::snprintf(buf, sizeof buf, "%.2f", value);
  else if (value < 100)
    std::snprintf(buf, sizeof buf, "%.1f", value);
  else
    std::snprintf(buf, sizeof buf, "%.0f", value);
  return buf;
}

/// `value` bytes in decimal units: "812 B", "1.20 kB", ..., "3.40 PB".
std::string formatBytes(double value) {
  static const char *const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  if (value < 1000) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f B", value);
    return buf;
  }
  int u = 0;
  while (u + 1 < 6 && value >= 999.5) {
    value /= 1000;
    ++u;
  }
  return threeDigits(value) + " " + kUnits[u];
}

} // namespace

std::string formatQuantity(uint64_t amount, Unit unit) {
  if (unit == Unit::Items)
    return std::to_string(amount);
  return formatBytes(static_cast<double>(amount));
}

std::string formatRate(double perSecond, Unit unit) {
  if (!std::isfinite(perSecond) || perSecond < 0)
    return "--";
  if (unit == Unit::Bytes)
    return formatBytes(perSecond) + "/s";
  if (perSecond < 1000)
    return threeDigits(perSecond) + "/s";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f/s", perSecond);
  return buf;
}

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "--";
  char buf[48];
  if (seconds < 59.95) {
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
    return buf;
  }
  auto whole = static_cast<uint64_t>(std::llround(seconds));
  if (whole < 3600)
    std::snprintf(buf, sizeof buf, "%llu min %02llu s",
                  static_cast<unsigned long long>(whole / 60),
                  static_cast<unsigned long long>(whole % 60));
  else
    std::snprintf(buf, sizeof buf, "%llu h %02llu min",
                  static_cast<unsigned long long>(whole / 3600),
                  static_cast<unsigned long long>(whole / 60 % 60));
  return buf;
}

namespace {
/// Cuts `line` to `width` - 1 columns.
std::string fitWidth(std::string line, int width) {
  if (width > 1 && line.size() > static_cast<size_t>(width - 1))
    line.resize(static_cast<size_t>(width - 1));
  return line;
}

/// One indivisible step (a single item): no amounts, rate or ETA.
bool singleStep(const Snapshot &s) {
  return s.unit == Unit::Items && s.total == 1;
}
} // namespace

std::string formatBar(const Snapshot &s, int width) {
  if (singleStep(s)) {
    std::string line;
    line.append(s.program).append(": ").append(s.name).append(" ... ");
    line.append(formatDuration(s.elapsedSeconds));
    return fitWidth(std::move(line), width);
  }
  double rate = s.elapsedSeconds > 0
                    ? static_cast<double>(s.done) / s.elapsedSeconds
                    : -1;
  std::string pct = "  --%";
  int filled = 0;
  constexpr int kBarWidth = 20;
  if (s.total > 0) {
    double fraction =
        std::min(1.0, static_cast<double>(s.done) / static_cast<double>(s.total));
    char buf[16];
    std::snprintf(buf, sizeof buf, "%4d%%", static_cast<int>(fraction * 100));
    pct = buf;
    filled = static_cast<int>(fraction * kBarWidth);
  }
  std::string eta = "--";
  if (s.done >= s.total)
    eta = formatDuration(0);
  else if (rate > 0)
    eta = formatDuration(static_cast<double>(s.total - s.done) / rate);
  std::string line;
  line.reserve(160);
  line.append(s.program).append(": ").append(s.name).append(" [");
  line.append(static_cast<size_t>(filled), '#');
  line.append(static_cast<size_t>(kBarWidth - filled), '.');
  line.append("] ").append(pct).append(" ");
  line.append(formatQuantity(s.done, s.unit))
      .append("/")
      .append(formatQuantity(s.total, s.unit));
  line.append(" ").append(formatRate(rate, s.unit));
  line.append(" elapsed ").append(formatDuration(s.elapsedSeconds));
  line.append(" ETA ").append(eta);
  return fitWidth(std::move(line), width);
}

std::string formatSummary(const Snapshot &s) {
  std::string line;
  line.append(s.program).append(": ").append(s.name).append(": ");
  if (singleStep(s))
    return line
        .append(s.done >= 1 ? "done in " : "stopped after ")
        .append(formatDuration(s.elapsedSeconds));
  line.append(formatQuantity(s.done, s.unit));
  if (s.unit == Unit::Items)
    line.append(s.done == 1 ? " item" : " items");
  if (s.done < s.total)
    line.append(" of ").append(formatQuantity(s.total, s.unit));
  line.append(" in ").append(formatDuration(s.elapsedSeconds));
  if (s.elapsedSeconds > 0)
    line.append(" (")
        .append(formatRate(static_cast<double>(s.done) / s.elapsedSeconds,
                           s.unit))
        .append(")");
  if (s.done < s.total)
    line.append(", incomplete");
  return line;
}

} // namespace ember::progress
