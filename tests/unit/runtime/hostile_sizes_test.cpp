//===- hostile_sizes_test.cpp - Declared sizes are refused, not allocated -===//
//
// A plan, an input or a file that declares huge dims or counts is refused
// with an error naming the field before memory is allocated for it
// (docs/reliability.md, "Limits on declared sizes"): the session's
// maxTensorBytes limit (SessionOptions, the C API, EMBER_MAX_TENSOR_BYTES)
// at load and at run time, shapes of more than 2^60 elements, KJT lengths
// whose sum overflows, and .npz entries that declare more than they hold.
// Several cases are the regression inputs of fuzzing findings (fuzz/).
//
//===----------------------------------------------------------------------===//
#include "ember/c_api.h"
#include "ember/session.h"
#include "io/npy.h"
#include "support/expect_status.h"
#include "support/file_bytes.h"
#include "support/plan_builder.h"
#include "support/scoped_env.h"
#include "support/temp_dir.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>

using namespace ember;
using namespace ember::testing;

namespace {

/// x float32[B, width] -> relu -> y, with an extra relu into a slot of a
/// static shape `big` when given; optionally a static arena of arenaBytes.
std::string writeReluPlan(const TempDir &dir, int64_t width,
                          std::vector<int64_t> big = {},
                          int64_t arenaBytes = 0) {
  PlanBuilder b;
  int x = b.input("x", DType::kFloat32, {"B", Dim(width)});
  int y = b.slot("y", DType::kFloat32, {"B", Dim(width)});
  b.instruction("relu", {x}, {y}, "act");
  if (!big.empty()) {
    std::vector<Dim> dims(big.begin(), big.end());
    int z = b.slot("huge", DType::kFloat32, dims);
    b.instruction("relu", {y}, {z}, "act2");
  }
  b.output("y", y);
  if (arenaBytes)
    b.program().set_arena_bytes(arenaBytes);
  auto path = b.write(dir.path(), "m");
  EXPECT_TRUE(path.isOk()) << path.status().toString();
  return path.isOk() ? *path : "";
}

Result<std::unique_ptr<Session>> load(const std::string &path,
                                      int64_t maxTensorBytes) {
  SessionOptions options;
  options.maxTensorBytes = maxTensorBytes;
  return Session::load(path, options);
}

TEST(HostileSizes, PlanSlotLargerThanTheLimitIsRefusedAtLoad) {
  TempDir dir;
  // 4 GiB of float32 declared by a slot of a static shape.
  std::string path = writeReluPlan(dir, 4, {int64_t{1} << 20, 1 << 10});
  auto s = load(path, int64_t{1} << 30);
  ASSERT_FALSE(s.isOk());
  EXPECT_ERROR(s.status(), StatusCode::kInvalidArgument, "slot 2 'huge'");
  EXPECT_ERROR(s.status(), StatusCode::kInvalidArgument,
               "more than the limit of 1073741824 bytes "
               "(SessionOptions.maxTensorBytes, EMBER_MAX_TENSOR_BYTES)");
  // Under the default limit (64 GiB) the same plan loads.
  EXPECT_TRUE(load(path, 0).isOk());
  // 2^40 floats is over the default.
  std::string huge = writeReluPlan(dir, 4, {int64_t{1} << 40});
  EXPECT_ERROR(load(huge, 0).status(), StatusCode::kInvalidArgument,
               "slot 2 'huge' is float32[1099511627776]");
}

TEST(HostileSizes, StaticArenaLargerThanTheLimitIsRefusedAtLoad) {
  TempDir dir;
  std::string path = writeReluPlan(dir, 4, {}, int64_t{1} << 31);
  EXPECT_ERROR(load(path, int64_t{1} << 30).status(),
               StatusCode::kInvalidArgument,
               "the static arena (arena_bytes) is 2147483648 bytes, more than "
               "the limit of 1073741824 bytes");
}

TEST(HostileSizes, RunTimeAllocationsAreBounded) {
  TempDir dir;
  std::string path = writeReluPlan(dir, 1024);
  auto session = load(path, int64_t{1} << 20); // 1 MiB
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  std::vector<float> x(512 * 1024, -1.0f);
  RunInputs in;
  in.set("x", Tensor::view(x.data(), DType::kFloat32, {16, 1024}));
  auto ok = (*session)->run(in);
  ASSERT_TRUE(ok.isOk()) << ok.status().toString();
  // 512 x 1024 floats = 2 MiB for y.
  in.set("x", Tensor::view(x.data(), DType::kFloat32, {512, 1024}));
  auto big = (*session)->run(in);
  EXPECT_ERROR(big.status(), StatusCode::kResourceExhausted,
               "instruction 0 'relu' (act): output 0 (slot 1 'y') "
               "float32[512, 1024] is more than the limit of 1048576 bytes");
  // The session is still usable.
  in.set("x", Tensor::view(x.data(), DType::kFloat32, {16, 1024}));
  EXPECT_TRUE((*session)->run(in).isOk());
}

TEST(HostileSizes, LimitFromTheEnvironmentAndTheCApi) {
  TempDir dir;
  std::string path = writeReluPlan(dir, 4);
  {
    ScopedEnv env("EMBER_MAX_TENSOR_BYTES", "12x");
    EXPECT_ERROR(load(path, 0).status(), StatusCode::kInvalidArgument,
                 "EMBER_MAX_TENSOR_BYTES '12x' is not a positive number");
  }
  {
    ScopedEnv env("EMBER_MAX_TENSOR_BYTES", "4096");
    auto s = load(path, 0);
    ASSERT_TRUE(s.isOk());
    EXPECT_EQ((*s)->options().maxTensorBytes, 4096);
    // The option wins over the environment.
    auto t = load(path, 8192);
    ASSERT_TRUE(t.isOk());
    EXPECT_EQ((*t)->options().maxTensorBytes, 8192);
  }
  auto d = load(path, 0);
  ASSERT_TRUE(d.isOk());
  EXPECT_EQ((*d)->options().maxTensorBytes, kDefaultMaxTensorBytes);
  EXPECT_ERROR(load(path, -1).status(), StatusCode::kInvalidArgument,
               "SessionOptions.maxTensorBytes -1 is negative");

  EmberSessionOptions *o = ember_session_options_create();
  EmberStatus *st = nullptr;
  EXPECT_EQ(ember_session_options_set_max_tensor_bytes(o, -5, &st),
            EMBER_INVALID_ARGUMENT);
  ember_status_free(st);
  EXPECT_EQ(ember_session_options_set_max_tensor_bytes(nullptr, 5, nullptr),
            EMBER_INVALID_ARGUMENT);
  std::string bigPlan = writeReluPlan(dir, 4, {1 << 20});
  ASSERT_EQ(ember_session_options_set_max_tensor_bytes(o, 1 << 20, nullptr),
            EMBER_OK);
  EmberSession *session = nullptr;
  st = nullptr;
  EXPECT_EQ(ember_session_create(bigPlan.c_str(), o, &session, &st),
            EMBER_INVALID_ARGUMENT);
  ASSERT_NE(st, nullptr);
  EXPECT_NE(std::string(ember_status_message(st)).find("slot 2 'huge'"),
            std::string::npos)
      << ember_status_message(st);
  ember_status_free(st);
  ember_session_free(session);
  ember_session_options_free(o);
}

TEST(HostileSizes, ShapesOfMoreThan2To60ElementsAreRefused) {
  // Found by fuzz_session_run: a view of [2^40, 2^40] overflowed numel().
  int64_t dims[] = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_ERROR(Shape::fromDims(dims, 2).status(),
               StatusCode::kResourceExhausted,
               "is too large: more than 2^60 elements");
  EmberTensor *t = nullptr;
  EmberStatus *st = nullptr;
  float x = 0;
  EXPECT_EQ(ember_tensor_create_view(EMBER_FLOAT32, dims, 2, &x, &t, &st),
            EMBER_RESOURCE_EXHAUSTED);
  EXPECT_EQ(t, nullptr);
  ember_status_free(st);
  // A C++ view made with an initializer list is checked by run().
  TempDir dir;
  auto session = load(writeReluPlan(dir, 4), 0);
  ASSERT_TRUE(session.isOk());
  RunInputs in;
  in.set("x", Tensor::view(&x, DType::kFloat32,
                           {int64_t{1} << 40, int64_t{1} << 40}));
  EXPECT_ERROR((*session)->run(in).status(), StatusCode::kInvalidArgument,
               "input 'x' has dimensions [1099511627776, 1099511627776]");
}

TEST(HostileSizes, KjtLengthsWhoseSumOverflowsAreRefused) {
  TempDir dir;
  PlanBuilder b;
  KjtSlotIds ids = b.kjtInput("ids", {"a", "b"});
  int y = b.slot("len", DType::kInt64, {Dim("B", 2)});
  b.instruction("identity", {ids.lengths}, {y});
  b.output("len", y);
  auto path = b.write(dir.path(), "kjt");
  ASSERT_TRUE(path.isOk()) << path.status().toString();
  auto session = load(*path, 0);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  int64_t big = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> values = {1};
  for (auto lengths :
       {std::vector<int64_t>{big, big}, std::vector<int64_t>{1, big}}) {
    auto kjt = KeyedJaggedTensor::fromLengths(
        {"a", "b"}, Tensor::view(values.data(), DType::kInt64, {1}),
        Tensor::view(lengths.data(), DType::kInt64, {2}));
    ASSERT_TRUE(kjt.isOk());
    RunInputs in;
    in.set("ids", *kjt);
    EXPECT_ERROR((*session)->run(in).status(), StatusCode::kInvalidArgument,
                 "KJT input 'ids': the lengths sum to more than the 1 values");
  }
  // Offsets that jump from INT64_MIN to INT64_MAX: refused, not subtracted.
  std::vector<int64_t> offsets = {0, std::numeric_limits<int64_t>::min(), 1};
  auto kjt = KeyedJaggedTensor::fromOffsets(
      {"a", "b"}, Tensor::view(values.data(), DType::kInt64, {1}),
      Tensor::view(offsets.data(), DType::kInt64, {3}));
  ASSERT_TRUE(kjt.isOk());
  RunInputs in;
  in.set("ids", *kjt);
  EXPECT_ERROR((*session)->run(in).status(), StatusCode::kInvalidArgument,
               "offsets decrease at position 1");
}

std::string npzBytes(const TempDir &dir) {
  std::vector<float> a = {1, 2, 3}, b = {4, 5};
  std::string path = dir.file("x.npz");
  EXPECT_TRUE(
      npy::writeNpz(path, {{"a", Tensor::view(a.data(), DType::kFloat32, {3})},
                           {"b", Tensor::view(b.data(), DType::kFloat32, {2})}})
          .isOk());
  return readFileBytes(path);
}

void put32(std::string &s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

TEST(HostileSizes, NpzEntriesThatDeclareMoreThanTheyHoldAreRefused) {
  TempDir dir;
  std::string good = npzBytes(dir);
  ASSERT_TRUE(npy::parseNpz(good, "x.npz").isOk());
  size_t central = good.find("PK\x01\x02");
  ASSERT_NE(central, std::string::npos);
  // Found by fuzz_npz: a deflated entry declaring 4 GiB was allocated in
  // full before inflating.
  std::string bomb = good;
  bomb[central + 10] = 8; // deflate
  put32(bomb, central + 24, 0xfffffff0u);
  EXPECT_ERROR(npy::parseNpz(bomb, "x.npz").status(), StatusCode::kDataLoss,
               "more than deflate can produce");
  // Two entries over the same bytes (the second pointing at the first's
  // local header): refused, so an archive cannot decode to more than it has.
  std::string overlap = good;
  size_t second = overlap.find("PK\x01\x02", central + 4);
  ASSERT_NE(second, std::string::npos);
  put32(overlap, second + 42, 0);
  EXPECT_ERROR(npy::parseNpz(overlap, "x.npz").status(), StatusCode::kDataLoss,
               "entries overlap");
}

} // namespace
