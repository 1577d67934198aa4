//===- concurrency_test.cpp - One session, many threads, good and bad runs ===//
//
// 8 threads share one session (and 8 more one C API session) for a while
// (EMBER_STRESS_SECONDS, default 2) and run a mix of requests: good ones of
// batch sizes 1..33, ones whose out-of-range ids a kWarning session replaces
// by zero rows, and deliberately bad ones (negative lengths, lengths that do
// not sum to the ids, ids outside a table under kFatal, wrong keys, dtypes,
// widths, batch sizes, missing and unknown inputs, offsets not from 0).
// Every result must equal the one the same request gave single-threaded
// before the threads started: the same bits for good runs (and the same
// invalid-id count), the same code and message for bad ones; no bad request
// disturbs another. Labelled `tsan`: `ctest --preset tsan` runs it under
// ThreadSanitizer (docs/reliability.md).
//
//===----------------------------------------------------------------------===//
#include "ember/c_api.h"
#include "ember/session.h"
#include "support/dlrm_inputs.h"
#include "support/dlrm_model.h"
#include "support/temp_dir.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

using namespace ember;
using namespace ember::testing;

namespace {

constexpr int kThreads = 8;

double stressSeconds() {
  const char *env = std::getenv("EMBER_STRESS_SECONDS");
  double s = env ? std::atof(env) : 0;
  return s > 0 ? s : 2.0;
}

/// One request: its buffers, its inputs (views of them) and what it gave
/// single-threaded.
struct Request {
  std::string name;
  bool warning = false; // run on the kWarning session
  DlrmBatch batch;
  std::vector<std::string> keys;
  std::vector<double> dense64;  // a float64 dense input, when used
  std::vector<int64_t> offsets; // KJT given by offsets, when non-empty
  bool dropKjt = false, unknownInput = false;
  int64_t denseBatch = -1, denseWidth = DlrmModel::kDenseIn;
  RunInputs inputs;
  EmberInputs *cInputs = nullptr;
  std::vector<EmberTensor *> cTensors;
  bool cApi = true; // the C API can express it (lengths, not offsets)
  // Single-threaded outcome.
  StatusCode code = StatusCode::kOk;
  std::string message;
  std::vector<float> prob;
  int64_t invalidIds = 0;
};

class ConcurrencyTest : public ::testing::Test {
protected:
  void SetUp() override {
    model_ = makeDlrmModel(23);
    auto path = writeDlrmPlan(model_, dir_.path(), "dlrm");
    ASSERT_TRUE(path.isOk()) << path.status().toString();
    planPath_ = *path;
    makeRequests();
    for (Request &r : requests_)
      buildInputs(r);
  }
  void TearDown() override {
    for (Request &r : requests_) {
      for (EmberTensor *t : r.cTensors)
        ember_tensor_free(t);
      ember_inputs_free(r.cInputs);
    }
  }

  Request &add(const std::string &name, int64_t batch, uint64_t seed) {
    requests_.emplace_back();
    Request &r = requests_.back();
    r.name = name;
    // At least two ids, so that the bad requests below have some to spoil.
    do
      r.batch = makeDlrmBatch(model_, batch, seed++);
    while (r.batch.values.size() < 2);
    r.keys = model_.keys;
    return r;
  }

  void makeRequests() {
    requests_.reserve(64);
    uint64_t seed = 1000;
    for (int64_t b : {1, 2, 3, 5, 8, 16, 33})
      add("good B=" + std::to_string(b), b, ++seed);
    for (int64_t b : {4, 9}) {
      Request &r =
          add("warning, ids out of range, B=" + std::to_string(b), b, ++seed);
      r.warning = true;
      r.batch.values[0] = model_.tableRows[0] + 3;
      r.batch.values.back() = -2;
    }
    add("good on the warning session", 6, ++seed).warning = true;
    {
      Request &r = add("negative length", 4, ++seed);
      r.batch.lengths[1] = -1;
    }
    {
      Request &r = add("lengths sum too high", 4, ++seed);
      r.batch.lengths[0] += 2;
    }
    {
      Request &r = add("id out of range (fatal)", 5, ++seed);
      r.batch.values[r.batch.values.size() / 2] = 1 << 20;
    }
    {
      Request &r = add("keys in another order", 3, ++seed);
      std::swap(r.keys[0], r.keys[2]);
    }
    {
      Request &r = add("float64 dense", 3, ++seed);
      r.dense64.assign(r.batch.dense.begin(), r.batch.dense.end());
    }
    add("dense of width 5", 3, ++seed).denseWidth = 5;
    add("dense batch 2, KJT batch 3", 3, ++seed).denseBatch = 2;
    add("no KJT", 3, ++seed).dropKjt = true;
    add("an unknown input", 3, ++seed).unknownInput = true;
    {
      Request &r = add("offsets from 1", 3, ++seed);
      r.offsets.push_back(1);
      for (int64_t len : r.batch.lengths)
        r.offsets.push_back(r.offsets.back() + len);
      r.cApi = false;
    }
    {
      Request &r = add("good, offsets", 7, ++seed);
      r.offsets.push_back(0);
      for (int64_t len : r.batch.lengths)
        r.offsets.push_back(r.offsets.back() + len);
      r.cApi = false;
    }
  }

