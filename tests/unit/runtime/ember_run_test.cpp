//===- ember_run_test.cpp - ember-run's options and latency statistics ----===//
//
// The command line of ember-run (the multi-rank flags --nproc, --timeout,
// --split-batch and --rendezvous among it) and its statistics; the binary
// itself is exercised end to end by tests/e2e/ember_run_test.sh.
//
//===----------------------------------------------------------------------===//
#include "latency.h"
#include "options.h"
#include "support/expect_status.h"

#include <gtest/gtest.h>

using namespace ember;
using namespace ember::tools;

namespace {

Result<RunOptions> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "ember-run");
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  return parseRunOptions(static_cast<int>(argv.size()), argv.data());
}

TEST(EmberRunOptions, ParsesEveryFlag) {
  auto o =
      parse({"m.plan", "--input", "dense=d.npy", "--input=sparse.values=v.npy",
             "--inputs", "a.npz", "--output-dir=out", "--repeat", "10",
             "--warmup", "2", "--threads", "3", "--bounds-check", "warning",
             "--report-json", "r.json"});
  ASSERT_TRUE(o.isOk()) << o.status().toString();
  EXPECT_EQ(o->planPath, "m.plan");
  ASSERT_EQ(o->inputFiles.size(), 2u);
  EXPECT_EQ(o->inputFiles[0],
            std::make_pair(std::string("dense"), std::string("d.npy")));
  EXPECT_EQ(o->inputFiles[1],
            std::make_pair(std::string("sparse.values"), std::string("v.npy")));
  EXPECT_EQ(o->npzFiles, std::vector<std::string>{"a.npz"});
  EXPECT_EQ(o->outputDir, "out");
  EXPECT_EQ(o->repeat, 10);
  EXPECT_EQ(o->warmup, 2);
  EXPECT_EQ(o->threads, 3);
  EXPECT_EQ(o->boundsCheck, BoundsCheckMode::kWarning);
  EXPECT_EQ(o->reportJson, "r.json");
  EXPECT_FALSE(o->quiet);
  EXPECT_TRUE(parse({"--list-kernels"}).isOk());
  EXPECT_TRUE(parse({"m.plan", "--quiet"})->quiet);
  EXPECT_TRUE(parse({"-q", "m.plan"})->quiet);
}

TEST(EmberRunOptions, UsageErrors) {
  EXPECT_ERROR(parse({}).status(), StatusCode::kInvalidArgument,
               "no plan given");
  EXPECT_ERROR(parse({"a.plan", "b.plan"}).status(),
               StatusCode::kInvalidArgument, "more than one plan");
  EXPECT_ERROR(parse({"a.plan", "--repeat", "0"}).status(),
               StatusCode::kInvalidArgument,
               "--repeat needs an integer >= 1, not '0'");
  EXPECT_ERROR(parse({"a.plan", "--warmup", "x"}).status(),
               StatusCode::kInvalidArgument, "--warmup needs an integer");
  EXPECT_ERROR(parse({"a.plan", "--repeat"}).status(),
               StatusCode::kInvalidArgument, "--repeat needs a value");
  EXPECT_ERROR(parse({"a.plan", "--input", "dense"}).status(),
               StatusCode::kInvalidArgument, "--input needs NAME=FILE.npy");
  EXPECT_ERROR(parse({"a.plan", "--input", "=x.npy"}).status(),
               StatusCode::kInvalidArgument, "--input needs NAME=FILE.npy");
  EXPECT_ERROR(parse({"a.plan", "--bounds-check", "loose"}).status(),
               StatusCode::kInvalidArgument, "fatal, warning or ignore");
  EXPECT_ERROR(parse({"a.plan", "--fast"}).status(),
               StatusCode::kInvalidArgument, "unknown option '--fast'");
  EXPECT_ERROR(parse({"a.plan", "--quiet=yes"}).status(),
               StatusCode::kInvalidArgument, "--quiet takes no value");
}

