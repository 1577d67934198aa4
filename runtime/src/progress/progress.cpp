//===- progress.cpp - Progress of long steps on stderr --------------------===//
//
// The display: the phases that are running (newest last), the output
// settings, and on a terminal a ticker thread that redraws the newest due
// phase every redraw interval, so that a bar appears (and its clock runs)
// also while a phase does not advance. The ticker exists only while a
// phase is running on a terminal.
//
//===----------------------------------------------------------------------===//
#include "progress/progress.h"

#include "progress/progress_format.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <sys/ioctl.h>
#include <unistd.h>

namespace ember::progress {

namespace {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void writeAll(int fd, const std::string &text) {
  const char *p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return; // progress is best effort: a closed stderr is not an error
    p += n;
    left -= static_cast<size_t>(n);
  }
}

std::atomic<bool> quietFlag{false};
/// The fd a bar is on, -1 when none: what clearBarForSignal() erases.
std::atomic<int> barOnFd{-1};
static_assert(std::atomic<int>::is_always_lock_free);

/// EMBER_PROGRESS_MIN_SECONDS when it is a number >= 0, else 1.
double minSecondsFromEnvironment() {
  const char *text = std::getenv("EMBER_PROGRESS_MIN_SECONDS");
  if (!text || !*text)
    return 1.0;
  char *end = nullptr;
  double value = std::strtod(text, &end);
  if (*end != '\0' || !(value >= 0))
    return 1.0;
  return value;
}

} // namespace

class Display {
public:
  static Display &get() {
    // Never destroyed: phases may end during static destruction.
    static Display *display = new Display;
    return *display;
  }

  OutputOptions currentOptions() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (testing_)
      return *testing_;
    OutputOptions out;
    out.fd = 2;
    out.terminal = ::isatty(2) == 1;
    out.minSeconds = minSecondsFromEnvironment();
    if (out.terminal) {
      struct winsize ws {};
      if (::ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        out.width = ws.ws_col;
    }
    return out;
  }

  void setTesting(std::optional<OutputOptions> options) {
    std::lock_guard<std::mutex> lock(mutex_);
    testing_ = std::move(options);
  }

  void setProgramName(std::string_view name) {
    std::lock_guard<std::mutex> lock(mutex_);
    program_ = name;
  }

  void start(Phase &phase) {
    std::lock_guard<std::mutex> lock(mutex_);
    active_.push_back(&phase);
    if (!phase.drawing_)
      return;
    // The first bar comes from the first advance() or tick once the phase
    // is due, so that it shows a rate.
    if (!ticker_.joinable()) {
      uint64_t generation = ++generation_;
      ticker_ = std::thread([this, generation] { tick(generation); });
    }
  }

  /// From advance(): draws `phase` when it is the newest due phase.
  void redraw(Phase &phase, int64_t now) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (newestDueLocked(now) == &phase)
      drawLocked(phase, now);
  }

  void finish(Phase &phase) {
    std::thread stopped;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      active_.erase(std::remove(active_.begin(), active_.end(), &phase),
                    active_.end());
      const OutputOptions &o = phase.options_;
      double elapsed = seconds(nowNs() - phase.startNs_);
      bool due = elapsed >= o.minSeconds ||
                 (!o.terminal && phase.unit_ == Unit::Bytes &&
                  phase.total_ >= o.minBytes);
      if (due && !quietFlag.load() && !quietFromEnvironment()) {
        std::string line = formatSummary(snapshot(phase, elapsed));
        if (o.terminal)
          line = "\r" + line + "\x1b[K";
        writeAll(o.fd, line + "\n");
        barShown_ = false;
        barOnFd.store(-1);
      }
      if (active_.empty() && ticker_.joinable()) {
        ++generation_;
        stopped = std::move(ticker_);
      }
    }
    if (stopped.joinable()) {
      wake_.notify_all();
      stopped.join();
    }
  }

  void clearBar() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!barShown_)
      return;
    writeAll(barFd_, "\r\x1b[K");
    barShown_ = false;
    barOnFd.store(-1);
  }

  static bool quietFromEnvironment() {
    const char *text = std::getenv("EMBER_QUIET");
    return text && *text && std::strcmp(text, "0") != 0;
  }

