//===- progress_format.h - The text of progress bars and lines --*- C++ -*-===//
//
// Pure functions from a phase's figures to the text progress.h prints:
// human-readable quantities (decimal units: 8.60 GB, 1.09 GB/s; items as
// counts), durations (7.9 s, 2 min 05 s, 1 h 02 min), the terminal bar and
// the one-line summary. No clock, no output: unit-tested on their own.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PROGRESS_PROGRESS_FORMAT_H
#define EMBER_PROGRESS_PROGRESS_FORMAT_H

#include "progress/progress.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace ember::progress {

/// "812 B", "1.20 kB", "8.60 GB" (3 significant digits, powers of 1000);
/// items: "42".
std::string formatQuantity(uint64_t amount, Unit unit);
/// "1.09 GB/s"; items: "4.40/s". perSecond < 0 or not finite: "--".
std::string formatRate(double perSecond, Unit unit);
/// "0.3 s", "7.9 s", "2 min 05 s", "1 h 02 min".
std::string formatDuration(double seconds);

/// What a phase looks like at one moment.
struct Snapshot {
  std::string_view program; // "ember-compile"
  std::string_view name;    // "writing weights"
  uint64_t done = 0;
  uint64_t total = 0;
  Unit unit = Unit::Bytes;
  double elapsedSeconds = 0;
};

/// The terminal bar, at most `width` - 1 columns (ASCII only):
/// "ember-compile: writing weights [#####.....]  45% 3.87 GB/8.60 GB
///  1.09 GB/s elapsed 3.5 s ETA 4.3 s". A phase of one item (a step that
/// cannot say how far it is) shows its time only: "ember-run: loading
/// model.plan ... 3.5 s".
std::string formatBar(const Snapshot &s, int width);
/// The summary line without a newline: "ember-compile: writing weights:
/// 8.60 GB in 7.9 s (1.09 GB/s)"; a phase that ended before its total
/// adds "of <total>, incomplete". One item: "...: done in 3.5 s" (or
/// "stopped after 3.5 s").
std::string formatSummary(const Snapshot &s);

} // namespace ember::progress

#endif // EMBER_PROGRESS_PROGRESS_FORMAT_H