  void buildInputs(Request &r) {
    DlrmBatch &b = r.batch;
    int64_t denseBatch = r.denseBatch >= 0 ? r.denseBatch : b.batch;
    if (r.denseWidth != DlrmModel::kDenseIn || denseBatch != b.batch)
      b.dense.resize(denseBatch * r.denseWidth, 0.5f);
    Tensor dense = r.dense64.empty()
                       ? Tensor::view(b.dense.data(), DType::kFloat32,
                                      {denseBatch, r.denseWidth})
                       : Tensor::view(r.dense64.data(), DType::kFloat64,
                                      {denseBatch, r.denseWidth});
    r.inputs.set("dense", dense);
    Tensor values = Tensor::view(b.values.data(), DType::kInt64,
                                 {static_cast<int64_t>(b.values.size())});
    if (!r.dropKjt) {
      auto kjt =
          r.offsets.empty()
              ? KeyedJaggedTensor::fromLengths(
                    r.keys, values,
                    Tensor::view(b.lengths.data(), DType::kInt64,
                                 {static_cast<int64_t>(b.lengths.size())}))
              : KeyedJaggedTensor::fromOffsets(
                    r.keys, values,
                    Tensor::view(r.offsets.data(), DType::kInt64,
                                 {static_cast<int64_t>(r.offsets.size())}));
      ASSERT_TRUE(kjt.isOk()) << r.name << ": " << kjt.status().toString();
      r.inputs.set("sparse", *kjt);
    }
    if (r.unknownInput)
      r.inputs.set("extra", dense);
    if (!r.cApi)
      return;
    // The same request through the C API.
    r.cInputs = ember_inputs_create();
    auto view = [&](EmberDType t, std::vector<int64_t> dims, void *data) {
      EmberTensor *tensor = nullptr;
      EXPECT_EQ(ember_tensor_create_view(t, dims.data(), dims.size(), data,
                                         &tensor, nullptr),
                EMBER_OK);
      r.cTensors.push_back(tensor);
      return tensor;
    };
    EmberTensor *d =
        r.dense64.empty()
            ? view(EMBER_FLOAT32, {denseBatch, r.denseWidth}, b.dense.data())
            : view(EMBER_FLOAT64, {denseBatch, r.denseWidth}, r.dense64.data());
    ASSERT_EQ(ember_inputs_set_tensor(r.cInputs, "dense", d, nullptr),
              EMBER_OK);
    if (!r.dropKjt) {
      std::vector<const char *> keys;
      for (const std::string &k : r.keys)
        keys.push_back(k.c_str());
      EmberTensor *v =
          view(EMBER_INT64, {static_cast<int64_t>(b.values.size())},
               b.values.data());
      EmberTensor *l =
          view(EMBER_INT64, {static_cast<int64_t>(b.lengths.size())},
               b.lengths.data());
      ASSERT_EQ(ember_inputs_set_kjt(r.cInputs, "sparse", keys.data(),
                                     keys.size(), v, l, nullptr, nullptr),
                EMBER_OK);
    }
    if (r.unknownInput) {
      ASSERT_EQ(ember_inputs_set_tensor(r.cInputs, "extra", d, nullptr),
                EMBER_OK);
    }
  }

  std::unique_ptr<Session> load(BoundsCheckMode mode) {
    SessionOptions options;
    options.threads = 2; // the kernel pool is shared by concurrent runs too
    options.boundsCheck = mode;
    auto s = Session::load(planPath_, options);
    EXPECT_TRUE(s.isOk()) << s.status().toString();
    return s.isOk() ? std::move(*s) : nullptr;
  }

