// The progress library (runtime/src/progress): its text (quantities, rates,
// durations, the bar, the summary line), when it prints (terminal or not,
// thresholds, quiet), throttled redraws, and advance() from several threads.
// Output goes to a temporary file through setOutputForTesting.
#include "progress/progress.h"
#include "progress/progress_format.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <thread>
#include <unistd.h>

namespace ember::progress {
namespace {

TEST(ProgressFormat, Quantities) {
  EXPECT_EQ(formatQuantity(0, Unit::Bytes), "0 B");
  EXPECT_EQ(formatQuantity(999, Unit::Bytes), "999 B");
  EXPECT_EQ(formatQuantity(1200, Unit::Bytes), "1.20 kB");
  EXPECT_EQ(formatQuantity(45'600'000, Unit::Bytes), "45.6 MB");
  EXPECT_EQ(formatQuantity(8'600'000'000ull, Unit::Bytes), "8.60 GB");
  EXPECT_EQ(formatQuantity(999'600'000ull, Unit::Bytes), "1.00 GB");
  EXPECT_EQ(formatQuantity(123'000'000'000'000ull, Unit::Bytes), "123 TB");
  EXPECT_EQ(formatQuantity(42, Unit::Items), "42");
}

TEST(ProgressFormat, RatesAndDurations) {
  EXPECT_EQ(formatRate(1.09e9, Unit::Bytes), "1.09 GB/s");
  EXPECT_EQ(formatRate(4.4, Unit::Items), "4.40/s");
  EXPECT_EQ(formatRate(25000, Unit::Items), "25000/s");
  EXPECT_EQ(formatRate(-1, Unit::Bytes), "--");
  EXPECT_EQ(formatDuration(0.26), "0.3 s");
  EXPECT_EQ(formatDuration(7.9), "7.9 s");
  EXPECT_EQ(formatDuration(125), "2 min 05 s");
  EXPECT_EQ(formatDuration(3720), "1 h 02 min");
  EXPECT_EQ(formatDuration(-1), "--");
}

TEST(ProgressFormat, SummaryLine) {
  Snapshot s;
  s.program = "ember-compile";
  s.name = "writing weights";
  s.done = s.total = 8'600'000'000ull;
  s.elapsedSeconds = 7.9;
  EXPECT_EQ(formatSummary(s),
            "ember-compile: writing weights: 8.60 GB in 7.9 s (1.09 GB/s)");
  s.done = 4'300'000'000ull;
  EXPECT_EQ(formatSummary(s), "ember-compile: writing weights: 4.30 GB of "
                              "8.60 GB in 7.9 s (544 MB/s), incomplete");
  s.unit = Unit::Items;
  s.name = "running passes";
  s.done = s.total = 14;
  s.elapsedSeconds = 3.5;
  EXPECT_EQ(formatSummary(s),
            "ember-compile: running passes: 14 items in 3.5 s (4.00/s)");
}

TEST(ProgressFormat, SingleStep) {
  Snapshot s;
  s.program = "ember-run";
  s.name = "loading model.plan";
  s.unit = Unit::Items;
  s.total = 1;
  s.elapsedSeconds = 3.5;
  EXPECT_EQ(formatBar(s, 200), "ember-run: loading model.plan ... 3.5 s");
  EXPECT_EQ(formatSummary(s),
            "ember-run: loading model.plan: stopped after 3.5 s");
  s.done = 1;
  EXPECT_EQ(formatSummary(s), "ember-run: loading model.plan: done in 3.5 s");
}

TEST(ProgressFormat, Bar) {
  Snapshot s;
  s.program = "ember-run";
  s.name = "verifying weights";
  s.total = 8'000'000'000ull;
  s.done = 2'000'000'000ull;
  s.elapsedSeconds = 2;
  EXPECT_EQ(formatBar(s, 200),
            "ember-run: verifying weights [#####...............]   25% "
            "2.00 GB/8.00 GB 1.00 GB/s elapsed 2.0 s ETA 6.0 s");
  // Cut to the terminal's width (one column left for the cursor).
  EXPECT_EQ(formatBar(s, 40).size(), 39u);
  // Nothing done yet: no rate, no ETA; a zero total: no percentage.
  s.done = 0;
  s.elapsedSeconds = 0;
  EXPECT_NE(formatBar(s, 200).find("0 B/8.00 GB -- elapsed 0.0 s ETA --"), std::string::npos)
      << formatBar(s, 200);
  s.total = 0;
  EXPECT_NE(formatBar(s, 200).find("  --% 0 B/0 B"), std::string::npos)
      << formatBar(s, 200);
  // More than the total: 100%, never past the bar.
  s.total = 10;
  s.done = 20;
  s.elapsedSeconds = 1;
  EXPECT_NE(formatBar(s, 200).find("[####################]  100%"),
            std::string::npos)
      << formatBar(s, 200);
}

/// Captures what the library writes, in a temporary file.
class ProgressOutput : public ::testing::Test {
protected:
  void SetUp() override {
    file_ = std::tmpfile();
    ASSERT_NE(file_, nullptr);
    setQuiet(false);
    unsetenv("EMBER_QUIET");
    setProgramName("test");
  }
  void TearDown() override {
    resetOutputForTesting();
    setQuiet(false);
    unsetenv("EMBER_QUIET");
    std::fclose(file_);
  }
  void use(bool terminal, double minSeconds, int64_t intervalNs = 100'000'000) {
    OutputOptions o;
    o.fd = fileno(file_);
    o.terminal = terminal;
    o.minSeconds = minSeconds;
    o.minBytes = 1'000'000'000ull;
    o.width = 200;
    o.redrawIntervalNs = intervalNs;
    setOutputForTesting(o);
  }
  std::string written() {
    std::string out;
    off_t size = ::lseek(fileno(file_), 0, SEEK_END);
    out.resize(static_cast<size_t>(size));
    EXPECT_EQ(::pread(fileno(file_), out.data(), out.size(), 0), size);
    return out;
  }
  static size_t count(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos;
         at = text.find(what, at + what.size()))
      ++n;
    return n;
  }
  std::FILE *file_ = nullptr;
};

TEST_F(ProgressOutput, NotATerminalOneLinePerPhase) {
  use(/*terminal=*/false, /*minSeconds=*/0);
  {
    Phase phase("writing weights", 3000, Unit::Bytes);
    phase.advance(1000);
    phase.advance(2000);
  }
  {
    Phase phase("running passes", 2, Unit::Items);
    phase.advance(2);
  }
  std::string out = written();
  EXPECT_TRUE(std::regex_match(
      out, std::regex("test: writing weights: 3.00 kB in [0-9.]+ s "
                      "\\([0-9.]+ [kMGT]?B/s\\)\n"
                      "test: running passes: 2 items in [0-9.]+ s "
                      "\\([0-9.]+/s\\)\n")))
      << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << "no bar when not a tty";
}

TEST_F(ProgressOutput, NotATerminalFastPhasesAreSilentUnlessLarge) {
  use(/*terminal=*/false, /*minSeconds=*/1);
  {
    Phase phase("small", 1000);
    phase.advance(1000);
  }
  EXPECT_EQ(written(), "");
  {
    // At least minBytes: its line however fast (never its bytes: advance
    // only counts).
    Phase phase("large", 2'000'000'000ull);
    phase.advance(2'000'000'000ull);
  }
  EXPECT_TRUE(std::regex_match(
      written(), std::regex("test: large: 2.00 GB in [0-9.]+ s \\(.*\\)\n")))
      << written();
}

TEST_F(ProgressOutput, IncompletePhaseSaysSo) {
  use(/*terminal=*/false, /*minSeconds=*/0);
  {
    Phase phase("verifying weights", 4000);
    phase.advance(1000);
  }
  EXPECT_NE(written().find("1.00 kB of 4.00 kB in "), std::string::npos)
      << written();
  EXPECT_NE(written().find(", incomplete\n"), std::string::npos) << written();
}

TEST_F(ProgressOutput, TerminalFastPhaseIsSilent) {
  use(/*terminal=*/true, /*minSeconds=*/1);
  {
    Phase phase("writing weights", 2'000'000'000ull);
    phase.advance(2'000'000'000ull);
  }
  EXPECT_EQ(written(), "");
}

TEST_F(ProgressOutput, TerminalBarThenSummary) {
  use(/*terminal=*/true, /*minSeconds=*/0, /*intervalNs=*/10'000'000);
  {
    Phase phase("writing weights", 4'000'000);
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      phase.advance(1'000'000);
    }
  }
  std::string out = written();
  // A bar with percentage, amounts, rate and ETA, redrawn in place...
  EXPECT_TRUE(std::regex_search(
      out, std::regex("\rtest: writing weights \\[#+\\.*\\] +[0-9]+% "
                      "[0-9.]+ [kM]?B/4.00 MB [0-9.]+ [kMG]?B/s elapsed [0-9.]+ s ETA "
                      "[0-9.]+ s\x1b\\[K")))
      << out;
  // ...then replaced by the summary line.
  EXPECT_TRUE(std::regex_search(
      out, std::regex("\rtest: writing weights: 4.00 MB in [0-9.]+ s "
                      "\\([0-9.]+ [kMG]?B/s\\)\x1b\\[K\n$")))
      << out;
}

TEST_F(ProgressOutput, RedrawsAreThrottled) {
  // 50 ms between redraws, 0.5 s of advancing as fast as possible: about
  // 10 bars (advance and the ticker share the throttle), not millions. On a
  // loaded machine the phase can last longer than 0.5 s (the thread is
  // descheduled), and the ticker keeps drawing: the bound follows the
  // phase's measured length, one bar per interval plus a few.
  use(/*terminal=*/true, /*minSeconds=*/0, /*intervalNs=*/50'000'000);
  uint64_t calls = 0;
  auto start = std::chrono::steady_clock::now();
  {
    Phase phase("busy", 1ull << 62, Unit::Items);
    auto end = start + std::chrono::milliseconds(500);
    while (std::chrono::steady_clock::now() < end) {
      phase.advance(1);
      ++calls;
    }
  }
  auto elapsedMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  std::string out = written();
  size_t bars = count(out, "\rtest: busy [");
  EXPECT_GE(bars, 3u) << out;
  EXPECT_LE(bars, static_cast<size_t>(elapsedMs / 50 + 4)) << out;
  EXPECT_GT(calls, 1000u);
}

TEST_F(ProgressOutput, AdvanceFromTwoThreads) {
  use(/*terminal=*/true, /*minSeconds=*/0, /*intervalNs=*/1'000'000);
  constexpr uint64_t kPerThread = 1'000'000;
  {
    Phase phase("counting", 2 * kPerThread, Unit::Items);
    auto work = [&] {
      for (uint64_t i = 0; i < kPerThread; ++i)
        phase.advance(1);
    };
    std::thread a(work), b(work);
    a.join();
    b.join();
    EXPECT_EQ(phase.done(), 2 * kPerThread);
  }
  std::string out = written();
  EXPECT_NE(out.find("test: counting: 2000000 items in "), std::string::npos)
      << out;
  // Every bar is whole: each starts with \r and ends with the erase code.
  EXPECT_EQ(count(out, "\r"), count(out, "\x1b[K")) << out;
}

TEST_F(ProgressOutput, NestedPhasesEndInnerFirst) {
  use(/*terminal=*/false, /*minSeconds=*/0);
  {
    Phase outer("compiling", 2, Unit::Items);
    {
      Phase inner("planning", 3, Unit::Items);
      inner.advance(3);
    }
    outer.advance(2);
  }
  std::string out = written();
  size_t inner = out.find("test: planning: 3 items in ");
  size_t outer = out.find("test: compiling: 2 items in ");
  ASSERT_NE(inner, std::string::npos) << out;
  ASSERT_NE(outer, std::string::npos) << out;
  EXPECT_LT(inner, outer);
}

TEST_F(ProgressOutput, ClearBarErasesTheLine) {
  use(/*terminal=*/true, /*minSeconds=*/0);
  {
    Phase phase("loading", 10, Unit::Items);
    phase.advance(1); // due at once: the first advance draws
    std::string before = written();
    ASSERT_NE(before.find("\rtest: loading ["), std::string::npos) << before;
    clearBar();
    std::string after = written();
    EXPECT_EQ(after.substr(before.size(), 4), "\r\x1b[K");
    // Nothing on the line any more: nothing to erase.
    clearBar();
    clearBarForSignal();
    EXPECT_EQ(written(), after);
    phase.advance(9);
  }
}

TEST_F(ProgressOutput, ClearBarForSignalErasesTheLine) {
  use(/*terminal=*/true, /*minSeconds=*/0);
  Phase phase("writing", 10, Unit::Items);
  phase.advance(1);
  std::string before = written();
  ASSERT_NE(before.find("\rtest: writing ["), std::string::npos) << before;
  clearBarForSignal(); // what the tools' termination hook calls
  EXPECT_EQ(written(), before + "\r\x1b[K");
  clearBarForSignal();
  EXPECT_EQ(written(), before + "\r\x1b[K");
  phase.advance(9);
}

TEST_F(ProgressOutput, QuietSilencesEverything) {
  use(/*terminal=*/true, /*minSeconds=*/0);
  setQuiet(true);
  {
    Phase phase("writing weights", 2'000'000'000ull);
    phase.advance(1'000'000'000ull);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    phase.advance(1'000'000'000ull);
  }
  setQuiet(false);
  use(/*terminal=*/false, /*minSeconds=*/0);
  setenv("EMBER_QUIET", "1", 1);
  EXPECT_TRUE(isQuiet());
  {
    Phase phase("writing weights", 2'000'000'000ull);
    phase.advance(2'000'000'000ull);
  }
  EXPECT_EQ(written(), "");
  setenv("EMBER_QUIET", "0", 1);
  EXPECT_FALSE(isQuiet());
}

} // namespace
} // namespace ember::progress