TEST(EmberRunOptions, WeightMemory) {
  EXPECT_EQ(parse({"m.plan"})->weightMemory, "mmap");
  for (const char *mode : {"mmap", "huge_pages", "auto"}) {
    EXPECT_EQ(parse({"m.plan", "--weight-memory", mode})->weightMemory, mode);
    EXPECT_EQ(parse({"m.plan", std::string("--weight-memory=") + mode})
                  ->weightMemory,
              mode);
  }
  EXPECT_ERROR(parse({"m.plan", "--weight-memory", "hugepages"}).status(),
               StatusCode::kInvalidArgument,
               "--weight-memory must be mmap, huge_pages or auto, not "
               "'hugepages'");
  EXPECT_ERROR(parse({"m.plan", "--weight-memory"}).status(),
               StatusCode::kInvalidArgument, "--weight-memory needs a value");
}

TEST(EmberRunOptions, QuantizedSums) {
  EXPECT_EQ(parse({"m.plan"})->quantizedSums, "auto");
  for (const char *order : {"fast", "fbgemm", "auto"}) {
    EXPECT_EQ(parse({"m.plan", "--quantized-sums", order})->quantizedSums,
              order);
    EXPECT_EQ(parse({"m.plan", std::string("--quantized-sums=") + order})
                  ->quantizedSums,
              order);
  }
  EXPECT_ERROR(parse({"m.plan", "--quantized-sums", "exact"}).status(),
               StatusCode::kInvalidArgument,
               "--quantized-sums must be fast, fbgemm or auto, not 'exact'");
  EXPECT_ERROR(parse({"m.plan", "--quantized-sums"}).status(),
               StatusCode::kInvalidArgument, "--quantized-sums needs a value");
}

TEST(EmberRunMultiRankOptions, Flags) {
  auto o = parse({"m.plan", "--nproc", "4", "--timeout", "2.5", "--split-batch",
                  "--rendezvous", "file:/tmp/s"});
  ASSERT_TRUE(o.isOk()) << o.status().toString();
  EXPECT_EQ(o->nproc, 4);
  EXPECT_EQ(o->timeoutSeconds, 2.5);
  EXPECT_TRUE(o->timeoutGiven);
  EXPECT_TRUE(o->splitBatch);
  EXPECT_EQ(o->rendezvous, "file:/tmp/s");
  EXPECT_ERROR(parse({"m.plan", "--nproc", "0"}).status(),
               StatusCode::kInvalidArgument, "--nproc needs an integer >= 1");
  EXPECT_ERROR(parse({"m.plan", "--timeout", "-1"}).status(),
               StatusCode::kInvalidArgument, "--timeout needs seconds");
  EXPECT_ERROR(parse({"m.plan", "--timeout", "soon"}).status(),
               StatusCode::kInvalidArgument, "--timeout needs seconds");
}

TEST(LatencyStats, NearestRankPercentiles) {
  std::vector<double> ms;
  for (int i = 100; i >= 1; --i)
    ms.push_back(i); // 1..100 ms, unsorted
  LatencyStats s = computeLatencyStats(ms, /*batchSize=*/10);
  EXPECT_EQ(s.runs, 100);
  EXPECT_DOUBLE_EQ(s.minMs, 1);
  EXPECT_DOUBLE_EQ(s.medianMs, 50);
  EXPECT_DOUBLE_EQ(s.p90Ms, 90);
  EXPECT_DOUBLE_EQ(s.p99Ms, 99);
  EXPECT_DOUBLE_EQ(s.maxMs, 100);
  EXPECT_DOUBLE_EQ(s.meanMs, 50.5);
  // 100 runs of 10 samples in 5.05 s.
  EXPECT_NEAR(s.samplesPerSecond, 1000.0 / 5.05, 1e-9);
  LatencyStats one = computeLatencyStats({2.0}, 1);
  EXPECT_DOUBLE_EQ(one.p99Ms, 2.0);
  EXPECT_DOUBLE_EQ(one.medianMs, 2.0);
  EXPECT_EQ(computeLatencyStats({}, 1).runs, 0);
}

TEST(LatencyStats, JsonStrings) {
  EXPECT_EQ(jsonString("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(jsonString(std::string("\x01", 1)), "\"\\u0001\"");
}

} // namespace
