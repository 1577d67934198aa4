//===- progress.h - Progress of long steps on stderr ------------*- C++ -*-===//
//
// One step of work with a known total (bytes written, files verified, passes
// run) reports how far it is:
//
//   ember::progress::Phase phase("writing weights", totalBytes);
//   for (...) { write(chunk); phase.advance(chunk.size()); }
//   // ~Phase: the phase's summary line
//
// On a terminal (the output is a tty) a one-line bar is redrawn in place
// (percentage, done/total in MB/GB or items, rate, ETA), at most ~10 times a
// second, and only once the phase has run EMBER_PROGRESS_MIN_SECONDS (default
// 1 s): fast phases stay silent. When the output is not a terminal, each
// phase prints one line when it ends,
//
//   ember-compile: writing weights: 8.60 GB in 7.9 s (1.09 GB/s)
//
// but only a phase that ran at least that long or, in bytes, moved at least
// 1 GB, so the output of quick runs (tests) is unchanged. setQuiet(true) or
// EMBER_QUIET=1 in the environment silences everything. Phases may nest and
// may run on several threads: the bar shows the newest phase that is due.
//
// No maintained C++ progress-bar library is packaged by Debian 12 (the only
// source of CI's system packages), hence this small one. It depends on libc
// and the C++ standard library only, so both the compiler's tools and the
// runtime (which never links MLIR/LLVM) use it.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PROGRESS_PROGRESS_H
#define EMBER_PROGRESS_PROGRESS_H

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace ember::progress {

enum class Unit { Bytes, Items };

/// Where and how progress is written. The defaults: stderr, a terminal when
/// isatty(2), the thresholds from the environment.
struct OutputOptions {
  int fd = 2;
  bool terminal = false;
  /// A bar appears, and a summary line is printed, only for phases that
  /// ran at least this long (EMBER_PROGRESS_MIN_SECONDS, default 1).
  double minSeconds = 1.0;
  /// When not a terminal, a Bytes phase of at least this total prints its
  /// line however fast it was.
  uint64_t minBytes = 1000ull * 1000 * 1000;
  /// Bars are cut to this many columns (a terminal's width when known).
  int width = 80;
  /// Redraws at most every this many nanoseconds.
  int64_t redrawIntervalNs = 100'000'000;
};

/// One step of work with a known total. Construct it when the step starts;
/// it finishes (prints its summary line, when due) when destroyed.
class Phase {
public:
  Phase(std::string_view name, uint64_t total, Unit unit = Unit::Bytes);
  ~Phase();
  Phase(const Phase &) = delete;
  Phase &operator=(const Phase &) = delete;

  /// Adds `n` to what is done. Thread-safe and cheap (an atomic add; when a
  /// bar is on a terminal, also a clock read, and a redraw at most ~10 times
  /// a second).
  void advance(uint64_t n);

  uint64_t done() const { return done_.load(std::memory_order_relaxed); }
  uint64_t total() const { return total_; }
  Unit unit() const { return unit_; }
  const std::string &name() const { return name_; }
  /// Nanoseconds on the steady clock when the phase started.
  int64_t startNs() const { return startNs_; }

private:
  friend class Display;
  std::string name_;
  uint64_t total_;
  Unit unit_;
  int64_t startNs_;
  /// Where this phase writes: false when quiet at construction.
  bool active_ = false;
  /// A terminal: the bar is drawn (by advance and the display's ticker).
  bool drawing_ = false;
  /// The output settings when the phase started.
  OutputOptions options_;
  std::atomic<uint64_t> done_{0};
  /// Steady-clock time before which advance() does not redraw.
  std::atomic<int64_t> nextDrawNs_{0};
};

/// Process-wide: no progress output at all (also EMBER_QUIET=1).
void setQuiet(bool quiet);
bool isQuiet();

/// The prefix of every line ("ember-compile"); "ember" by default.
void setProgramName(std::string_view name);

/// Erases a bar that is on the terminal, so that a message can be printed
/// on a clean line (the bar comes back at its next redraw). Tools call it
/// before printing errors.
void clearBar();
/// The same from a signal handler (async-signal-safe: an atomic load and a
/// write): the tools' termination hook, so that "interrupted by SIGINT"
/// starts on a clean line.
void clearBarForSignal();

/// For tests: write to `options.fd` instead of stderr, with these settings
/// (the environment is not read while they are set).
void setOutputForTesting(const OutputOptions &options);
/// Back to stderr and the environment.
void resetOutputForTesting();

} // namespace ember::progress

#endif // EMBER_PROGRESS_PROGRESS_H
