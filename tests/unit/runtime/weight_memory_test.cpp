//===- weight_memory_test.cpp - SessionOptions::weightMemory --------------===//
//
// A DLRM plan whose first table is 3.2 MB (so it is large enough to be
// copied into huge pages) runs with weightMemory mmap, huge_pages and auto:
// the outputs are bit-identical and match the plain-loop reference. With
// transparent huge pages off (EMBER_THP_SYSFS_PATH pointing at a file that
// selects "never") huge_pages falls back to the mapping and says so; bad
// values of the option are errors. parseWeightMemory,
// readTransparentHugePageMode and placeWeights (an int8 row-wise table, a
// uint8 constant, is copied like a float one) are tested directly.
//
//===----------------------------------------------------------------------===//
#include "ember/session.h"
#include "plan/weight_memory.h"
#include "support/dlrm_inputs.h"
#include "support/dlrm_model.h"
#include "support/expect_status.h"
#include "support/scoped_env.h"
#include "support/temp_dir.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

using namespace ember;
using namespace ember::testing;

namespace {

class WeightMemoryTest : public ::testing::Test {
protected:
  void SetUp() override {
    model_ = makeDlrmModel(5);
    // Table 0: 200,000 rows x 4 floats = 3.2 MB (> one 2 MiB huge page).
    constexpr int64_t kRows = 200000;
    model_.tableRows[0] = kRows;
    model_.tables[0].resize(kRows * DlrmModel::kDim);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (float &v : model_.tables[0])
      v = u(rng);
    auto path = writeDlrmPlan(model_, dir_.path(), "dlrm");
    ASSERT_TRUE(path.isOk()) << path.status().toString();
    planPath_ = *path;
    batch_ = makeDlrmBatch(model_, 64, 3, /*maxLen=*/8);
    thpNever_ = dir_.file("thp_never");
    std::ofstream(thpNever_) << "always madvise [never]\n";
    thpMadvise_ = dir_.file("thp_madvise");
    std::ofstream(thpMadvise_) << "always [madvise] never\n";
  }

  /// Loads with `mode`, runs the batch; returns prob and what went to stderr.
  std::vector<float> run(const std::string &mode, std::string *stderrText) {
    SessionOptions options;
    options.weightMemory = mode;
    ::testing::internal::CaptureStderr();
    auto session = Session::load(planPath_, options);
    *stderrText = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(session.isOk()) << session.status().toString();
    if (!session.isOk())
      return {};
    auto out = (*session)->run(dlrmInputs(model_, batch_));
    EXPECT_TRUE(out.isOk()) << out.status().toString();
    if (!out.isOk())
      return {};
    const Tensor *prob = out->find("prob");
    expectMatchesReference(*prob, referenceDlrm(model_, batch_));
    const float *p = prob->data<float>();
    return std::vector<float>(p, p + prob->shape().numel());
  }

