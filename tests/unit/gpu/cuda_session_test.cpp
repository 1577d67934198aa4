//===- cuda_session_test.cpp - ember::Session on a CUDA device ------------===//
//
// The test DLRM (tests/unit/runtime/support/dlrm_model.h) through a session
// with SessionOptions.device = "cuda": against the plain-loop reference and
// the CPU session, bounds-check modes (device error record), bad inputs,
// host fallback, several streams. Without a GPU only the device-selection
// errors are checked; the rest skips and says why.
//
//===----------------------------------------------------------------------===//
#include "cuda_kernel_runner.h"
#include "ember/session.h"
#include "support/dlrm_inputs.h"
#include "support/dlrm_model.h"
#include "support/expect_status.h"
#include "support/temp_dir.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace ember;
using namespace ember::testing;

namespace {

/// The DLRM plan as text, retargeted to `target` (TARGET_CPU / TARGET_CUDA);
/// `extra` is appended to the first rank program (streams, events).
std::string writePlan(const DlrmModel &model, const TempDir &dir,
                      const std::string &base, const std::string &target) {
  auto path = writeDlrmPlan(model, dir.path(), base, /*text=*/true);
  EXPECT_TRUE(path.isOk()) << path.status().toString();
  std::ofstream(*path, std::ios::app) << "\ntarget: " << target << "\n";
  return *path;
}

class CudaSessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    model_ = makeDlrmModel(11);
    cudaPlan_ = writePlan(model_, dir_, "dlrm_cuda", "TARGET_CUDA");
    cpuPlan_ = writePlan(model_, dir_, "dlrm_cpu", "TARGET_CPU");
  }
  std::unique_ptr<Session> load(SessionOptions options = {},
                                const std::string &plan = "") {
    options.device = options.device == "cpu" ? "cuda" : options.device;
    auto session = Session::load(plan.empty() ? cudaPlan_ : plan, options);
    EXPECT_TRUE(session.isOk()) << session.status().toString();
    return session.isOk() ? std::move(*session) : nullptr;
  }

  TempDir dir_;
  DlrmModel model_;
  std::string cudaPlan_, cpuPlan_;
};

TEST_F(CudaSessionTest, DeviceSelectionErrors) {
  SessionOptions options;
  options.device = "gpu";
  EXPECT_ERROR(Session::load(cudaPlan_, options).status(),
               StatusCode::kInvalidArgument, "expected cuda or cuda:N");
  options.device = "cuda:x";
  EXPECT_ERROR(Session::load(cudaPlan_, options).status(),
               StatusCode::kInvalidArgument, "expected cuda or cuda:N");
  // A CPU plan on the CUDA backend, and a CUDA plan on the CPU backend.
  options.device = "cuda";
  EXPECT_ERROR(Session::load(cpuPlan_, options).status(),
               StatusCode::kFailedPrecondition, "compiled for the cpu target");
  EXPECT_ERROR(Session::load(cudaPlan_, SessionOptions{}).status(),
               StatusCode::kFailedPrecondition, "--device cuda");
  std::string why = gpuUnavailableReason();
  if (!why.empty()) {
    // No GPU: the session says why instead of crashing.
    auto s = Session::load(cudaPlan_, options);
    ASSERT_FALSE(s.isOk());
    EXPECT_EQ(s.status().code(), StatusCode::kUnavailable)
        << s.status().toString();
    GTEST_SKIP() << "no GPU: " << why;
  }
  options.device = "cuda:99";
  EXPECT_ERROR(Session::load(cudaPlan_, options).status(),
               StatusCode::kInvalidArgument, "does not exist");
  // A refused load leaves no CUDA error behind for the next CUDA call to
  // report (seen on the first H100 run: CUB's next scan failed with
  // "invalid device ordinal").
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess);
}

