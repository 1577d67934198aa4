//===- c_api_test.cpp - The C API on the test DLRM ------------------------===//
#include "comm/comm_options.h"
#include "ember/c_api.h"
#include "ember/session.h"
#include "support/dlrm_model.h"
#include "support/file_bytes.h"
#include "support/multirank_harness.h"
#include "support/sharded_model.h"
#include "support/temp_dir.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace ember::testing;

namespace {

/// Frees a status at scope exit.
struct StatusHolder {
  EmberStatus *status = nullptr;
  ~StatusHolder() { ember_status_free(status); }
  EmberStatus **out() {
    ember_status_free(status);
    status = nullptr;
    return &status;
  }
  std::string message() const { return ember_status_message(status); }
};

/// Sets `batch` in `inputs` as the C API takes it: "dense" [rows,
/// denseWidth] and the KJT "sparse" over `keys`, views of the batch's
/// vectors. The tensor handles are freed at once (the inputs keep views of
/// their own). A call that is refused fails the test.
template <class Batch>
void setBatchInputs(EmberInputs *inputs, Batch &batch, int64_t denseWidth,
                    const std::vector<std::string> &keys) {
  StatusHolder st;
  int64_t denseDims[2] = {batch.batch, denseWidth};
  int64_t nValues = static_cast<int64_t>(batch.values.size());
  int64_t nLengths = static_cast<int64_t>(batch.lengths.size());
  EmberTensor *dense = nullptr, *values = nullptr, *lengths = nullptr;
  ASSERT_EQ(ember_tensor_create_view(EMBER_FLOAT32, denseDims, 2,
                                     batch.dense.data(), &dense, st.out()),
            EMBER_OK)
      << st.message();
  ASSERT_EQ(ember_tensor_create_view(EMBER_INT64, &nValues, 1,
                                     batch.values.data(), &values, st.out()),
            EMBER_OK)
      << st.message();
  ASSERT_EQ(ember_tensor_create_view(EMBER_INT64, &nLengths, 1,
                                     batch.lengths.data(), &lengths, st.out()),
            EMBER_OK)
      << st.message();
  std::vector<const char *> keyNames;
  for (const std::string &k : keys)
    keyNames.push_back(k.c_str());
  ASSERT_EQ(ember_inputs_set_tensor(inputs, "dense", dense, st.out()), EMBER_OK)
      << st.message();
  ASSERT_EQ(ember_inputs_set_kjt(inputs, "sparse", keyNames.data(),
                                 keyNames.size(), values, lengths, nullptr,
                                 st.out()),
            EMBER_OK)
      << st.message();
  ember_tensor_free(dense);
  ember_tensor_free(values);
  ember_tensor_free(lengths);
}

class CApiTest : public ::testing::Test {
protected:
  void SetUp() override {
    model_ = makeDlrmModel(23);
    auto path = writeDlrmPlan(model_, dir_.path(), "dlrm");
    ASSERT_TRUE(path.isOk());
    planPath_ = *path;
  }
  TempDir dir_;
  DlrmModel model_;
  std::string planPath_;
};

TEST_F(CApiTest, RunsTheDlrmLikeTheReference) {
  StatusHolder st;
  EmberSessionOptions *options = ember_session_options_create();
  ASSERT_NE(options, nullptr);
  EXPECT_EQ(ember_session_options_set_threads(options, 2, st.out()), EMBER_OK);
  EXPECT_EQ(ember_session_options_set_bounds_check(
                options, EMBER_BOUNDS_WARNING, st.out()),
            EMBER_OK);
  EmberSession *session = nullptr;
  ASSERT_EQ(
      ember_session_create(planPath_.c_str(), options, &session, st.out()),
      EMBER_OK)
      << st.message();
  ember_session_options_free(options);
  ASSERT_EQ(ember_session_num_inputs(session), 2u);
  EXPECT_STREQ(ember_session_input_name(session, 0), "dense");
  EXPECT_EQ(ember_session_input_is_kjt(session, 0), 0);
  EXPECT_STREQ(ember_session_input_name(session, 1), "sparse");
  EXPECT_EQ(ember_session_input_is_kjt(session, 1), 1);
  EXPECT_EQ(ember_session_input_name(session, 2), nullptr);
  ASSERT_EQ(ember_session_num_outputs(session), 1u);
  EXPECT_STREQ(ember_session_output_name(session, 0), "prob");

  EmberOutputs *outputs = nullptr;
  for (int64_t b : {1, 13}) {
    DlrmBatch batch = makeDlrmBatch(model_, b, 77 + b);
    EmberInputs *inputs = ember_inputs_create();
    ASSERT_NO_FATAL_FAILURE(
        setBatchInputs(inputs, batch, DlrmModel::kDenseIn, model_.keys));
    ASSERT_EQ(ember_session_run(session, inputs, &outputs, st.out()), EMBER_OK)
        << st.message();
    ember_inputs_free(inputs);

    ASSERT_EQ(ember_outputs_count(outputs), 1u);
    EXPECT_STREQ(ember_outputs_name(outputs, 0), "prob");
    EXPECT_EQ(ember_outputs_invalid_ids(outputs), 0);
    const EmberTensor *prob = nullptr;
    ASSERT_EQ(ember_outputs_get(outputs, "prob", &prob, st.out()), EMBER_OK);
    EXPECT_EQ(ember_tensor_dtype(prob), EMBER_FLOAT32);
    ASSERT_EQ(ember_tensor_rank(prob), 2u);
    EXPECT_EQ(ember_tensor_dim(prob, 0), b);
    EXPECT_EQ(ember_tensor_dim(prob, 1), 1);
    EXPECT_EQ(ember_tensor_dim(prob, 2), -1);
    EXPECT_EQ(ember_tensor_nbytes(prob), static_cast<size_t>(b) * 4);
    std::vector<float> expected = referenceDlrm(model_, batch);
    const float *p = static_cast<const float *>(ember_tensor_data(prob));
    for (int64_t i = 0; i < b; ++i)
      EXPECT_NEAR(p[i], expected[i], 1e-5f + 1e-4f * std::fabs(expected[i]));

    EXPECT_EQ(ember_outputs_get(outputs, "nope", &prob, st.out()),
              EMBER_NOT_FOUND);
    EXPECT_EQ(prob, nullptr);
    EXPECT_NE(st.message().find("no output 'nope'; the outputs are: prob"),
              std::string::npos)
        << st.message();
  }
  ember_outputs_free(outputs);
  ember_session_free(session);
}

TEST_F(CApiTest, QuantizedSumsOption) {
  StatusHolder st;
  EmberSessionOptions *options = ember_session_options_create();
  EXPECT_EQ(
      ember_session_options_set_quantized_sums(options, "exact", st.out()),
      EMBER_INVALID_ARGUMENT);
  EXPECT_NE(st.message().find("'exact' is not auto, fast or fbgemm"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(
      ember_session_options_set_quantized_sums(options, nullptr, st.out()),
      EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_session_options_set_quantized_sums(nullptr, "fast", st.out()),
            EMBER_INVALID_ARGUMENT);
  for (const char *order : {"fbgemm", "fast", "auto"}) {
    ASSERT_EQ(
        ember_session_options_set_quantized_sums(options, order, st.out()),
        EMBER_OK)
        << order;
    EmberSession *session = nullptr;
    ASSERT_EQ(
        ember_session_create(planPath_.c_str(), options, &session, st.out()),
        EMBER_OK)
        << order << ": " << st.message();
    ember_session_free(session);
  }
  ember_session_options_free(options);
}

TEST_F(CApiTest, OverlapAndTraceOptions) {
  StatusHolder st;
  EmberSessionOptions *options = ember_session_options_create();
  EXPECT_EQ(ember_session_options_set_overlap(options, "sometimes", st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(st.message().find("not auto, streams or off"), std::string::npos)
      << st.message();
  EXPECT_EQ(ember_session_options_set_overlap(options, nullptr, st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_session_options_set_overlap(nullptr, "off", st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_session_options_set_record_trace(nullptr, 1, st.out()),
            EMBER_INVALID_ARGUMENT);
  ASSERT_EQ(ember_session_options_set_overlap(options, "streams", st.out()),
            EMBER_OK);
  EmberSession *plain = nullptr;
  ASSERT_EQ(ember_session_create(planPath_.c_str(), options, &plain, st.out()),
            EMBER_OK)
      << st.message();
  // Not recording: nothing to write, and nothing written.
  std::string trace = dir_.file("trace.json");
  EXPECT_EQ(ember_session_write_trace(plain, trace.c_str(), st.out()),
            EMBER_FAILED_PRECONDITION);
  EXPECT_NE(st.message().find("does not record"), std::string::npos)
      << st.message();
  ember_session_free(plain);
  ASSERT_EQ(ember_session_options_set_record_trace(options, 1, st.out()),
            EMBER_OK);
  EmberSession *session = nullptr;
  ASSERT_EQ(
      ember_session_create(planPath_.c_str(), options, &session, st.out()),
      EMBER_OK)
      << st.message();
  ember_session_options_free(options);

  DlrmBatch batch = makeDlrmBatch(model_, 5, 3);
  EmberInputs *inputs = ember_inputs_create();
  ASSERT_NO_FATAL_FAILURE(
      setBatchInputs(inputs, batch, DlrmModel::kDenseIn, model_.keys));
  EmberOutputs *outputs = nullptr;
  ASSERT_EQ(ember_session_run(session, inputs, &outputs, st.out()), EMBER_OK)
      << st.message();
  ember_inputs_free(inputs);
  ember_outputs_free(outputs);

  std::string missing = dir_.file("missing/trace.json");
  EXPECT_EQ(ember_session_write_trace(session, missing.c_str(), st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(st.message().find("ember_session_write_trace"), std::string::npos)
      << st.message();
  EXPECT_EQ(ember_session_write_trace(session, nullptr, st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_session_write_trace(nullptr, trace.c_str(), st.out()),
            EMBER_INVALID_ARGUMENT);
  ASSERT_EQ(ember_session_write_trace(session, trace.c_str(), st.out()),
            EMBER_OK)
      << st.message();
  std::string json = readFileBytes(trace);
  EXPECT_EQ(json.rfind("{\"traceEvents\": [", 0), 0u) << json;
  EXPECT_NE(json.find("\"cat\":\"compute\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"kind\": \"measured\", \"ranks\": 1"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"overlap\": \"off\""), std::string::npos)
      << json; // one rank, one stream: program order
  ember_session_free(session);
}

TEST_F(CApiTest, DeviceOption) {
  StatusHolder st;
  EmberSessionOptions *options = ember_session_options_create();
  EXPECT_EQ(ember_session_options_set_device(options, "gpu", st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(st.message().find("not cpu, cuda or cuda:N"), std::string::npos)
      << st.message();
  EXPECT_EQ(ember_session_options_set_device(options, nullptr, st.out()),
            EMBER_INVALID_ARGUMENT);
  ASSERT_EQ(ember_session_options_set_device(options, "cuda:0", st.out()),
            EMBER_OK);
  // The test plan is compiled for the CPU: a CUDA session refuses it (with
  // or without a GPU, and without the CUDA backend it is Unimplemented).
  EmberSession *session = nullptr;
  EmberStatusCode code =
      ember_session_create(planPath_.c_str(), options, &session, st.out());
  EXPECT_TRUE(code == EMBER_FAILED_PRECONDITION || code == EMBER_UNIMPLEMENTED)
      << st.message();
  EXPECT_EQ(session, nullptr);
  ember_session_options_free(options);
}

TEST_F(CApiTest, ErrorsAreStatusesNotCrashes) {
  StatusHolder st;
  EmberSession *session = reinterpret_cast<EmberSession *>(0x1);
  EXPECT_EQ(ember_session_create(dir_.file("absent.plan").c_str(), nullptr,
                                 &session, st.out()),
            EMBER_NOT_FOUND);
  EXPECT_EQ(session, nullptr);
  EXPECT_NE(st.message().find("absent.plan"), std::string::npos)
      << st.message();
  EXPECT_EQ(ember_status_code(st.status), EMBER_NOT_FOUND);
  EXPECT_STREQ(ember_status_code_name(EMBER_NOT_FOUND), "NotFound");

  EXPECT_EQ(ember_session_create(nullptr, nullptr, &session, st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(st.message().find("plan_path is NULL"), std::string::npos);
  EXPECT_EQ(ember_session_create(planPath_.c_str(), nullptr, nullptr, st.out()),
            EMBER_INVALID_ARGUMENT);
  // A NULL status pointer is allowed: only the code comes back.
  EXPECT_EQ(ember_session_create(nullptr, nullptr, &session, nullptr),
            EMBER_INVALID_ARGUMENT);

  EmberTensor *t = nullptr;
  int64_t dims[2] = {2, -3};
  float data[6];
  EXPECT_EQ(
      ember_tensor_create_view(EMBER_FLOAT32, dims, 2, data, &t, st.out()),
      EMBER_INVALID_ARGUMENT);
  EXPECT_NE(st.message().find("negative dimension"), std::string::npos)
      << st.message();
  EXPECT_EQ(ember_tensor_create_view(static_cast<EmberDType>(42), dims, 1, data,
                                     &t, st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(
      ember_tensor_create_view(EMBER_FLOAT32, nullptr, 2, data, &t, st.out()),
      EMBER_INVALID_ARGUMENT);
  dims[1] = 3;
  EXPECT_EQ(
      ember_tensor_create_view(EMBER_FLOAT32, dims, 2, nullptr, &t, st.out()),
      EMBER_INVALID_ARGUMENT);
  int64_t many[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(
      ember_tensor_create_view(EMBER_FLOAT32, many, 9, data, &t, st.out()),
      EMBER_INVALID_ARGUMENT);

  ASSERT_EQ(
      ember_session_create(planPath_.c_str(), nullptr, &session, st.out()),
      EMBER_OK);
  EmberInputs *inputs = ember_inputs_create();
  EmberOutputs *outputs = nullptr;
  EXPECT_EQ(ember_session_run(nullptr, inputs, &outputs, st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_session_run(session, nullptr, &outputs, st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_session_run(session, inputs, nullptr, st.out()),
            EMBER_INVALID_ARGUMENT);
  // Missing inputs.
  EXPECT_EQ(ember_session_run(session, inputs, &outputs, st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(st.message().find("missing input"), std::string::npos)
      << st.message();
  EXPECT_EQ(ember_outputs_count(outputs), 0u);

  ASSERT_EQ(
      ember_tensor_create_view(EMBER_FLOAT32, dims, 2, data, &t, st.out()),
      EMBER_OK);
  EXPECT_EQ(ember_inputs_set_tensor(inputs, nullptr, t, st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_inputs_set_tensor(nullptr, "x", t, st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_inputs_set_tensor(inputs, "x", nullptr, st.out()),
            EMBER_INVALID_ARGUMENT);
  const char *keys[] = {"f0", nullptr};
  EXPECT_EQ(
      ember_inputs_set_kjt(inputs, "sparse", keys, 2, t, t, nullptr, st.out()),
      EMBER_INVALID_ARGUMENT);
  EXPECT_NE(st.message().find("keys[1] is NULL"), std::string::npos)
      << st.message();
  keys[1] = "f1";
  EXPECT_EQ(
      ember_inputs_set_kjt(inputs, "sparse", keys, 2, t, t, nullptr, st.out()),
      EMBER_INVALID_ARGUMENT); // float32 [2, 3] values
  EXPECT_NE(st.message().find(
                "input 'sparse': KeyedJaggedTensor: values must be rank 1"),
            std::string::npos)
      << st.message();
  ASSERT_EQ(ember_inputs_set_tensor(inputs, "dnse", t, st.out()), EMBER_OK);
  EXPECT_EQ(ember_session_run(session, inputs, &outputs, st.out()),
            EMBER_NOT_FOUND);
  EXPECT_NE(st.message().find("unknown input 'dnse'"), std::string::npos)
      << st.message();

  // Accessors tolerate NULL.
  EXPECT_EQ(ember_tensor_rank(nullptr), 0u);
  EXPECT_EQ(ember_tensor_data(nullptr), nullptr);
  EXPECT_EQ(ember_outputs_name(nullptr, 0), nullptr);
  EXPECT_EQ(ember_session_num_inputs(nullptr), 0u);
  EXPECT_STREQ(ember_status_message(nullptr), "");
  const EmberTensor *out = nullptr;
  EXPECT_EQ(ember_outputs_get(nullptr, "prob", &out, st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_session_options_set_threads(nullptr, 1, st.out()),
            EMBER_INVALID_ARGUMENT);
  EmberSessionOptions *options = ember_session_options_create();
  EXPECT_EQ(ember_session_options_set_bounds_check(
                options, static_cast<EmberBoundsCheck>(9), st.out()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_session_options_set_threads(options, -1, st.out()),
            EMBER_INVALID_ARGUMENT);
  ember_session_options_free(options);
  ember_tensor_free(t);
  ember_inputs_free(inputs);
  ember_outputs_free(outputs);
  ember_session_free(session);
  // Freeing NULL is fine.
  ember_session_free(nullptr);
  ember_tensor_free(nullptr);
  ember_status_free(nullptr);
}

} // namespace

// --- multi-rank --------------------------------------------------------------

TEST(CApiMultiRankTest, TwoRanksEachComputeTheirRows) {
  if (!ember::haveCommunicatorBackend())
    GTEST_SKIP() << "this build has no Gloo (EMBER_ENABLE_GLOO=OFF)";
  TempDir dir;
  ShardedTestModel m = makeTableWiseTestModel(5);
  auto single = writeSingleRankTestPlan(m, dir.path(), "single");
  auto sharded =
      writeShardedTestPlan(m, TestSharding::kTableWise, 2, dir.path(), "tw2");
  ASSERT_TRUE(single.isOk() && sharded.isOk());
  const int64_t batch = 5, F = static_cast<int64_t>(m.keys.size());
  ShardedTestBatch global = makeShardedTestBatch(m, batch, 3);
  // The reference: one rank, the C++ API.
  auto one = ember::Session::load(*single);
  ASSERT_TRUE(one.isOk());
  ember::RunInputs in;
  in.set("dense", ember::Tensor::view(global.dense.data(),
                                      ember::DType::kFloat32, {batch, 3}));
  in.set("sparse",
         *ember::KeyedJaggedTensor::fromLengths(
             m.keys,
             ember::Tensor::view(global.values.data(), ember::DType::kInt64,
                                 {static_cast<int64_t>(global.values.size())}),
             ember::Tensor::view(global.lengths.data(), ember::DType::kInt64,
                                 {F * batch})));
  auto expected = (*one)->run(in);
  ASSERT_TRUE(expected.isOk()) << expected.status().toString();
  const ember::Tensor &want = *expected->find("pooled");

  {
    StatusHolder st;
    EmberSessionOptions *options = ember_session_options_create();
    EXPECT_EQ(ember_session_options_set_rank(options, 2, 2, st.out()),
              EMBER_INVALID_ARGUMENT);
    EXPECT_EQ(
        ember_session_options_set_collective_timeout(options, -1, st.out()),
        EMBER_INVALID_ARGUMENT);
    EXPECT_EQ(ember_session_options_set_rendezvous(options, nullptr, st.out()),
              EMBER_INVALID_ARGUMENT);
    EmberSession *session = nullptr;
    EXPECT_EQ(
        ember_session_create(sharded->c_str(), options, &session, st.out()),
        EMBER_FAILED_PRECONDITION);
    EXPECT_NE(st.message().find("single-rank session"), std::string::npos)
        << st.message();
    ember_session_options_free(options);
  }

  runOnRankThreads(2, [&](int r) {
    StatusHolder st;
    EmberSessionOptions *options = ember_session_options_create();
    ASSERT_EQ(ember_session_options_set_rank(options, r, 2, st.out()),
              EMBER_OK);
    std::string rendezvous = "file:" + dir.file("store");
    ASSERT_EQ(ember_session_options_set_rendezvous(options, rendezvous.c_str(),
                                                   st.out()),
              EMBER_OK);
    ASSERT_EQ(
        ember_session_options_set_collective_timeout(options, 30, st.out()),
        EMBER_OK);
    EmberSession *session = nullptr;
    ASSERT_EQ(
        ember_session_create(sharded->c_str(), options, &session, st.out()),
        EMBER_OK)
        << st.message();
    ember_session_options_free(options);
    const RankRows rows = rankRows(batch, 2, r); // rows 0-2, then 3-4
    ShardedTestBatch local = rankSlice(m, global, 2, r);
    EmberInputs *inputs = ember_inputs_create();
    ASSERT_NO_FATAL_FAILURE(
        setBatchInputs(inputs, local, ShardedTestModel::kDenseWidth, m.keys));
    EmberOutputs *outputs = nullptr;
    ASSERT_EQ(ember_session_run(session, inputs, &outputs, st.out()), EMBER_OK)
        << st.message();
    const EmberTensor *pooled = nullptr;
    ASSERT_EQ(ember_outputs_get(outputs, "pooled", &pooled, st.out()),
              EMBER_OK);
    ASSERT_EQ(ember_tensor_dim(pooled, 0), rows.size);
    const int64_t width = ember_tensor_dim(pooled, 1);
    const float *got = static_cast<const float *>(ember_tensor_data(pooled));
    for (int64_t i = 0; i < rows.size * width; ++i)
      EXPECT_EQ(got[i], want.data<float>()[rows.begin * width + i]) << i;
    ember_outputs_free(outputs);
    ember_inputs_free(inputs);
    ember_session_free(session);
  });
}