private:
  static double seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

  Snapshot snapshot(const Phase &phase, double elapsed) const {
    Snapshot s;
    s.program = program_;
    s.name = phase.name_;
    s.done = phase.done_.load(std::memory_order_relaxed);
    s.total = phase.total_;
    s.unit = phase.unit_;
    s.elapsedSeconds = elapsed;
    return s;
  }

  /// The newest drawing phase that has run its minimum time.
  Phase *newestDueLocked(int64_t now) const {
    for (auto it = active_.rbegin(); it != active_.rend(); ++it) {
      Phase *p = *it;
      if (p->drawing_ &&
          seconds(now - p->startNs_) >= p->options_.minSeconds)
        return p;
    }
    return nullptr;
  }

  void drawLocked(Phase &phase, int64_t now) {
    if (quietFlag.load())
      return;
    std::string line = formatBar(snapshot(phase, seconds(now - phase.startNs_)),
                                 phase.options_.width);
    writeAll(phase.options_.fd, "\r" + line + "\x1b[K");
    barShown_ = true;
    barFd_ = phase.options_.fd;
    barOnFd.store(barFd_);
  }

  void tick(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (generation_ == generation) {
      int64_t interval = 100'000'000;
      for (Phase *p : active_)
        interval = std::min(interval, p->options_.redrawIntervalNs);
      wake_.wait_for(lock, std::chrono::nanoseconds(interval),
                     [&] { return generation_ != generation; });
      if (generation_ != generation)
        break;
      int64_t now = nowNs();
      Phase *p = newestDueLocked(now);
      if (!p || now < p->nextDrawNs_.load(std::memory_order_relaxed))
        continue;
      p->nextDrawNs_.store(now + p->options_.redrawIntervalNs,
                           std::memory_order_relaxed);
      drawLocked(*p, now);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Phase *> active_;
  std::thread ticker_;
  uint64_t generation_ = 0;
  std::optional<OutputOptions> testing_;
  std::string program_ = "ember";
  bool barShown_ = false;
  int barFd_ = 2;
};

Phase::Phase(std::string_view name, uint64_t total, Unit unit)
    : name_(name), total_(total), unit_(unit), startNs_(nowNs()) {
  if (isQuiet())
    return;
  Display &display = Display::get();
  options_ = display.currentOptions();
  active_ = true;
  drawing_ = options_.terminal;
  nextDrawNs_.store(
      startNs_ + static_cast<int64_t>(options_.minSeconds * 1e9),
      std::memory_order_relaxed);
  display.start(*this);
}

Phase::~Phase() {
  if (active_)
    Display::get().finish(*this);
}

void Phase::advance(uint64_t n) {
  done_.fetch_add(n, std::memory_order_relaxed);
  if (!drawing_)
    return;
  int64_t next = nextDrawNs_.load(std::memory_order_relaxed);
  int64_t now = nowNs();
  if (now < next)
    return;
  // One thread per interval redraws; the others only add.
  if (!nextDrawNs_.compare_exchange_strong(next,
                                           now + options_.redrawIntervalNs,
                                           std::memory_order_relaxed))
    return;
  Display::get().redraw(*this, now);
}

void setQuiet(bool quiet) { quietFlag.store(quiet); }

bool isQuiet() { return quietFlag.load() || Display::quietFromEnvironment(); }

void setProgramName(std::string_view name) {
  Display::get().setProgramName(name);
}

void clearBar() { Display::get().clearBar(); }

void clearBarForSignal() {
  int fd = barOnFd.exchange(-1);
  if (fd >= 0) {
    ssize_t ignored = ::write(fd, "\r\x1b[K", 4);
    (void)ignored;
  }
}

void setOutputForTesting(const OutputOptions &options) {
  Display::get().setTesting(options);
}

void resetOutputForTesting() { Display::get().setTesting(std::nullopt); }

} // namespace ember::progress