  TempDir dir_;
  DlrmModel model_;
  std::string planPath_;
  std::vector<Request> requests_;
};

/// Records the first disagreement seen by any thread.
struct Mismatches {
  std::atomic<int64_t> count{0};
  std::mutex mutex;
  std::string first;
  void add(const std::string &what) {
    if (count.fetch_add(1) == 0) {
      std::lock_guard<std::mutex> lock(mutex);
      first = what;
    }
  }
};

std::string compare(const Request &r, StatusCode code,
                    const std::string &message, const float *prob,
                    int64_t numel, int64_t invalidIds) {
  if (code != r.code || message != r.message)
    return r.name + ": got " + std::to_string(static_cast<int>(code)) + " '" +
           message + "', single-threaded " +
           std::to_string(static_cast<int>(r.code)) + " '" + r.message + "'";
  if (code != StatusCode::kOk)
    return "";
  if (numel != static_cast<int64_t>(r.prob.size()) ||
      std::memcmp(prob, r.prob.data(), r.prob.size() * sizeof(float)) != 0)
    return r.name + ": the output differs from the single-threaded run";
  if (invalidIds != r.invalidIds)
    return r.name + ": " + std::to_string(invalidIds) +
           " invalid ids, single-threaded " + std::to_string(r.invalidIds);
  return "";
}

/// A run loop shared by both tests: each thread picks requests in its own
/// pseudo-random order until the deadline.
template <typename RunOne>
int64_t stress(size_t numRequests, RunOne runOne, Mismatches &mismatches) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(stressSeconds());
  std::atomic<int64_t> runs{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      uint64_t x = 0x9e3779b97f4a7c15ull * (t + 1);
      int64_t mine = 0;
      // At least a full pass over the requests, whatever the clock says.
      while (mine < static_cast<int64_t>(numRequests) ||
             std::chrono::steady_clock::now() < deadline) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t i = mine < static_cast<int64_t>(numRequests)
                       ? (mine + t) % numRequests
                       : x % numRequests;
        std::string problem = runOne(t, i, mine);
        if (!problem.empty())
          mismatches.add("thread " + std::to_string(t) + ": " + problem);
        ++mine;
      }
      runs.fetch_add(mine);
    });
  for (auto &th : threads)
    th.join();
  return runs.load();
}

TEST_F(ConcurrencyTest, EightThreadsShareOneSession) {
  auto fatal = load(BoundsCheckMode::kFatal);
  auto warning = load(BoundsCheckMode::kWarning);
  ASSERT_TRUE(fatal && warning);
  // Single-threaded outcomes first (good ones checked against the reference).
  int good = 0, bad = 0;
  for (Request &r : requests_) {
    RunOutputs out;
    Status s = (r.warning ? *warning : *fatal).run(r.inputs, &out);
    r.code = s.code();
    r.message = s.message();
    if (s.isOk()) {
      const Tensor *prob = out.find("prob");
      ASSERT_NE(prob, nullptr);
      r.prob.assign(prob->data<float>(), prob->data<float>() + prob->numel());
      r.invalidIds = out.invalidIds();
      if (r.invalidIds == 0)
        expectMatchesReference(*prob, referenceDlrm(model_, r.batch));
      else
        EXPECT_TRUE(r.warning) << r.name;
      ++good;
    } else {
      EXPECT_FALSE(r.message.empty()) << r.name;
      EXPECT_EQ(out.size(), 0u) << r.name;
      ++bad;
    }
    EXPECT_EQ(s.isOk(),
              r.name.rfind("good", 0) == 0 || r.name.rfind("warning", 0) == 0)
        << r.name << ": " << s.toString();
  }
  EXPECT_GE(good, 10);
  EXPECT_GE(bad, 10);

  Mismatches mismatches;
  std::vector<RunOutputs> reused(kThreads);
  int64_t runs = stress(
      requests_.size(),
      [&](int t, size_t i, int64_t n) {
        const Request &r = requests_[i];
        RunOutputs fresh;
        // Mostly the thread's own outputs, reused as a server would.
        RunOutputs &out = n % 7 == 0 ? fresh : reused[t];
        Status s = (r.warning ? *warning : *fatal).run(r.inputs, &out);
        const Tensor *prob = s.isOk() ? out.find("prob") : nullptr;
        if (!s.isOk() && out.size() != 0)
          return r.name + ": outputs left after an error";
        return compare(r, s.code(), s.message(),
                       prob ? prob->data<float>() : nullptr,
                       prob ? prob->numel() : 0, out.invalidIds());
      },
      mismatches);
  EXPECT_EQ(mismatches.count.load(), 0) << mismatches.first;
  EXPECT_GE(runs, static_cast<int64_t>(kThreads * requests_.size()));
  // Contexts are per concurrent run: never more than the threads.
  EXPECT_LE(fatal->stats().runContexts, kThreads);
  EXPECT_LE(warning->stats().runContexts, kThreads);
  std::printf("[ concurrency ] %lld runs of %zu requests on %d threads\n",
              static_cast<long long>(runs), requests_.size(), kThreads);
}