TEST_F(CudaSessionTest, MatchesReferenceAndCpuForDynamicBatch) {
  EMBER_SKIP_WITHOUT_GPU();
  auto session = load();
  ASSERT_TRUE(session);
  EXPECT_NE(session->deviceDescription().find("cuda:0"), std::string::npos);
  auto cpu = Session::load(cpuPlan_);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  RunOutputs out; // reused: later runs overwrite its buffers
  for (int64_t b : {1, 7, 64, 7, 300}) {
    DlrmBatch batch = makeDlrmBatch(model_, b, 100 + b);
    RunInputs in = dlrmInputs(model_, batch);
    ASSERT_OK(session->run(in, &out));
    ASSERT_EQ(out.size(), 1u);
    expectMatchesReference(*out.find("prob"), referenceDlrm(model_, batch));
    auto onCpu = (*cpu)->run(in);
    ASSERT_TRUE(onCpu.isOk());
    const Tensor &g = *out.find("prob"), &c = *onCpu->find("prob");
    for (int64_t i = 0; i < g.numel(); ++i)
      EXPECT_NEAR(g.data<float>()[i], c.data<float>()[i],
                  1e-5f * (1 + std::fabs(c.data<float>()[i])));
    EXPECT_EQ(out.invalidIds(), 0);
  }
  // Empty bags everywhere.
  DlrmBatch empty = makeDlrmBatch(model_, 5, 3, /*maxLen=*/0);
  auto result = session->run(dlrmInputs(model_, empty));
  ASSERT_TRUE(result.isOk()) << result.status().toString();
  expectMatchesReference(*result->find("prob"), referenceDlrm(model_, empty));
}