  TempDir dir_;
  DlrmModel model_;
  DlrmBatch batch_;
  std::string planPath_, thpNever_, thpMadvise_;
};

TEST_F(WeightMemoryTest, OutputsIdenticalInEveryMode) {
  ScopedEnv thp("EMBER_THP_SYSFS_PATH", thpMadvise_);
  std::string err;
  std::vector<float> mapped = run("mmap", &err);
  EXPECT_EQ(err.find("weight memory"), std::string::npos) << err;
  std::vector<float> huge = run("huge_pages", &err);
  EXPECT_NE(err.find("weight memory huge_pages: 1 constant(s) of 3.2 MB "
                     "copied into huge-page memory"),
            std::string::npos)
      << err;
  std::vector<float> automatic = run("auto", &err);
  EXPECT_NE(err.find("weight memory auto: 1 constant(s)"), std::string::npos)
      << err;
  ASSERT_EQ(mapped.size(), 64u);
  ASSERT_EQ(huge.size(), mapped.size());
  ASSERT_EQ(automatic.size(), mapped.size());
  EXPECT_EQ(std::memcmp(mapped.data(), huge.data(), mapped.size() * 4), 0);
  EXPECT_EQ(std::memcmp(mapped.data(), automatic.data(), mapped.size() * 4),
            0);
}

TEST_F(WeightMemoryTest, FallsBackWhenTransparentHugePagesAreOff) {
  ScopedEnv thp("EMBER_THP_SYSFS_PATH", thpNever_);
  std::string err;
  std::vector<float> mapped = run("mmap", &err);
  std::vector<float> huge = run("huge_pages", &err);
  EXPECT_NE(err.find("weight memory huge_pages: transparent huge pages are "
                     "off (" +
                     thpNever_ +
                     " selects never); weights stay mapped from the file"),
            std::string::npos)
      << err;
  ASSERT_EQ(huge.size(), mapped.size());
  EXPECT_EQ(std::memcmp(mapped.data(), huge.data(), mapped.size() * 4), 0);
  // auto keeps the mapping without calling it a fallback.
  std::vector<float> automatic = run("auto", &err);
  EXPECT_NE(err.find("weight memory auto: weights mapped from the file"),
            std::string::npos)
      << err;
  EXPECT_EQ(std::memcmp(mapped.data(), automatic.data(), mapped.size() * 4),
            0);
}

TEST_F(WeightMemoryTest, FallsBackWhenTheSysfsFileIsMissing) {
  ScopedEnv thp("EMBER_THP_SYSFS_PATH", dir_.file("no_such_file"));
  std::string err;
  std::vector<float> huge = run("huge_pages", &err);
  EXPECT_NE(err.find("transparent huge pages unavailable (cannot read " +
                     dir_.file("no_such_file") + ")"),
            std::string::npos)
      << err;
  EXPECT_EQ(huge.size(), 64u);
}

TEST_F(WeightMemoryTest, BadValuesAreErrors) {
  for (const char *bad : {"", "hugepages", "MMAP", "huge_pages "}) {
    SessionOptions options;
    options.weightMemory = bad;
    EXPECT_ERROR(Session::load(planPath_, options).status(),
                 StatusCode::kInvalidArgument,
                 "weight memory '" + std::string(bad) +
                     "' is not one of mmap, huge_pages, auto");
  }
}

// Row-wise int8 tables are uint8 constants [rows, dim + 8]: placeWeights
// copies them into huge-page memory exactly as it does float tables (every
// constant of at least 2 MiB, whatever its dtype), bytes, dtype and shape
// unchanged; smaller constants and absent slots are left alone.
TEST(PlaceWeights, QuantizedTablesAreCopiedLikeFloatTables) {
  TempDir dir;
  std::ofstream(dir.file("thp")) << "always [madvise] never\n";
  ScopedEnv thp("EMBER_THP_SYSFS_PATH", dir.file("thp"));
  std::mt19937 rng(11);
  auto filled = [&](DType dtype, const Shape &shape) {
    auto t = Tensor::allocate(dtype, shape);
    EXPECT_TRUE(t.isOk());
    auto *bytes = static_cast<unsigned char *>(t->data());
    for (size_t i = 0; i < t->nbytes(); ++i)
      bytes[i] = static_cast<unsigned char>(rng());
    return *t;
  };
  // int8_rowwise D 128: 136-byte rows; 20,000 rows = 2.7 MB.
  Tensor int8Table = filled(DType::kUInt8, {20000, 136});
  Tensor floatTable = filled(DType::kFloat32, {200000, 4}); // 3.2 MB
  Tensor smallInt8 = filled(DType::kUInt8, {1000, 72});     // 72 KB
  std::vector<Tensor> before = {int8Table, floatTable, smallInt8, Tensor()};
  std::vector<Tensor> constants = before;
  auto placed = placeWeights(WeightMemory::kHugePages, constants, {});
  ASSERT_TRUE(placed.isOk()) << placed.status().toString();
  EXPECT_TRUE(placed->hugePages);
  EXPECT_EQ(placed->tablesCopied, 2);
  EXPECT_EQ(placed->bytesCopied, int8Table.nbytes() + floatTable.nbytes());
  for (int i : {0, 1}) {
    SCOPED_TRACE(i);
    EXPECT_NE(constants[i].data(), before[i].data());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(constants[i].data()) % kHugePageBytes,
              0u);
    EXPECT_EQ(constants[i].dtype(), before[i].dtype());
    EXPECT_EQ(constants[i].shape(), before[i].shape());
    ASSERT_EQ(constants[i].nbytes(), before[i].nbytes());
    EXPECT_EQ(
        std::memcmp(constants[i].data(), before[i].data(), before[i].nbytes()),
        0);
  }
  EXPECT_EQ(constants[2].data(), smallInt8.data());
  EXPECT_FALSE(constants[3].defined());
}

TEST(WeightMemoryParse, NamesRoundTrip) {
  for (WeightMemory m :
       {WeightMemory::kMmap, WeightMemory::kHugePages, WeightMemory::kAuto}) {
    auto parsed = parseWeightMemory(weightMemoryName(m));
    ASSERT_TRUE(parsed.isOk());
    EXPECT_EQ(*parsed, m);
  }
}

TEST(WeightMemoryParse, TransparentHugePageModes) {
  TempDir dir;
  auto write = [&](const std::string &name, const std::string &text) {
    std::ofstream(dir.file(name)) << text;
    return dir.file(name);
  };
  auto mode = readTransparentHugePageMode(write("a", "[always] madvise never\n"));
  ASSERT_TRUE(mode.isOk());
  EXPECT_EQ(*mode, "always");
  mode = readTransparentHugePageMode(write("b", "always madvise [never]\n"));
  ASSERT_TRUE(mode.isOk());
  EXPECT_EQ(*mode, "never");
  EXPECT_ERROR(readTransparentHugePageMode(write("c", "always madvise never\n"))
                   .status(),
               StatusCode::kInvalidArgument, "with no [selected] mode");
  EXPECT_ERROR(readTransparentHugePageMode(write("d", "")).status(),
               StatusCode::kNotFound, "cannot read");
  EXPECT_ERROR(readTransparentHugePageMode(dir.file("missing")).status(),
               StatusCode::kNotFound, "cannot read");
}

} // namespace