TEST_F(ConcurrencyTest, EightThreadsShareOneCApiSession) {
  EmberSession *sessions[2] = {nullptr, nullptr}; // fatal, warning
  for (int w = 0; w < 2; ++w) {
    EmberSessionOptions *o = ember_session_options_create();
    ASSERT_EQ(ember_session_options_set_threads(o, 2, nullptr), EMBER_OK);
    ASSERT_EQ(ember_session_options_set_bounds_check(
                  o, w ? EMBER_BOUNDS_WARNING : EMBER_BOUNDS_FATAL, nullptr),
              EMBER_OK);
    EmberStatus *st = nullptr;
    ASSERT_EQ(ember_session_create(planPath_.c_str(), o, &sessions[w], &st),
              EMBER_OK)
        << ember_status_message(st);
    ember_session_options_free(o);
  }
  std::vector<size_t> usable;
  for (size_t i = 0; i < requests_.size(); ++i) {
    Request &r = requests_[i];
    if (!r.cApi)
      continue;
    usable.push_back(i);
    EmberOutputs *out = nullptr;
    EmberStatus *st = nullptr;
    EmberStatusCode c =
        ember_session_run(sessions[r.warning], r.cInputs, &out, &st);
    r.code = static_cast<StatusCode>(c);
    r.message = st ? ember_status_message(st) : "";
    ember_status_free(st);
    if (c == EMBER_OK) {
      const EmberTensor *prob = nullptr;
      ASSERT_EQ(ember_outputs_get(out, "prob", &prob, nullptr), EMBER_OK);
      const float *p = static_cast<const float *>(ember_tensor_data(prob));
      r.prob.assign(p, p + ember_tensor_numel(prob));
      r.invalidIds = ember_outputs_invalid_ids(out);
      if (r.invalidIds == 0) {
        auto t =
            Tensor::view(p, DType::kFloat32, {ember_tensor_dim(prob, 0), 1});
        expectMatchesReference(t, referenceDlrm(model_, r.batch));
      }
    } else {
      EXPECT_FALSE(r.message.empty()) << r.name;
    }
    ember_outputs_free(out);
  }
  ASSERT_GE(usable.size(), 15u);

  Mismatches mismatches;
  std::vector<EmberOutputs *> reused(kThreads, nullptr);
  int64_t runs = stress(
      usable.size(),
      [&](int t, size_t k, int64_t n) {
        const Request &r = requests_[usable[k]];
        EmberOutputs *fresh = nullptr;
        EmberOutputs **out = n % 7 == 0 ? &fresh : &reused[t];
        EmberStatus *st = nullptr;
        EmberStatusCode c =
            ember_session_run(sessions[r.warning], r.cInputs, out, &st);
        std::string message = st ? ember_status_message(st) : "";
        ember_status_free(st);
        std::string problem;
        if (c == EMBER_OK) {
          const EmberTensor *prob = nullptr;
          if (ember_outputs_get(*out, "prob", &prob, nullptr) != EMBER_OK)
            problem = r.name + ": no output 'prob'";
          else
            problem = compare(
                r, StatusCode::kOk, message,
                static_cast<const float *>(ember_tensor_data(prob)),
                ember_tensor_numel(prob), ember_outputs_invalid_ids(*out));
        } else {
          problem =
              compare(r, static_cast<StatusCode>(c), message, nullptr, 0, 0);
        }
        ember_outputs_free(fresh);
        return problem;
      },
      mismatches);
  for (EmberOutputs *o : reused)
    ember_outputs_free(o);
  for (EmberSession *s : sessions)
    ember_session_free(s);
  EXPECT_EQ(mismatches.count.load(), 0) << mismatches.first;
  EXPECT_GE(runs, static_cast<int64_t>(kThreads * usable.size()));
  std::printf("[ concurrency ] %lld C API runs of %zu requests on %d threads\n",
              static_cast<long long>(runs), usable.size(), kThreads);
}

} // namespace