TEST_F(CudaSessionTest, OutOfRangeIdsFollowTheBoundsCheckMode) {
  EMBER_SKIP_WITHOUT_GPU();
  DlrmBatch batch = makeDlrmBatch(model_, 6, 17, /*maxLen=*/3);
  std::vector<int64_t> badPositions;
  for (size_t i = 0; i < batch.values.size() && badPositions.size() < 2; ++i) {
    batch.values[i] = model_.tableRows[0] + static_cast<int64_t>(i);
    badPositions.push_back(static_cast<int64_t>(i));
  }
  ASSERT_EQ(badPositions.size(), 2u);
  ASSERT_GE(batch.lengths[0] + batch.lengths[1] + batch.lengths[2], 2);

  auto fatal = load();
  ASSERT_TRUE(fatal);
  RunOutputs out;
  Status s = fatal->run(dlrmInputs(model_, batch), &out);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.toString();
  EXPECT_NE(s.message().find("out of range"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("instruction"), std::string::npos) << s.message();
  EXPECT_EQ(out.size(), 0u) << "a failed run returns no outputs";

  SessionOptions warn;
  warn.boundsCheck = BoundsCheckMode::kWarning;
  auto warning = load(warn);
  ASSERT_TRUE(warning);
  auto result = warning->run(dlrmInputs(model_, batch));
  ASSERT_TRUE(result.isOk()) << result.status().toString();
  EXPECT_EQ(result->invalidIds(), 2);
  expectMatchesReference(
      *result->find("prob"),
      referenceDlrm(model_, withoutIds(batch, badPositions)));

  // The session still works after a failed run.
  DlrmBatch good = makeDlrmBatch(model_, 6, 18);
  auto again = fatal->run(dlrmInputs(model_, good));
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  expectMatchesReference(*again->find("prob"), referenceDlrm(model_, good));
}

TEST_F(CudaSessionTest, BadInputsAreCheckedBeforeAnythingRuns) {
  EMBER_SKIP_WITHOUT_GPU();
  auto session = load();
  ASSERT_TRUE(session);
  DlrmBatch batch = makeDlrmBatch(model_, 4, 1);
  RunInputs in = dlrmInputs(model_, batch);
  in.set("dense", Tensor::view(batch.dense.data(), DType::kFloat32, {1, 4}));
  EXPECT_ERROR(session->run(in).status(), StatusCode::kInvalidArgument,
               "'B' is 1 for dense but 4 for sparse");
  std::vector<int64_t> lengths = batch.lengths;
  lengths[2] = -1;
  in = dlrmInputs(model_, batch);
  in.set("sparse", *KeyedJaggedTensor::fromLengths(
                       model_.keys,
                       Tensor::view(batch.values.data(), DType::kInt64,
                                    {int64_t(batch.values.size())}),
                       Tensor::view(lengths.data(), DType::kInt64,
                                    {int64_t(lengths.size())})));
  EXPECT_ERROR(session->run(in).status(), StatusCode::kInvalidArgument,
               "lengths[2] is -1 (negative)");
}

TEST_F(CudaSessionTest, HostInstructionsAreThoseWithoutACudaKernel) {
  EMBER_SKIP_WITHOUT_GPU();
  auto session = load();
  ASSERT_TRUE(session);
  std::vector<std::string> cuda = cudaKernelNames();
  for (const std::string &where : session->hostInstructions())
    for (const std::string &name : cuda)
      EXPECT_EQ(where.find("'" + name + "'"), std::string::npos)
          << where << " has a CUDA kernel but runs on the host";
}

TEST_F(CudaSessionTest, TwoStreamsWithEventsGiveTheSameResult) {
  EMBER_SKIP_WITHOUT_GPU();
  // The first instruction on stream 1; every later one, on stream 0, waits
  // for it through event 0.
  std::ifstream in(cudaPlan_);
  std::stringstream text;
  text << in.rdbuf();
  std::string plan = text.str();
  size_t first = plan.find("instructions {");
  ASSERT_NE(first, std::string::npos);
  plan.insert(first + std::string("instructions {").size(),
              "\n    stream: 1\n    record_events: 0\n");
  int waiting = 0;
  for (size_t at = plan.find("instructions {", first + 1);
       at != std::string::npos; at = plan.find("instructions {", at + 1)) {
    plan.insert(at + std::string("instructions {").size(),
                "\n    wait_events: 0\n");
    ++waiting;
  }
  ASSERT_GT(waiting, 0);
  size_t programs = plan.find("programs {");
  ASSERT_NE(programs, std::string::npos);
  plan.insert(programs + std::string("programs {").size(),
              "\n  num_streams: 2\n  num_events: 1\n");
  std::string path = dir_.path() + "/dlrm_streams.plan.txt";
  std::ofstream(path) << plan;
  auto session = load({}, path);
  ASSERT_TRUE(session);
  for (int64_t b : {3, 33}) {
    DlrmBatch batch = makeDlrmBatch(model_, b, 7 * b);
    auto out = session->run(dlrmInputs(model_, batch));
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    expectMatchesReference(*out->find("prob"), referenceDlrm(model_, batch));
  }
}

TEST_F(CudaSessionTest, CudaGraphsReplayTheSteadyState) {
  EMBER_SKIP_WITHOUT_GPU();
  SessionOptions options;
  options.cudaGraphs = true;
  auto session = load(options);
  ASSERT_TRUE(session);
  // The same shapes three times (run 2 captures, run 3 replays), then other
  // shapes, then the first ones again with other values.
  std::vector<std::pair<int64_t, uint64_t>> runs = {{16, 1}, {16, 1}, {16, 1},
                                                    {9, 2},  {16, 1}, {16, 1}};
  for (auto [b, seed] : runs) {
    DlrmBatch batch = makeDlrmBatch(model_, b, seed, /*maxLen=*/0);
    // Fixed bag sizes so that equal batches have equal shapes.
    for (int64_t &len : batch.lengths)
      len = 2;
    batch.values.clear();
    for (int64_t f = 0; f < model_.numFeatures(); ++f)
      for (int64_t i = 0; i < 2 * b; ++i)
        batch.values.push_back((i * 7 + static_cast<int64_t>(seed) * 3 + f) %
                               model_.tableRows[f]);
    auto out = session->run(dlrmInputs(model_, batch));
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    expectMatchesReference(*out->find("prob"), referenceDlrm(model_, batch));
  }
  if (session->hostInstructions().empty()) {
    EXPECT_GT(session->stats().cudaGraphReplays, 0)
        << "a program with every kernel on the device should replay";
  }
}

} // namespace
