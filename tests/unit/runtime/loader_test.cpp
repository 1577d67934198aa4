//===- loader_test.cpp - Plan loading and validation ----------------------===//
//
// Every way a plan or its weights can be corrupt, truncated or inconsistent
// gives a clear error (code + message naming the file and the field).
//
//===----------------------------------------------------------------------===//
#include "ember/session.h"
#include "kernels/kernel_registry.h"
#include "plan/ember_plan.pb.h"
#include "plan/loader.h"
#include "plan/plan_format.h"
#include "plan/plan_writer.h"
#include "plan/xxhash64.h"
#include "support/dlrm_model.h"
#include "support/expect_status.h"
#include "support/file_bytes.h"
#include "support/plan_builder.h"
#include "support/temp_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <random>

using namespace ember;
using namespace ember::testing;

namespace {

class LoaderTest : public ::testing::Test {
protected:
  void SetUp() override {
    model_ = makeDlrmModel(7);
    auto path = writeDlrmPlan(model_, dir_.path(), "dlrm");
    ASSERT_TRUE(path.isOk()) << path.status().toString();
    planPath_ = *path;
    ASSERT_TRUE(plan_.ParseFromString(readFileBytes(planPath_)));
  }

  Status load(const std::string &path) {
    auto program = loadProgram(path, LoadOptions(), cpuKernels());
    return program.isOk() ? Status::ok() : program.status();
  }
  /// Rewrites the plan after `mutate` and loads it.
  Status loadMutated(const std::function<void(plan::Plan &)> &mutate) {
    plan::Plan copy = plan_;
    mutate(copy);
    std::string error;
    EXPECT_TRUE(writePlanFile(copy, planPath_, &error)) << error;
    return load(planPath_);
  }
  plan::RankProgram &rank0(plan::Plan &p) { return *p.mutable_programs(0); }
  int instructionIndex(const plan::Plan &p, const std::string &kernel) {
    for (int i = 0; i < p.programs(0).instructions_size(); ++i)
      if (p.programs(0).instructions(i).kernel() == kernel)
        return i;
    return -1;
  }
  std::string weightsPath() const { return dir_.file("dlrm.rank0.weights"); }

  TempDir dir_;
  DlrmModel model_;
  std::string planPath_;
  plan::Plan plan_;
};

TEST(XxHash64, KnownVectors) {
  EXPECT_EQ(XxHash64::hash("", 0), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(XxHash64::hash("a", 1), 0xD24EC4F1A98C6E5BULL);
  EXPECT_EQ(XxHash64::hash("abc", 3), 0x44BC2CF5AD770999ULL);
  // Streaming in odd pieces equals one shot, across the 32-byte stripes.
  std::string data(1000, '\0');
  std::mt19937 rng(1);
  for (char &c : data)
    c = static_cast<char>(rng());
  XxHash64 h;
  for (size_t pos = 0; pos < data.size(); pos += 7)
    h.update(data.data() + pos, std::min<size_t>(7, data.size() - pos));
  EXPECT_EQ(h.digest(), XxHash64::hash(data.data(), data.size()));
}

TEST_F(LoaderTest, ValidPlanLoads) {
  auto program = loadProgram(planPath_, LoadOptions(), cpuKernels());
  ASSERT_TRUE(program.isOk()) << program.status().toString();
  const ModelSignature &sig = (*program)->signature;
  ASSERT_EQ(sig.inputs.size(), 1u);
  EXPECT_EQ(sig.inputs[0].name, "dense");
  EXPECT_EQ(sig.inputs[0].dims, (std::vector<std::string>{"B", "4"}));
  ASSERT_EQ(sig.kjtInputs.size(), 1u);
  EXPECT_EQ(sig.kjtInputs[0].keys, model_.keys);
  ASSERT_EQ(sig.outputs.size(), 1u);
  EXPECT_EQ(sig.outputs[0].name, "prob");
  // Constants are zero-copy views into the mapped weights file.
  EXPECT_EQ((*program)->files.size(), 1u);
}

TEST_F(LoaderTest, TextPlanLoads) {
  auto path = writeDlrmPlan(model_, dir_.path(), "dlrm_text", /*text=*/true);
  ASSERT_TRUE(path.isOk());
  EXPECT_TRUE(load(*path).isOk()) << load(*path).toString();
}

TEST_F(LoaderTest, MissingPlanFile) {
  EXPECT_ERROR(load(dir_.file("nope.plan")), StatusCode::kNotFound,
               "does not exist");
}

TEST_F(LoaderTest, EmptyPlanFile) {
  writeFileBytes(planPath_, "");
  EXPECT_ERROR(load(planPath_), StatusCode::kDataLoss, "empty");
}

TEST_F(LoaderTest, TruncatedPlan) {
  std::string bytes = readFileBytes(planPath_);
  for (size_t keep :
       {bytes.size() - 1, bytes.size() - 9, bytes.size() / 2, size_t{3}}) {
    writeFileBytes(planPath_, bytes.substr(0, keep));
    Status s = load(planPath_);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << keep << ": " << s.toString();
    EXPECT_NE(s.message().find("dlrm.plan"), std::string::npos) << s.message();
  }
}

TEST_F(LoaderTest, RandomBytes) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    std::string bytes(1 + rng() % 400, '\0');
    for (char &c : bytes)
      c = static_cast<char>(rng());
    writeFileBytes(planPath_, bytes);
    Status s = load(planPath_);
    EXPECT_FALSE(s.isOk());
    EXPECT_NE(s.message().find("dlrm.plan"), std::string::npos) << s.message();
  }
}

TEST_F(LoaderTest, FlippedBytesNeverCrash) {
  // Every single-byte corruption is either rejected or still a valid plan.
  std::string bytes = readFileBytes(planPath_);
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    std::string corrupt = bytes;
    corrupt[rng() % corrupt.size()] ^= static_cast<char>(1 + rng() % 255);
    writeFileBytes(planPath_, corrupt);
    Status s = load(planPath_);
    if (!s.isOk()) {
      EXPECT_FALSE(s.message().empty());
    }
  }
}

TEST_F(LoaderTest, NewerVersion) {
  EXPECT_ERROR(loadMutated([](plan::Plan &p) {
                 p.set_format_version(kPlanFormatVersion + 1);
               }),
               StatusCode::kFailedPrecondition,
               "newer than the newest this runtime reads");
}

TEST_F(LoaderTest, MissingEndMarker) {
  plan::Plan copy = plan_;
  copy.clear_end_marker();
  writeFileBytes(planPath_, copy.SerializeAsString());
  EXPECT_ERROR(load(planPath_), StatusCode::kDataLoss, "truncated or corrupt");
}

TEST_F(LoaderTest, TextParseError) {
  std::string path = dir_.file("bad.plan.txt");
  writeFileBytes(path, "format_version: 1\nprograms { rank: zero }\n");
  EXPECT_ERROR(load(path), StatusCode::kInvalidArgument, "line 2");
}

TEST_F(LoaderTest, SlotIndexOutOfRange) {
  int i = instructionIndex(plan_, "linear");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_instructions(i)->set_inputs(0, 999);
               }),
               StatusCode::kInvalidArgument, "refers to slot 999");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_instructions(i)->set_inputs(0, 999);
               }),
               StatusCode::kInvalidArgument,
               "instruction 0 'linear' (bottom_mlp.0)");
  EXPECT_ERROR(
      loadMutated([&](plan::Plan &p) { rank0(p).set_output_slots(0, -5); }),
      StatusCode::kInvalidArgument, "refers to slot -5");
}

TEST_F(LoaderTest, UnknownKernel) {
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_instructions(1)->set_kernel("frobnicate");
               }),
               StatusCode::kNotFound, "unknown kernel 'frobnicate'");
}

TEST_F(LoaderTest, BadAttribute) {
  int i = instructionIndex(plan_, "linear");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_instructions(i)->mutable_attrs(0)->set_s(
                     "swish");
               }),
               StatusCode::kInvalidArgument, "activation");
  int g = instructionIndex(plan_, "grouped_embedding_bag");
  Status s = loadMutated([&](plan::Plan &p) {
    auto *in = rank0(p).mutable_instructions(g);
    for (auto &a : *in->mutable_attrs())
      if (a.name() == "output_width")
        a.set_i(5);
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
  EXPECT_NE(s.message().find("(sparse_arch)"), std::string::npos)
      << s.message();
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 auto *a = rank0(p).mutable_instructions(i)->add_attrs();
                 a->set_name("activation");
                 a->set_s("relu");
               }),
               StatusCode::kInvalidArgument, "given twice");
}

// The kernel contract's attributes (kernels.def): each error names the
// instruction (index, kernel, name), the kernel and the attribute.
TEST_F(LoaderTest, AttributeNotInTheContract) {
  int i = instructionIndex(plan_, "linear");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 auto *a = rank0(p).mutable_instructions(i)->add_attrs();
                 a->set_name("actvation");
                 a->set_s("relu");
               }),
               StatusCode::kInvalidArgument,
               "instruction " + std::to_string(i) +
                   " 'linear' (bottom_mlp.0): kernel 'linear' has no "
                   "attribute 'actvation' (it takes transpose_weight, "
                   "activation)");
}

TEST_F(LoaderTest, AttributeOfTheWrongKind) {
  int i = instructionIndex(plan_, "dot_interaction");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 for (auto &a :
                      *rank0(p).mutable_instructions(i)->mutable_attrs())
                   if (a.name() == "num_features")
                     a.set_s("2");
               }),
               StatusCode::kInvalidArgument,
               "instruction " + std::to_string(i) +
                   " 'dot_interaction' (interaction): attribute "
                   "'num_features' of kernel 'dot_interaction' must be an "
                   "int, the plan gives a string");
}

TEST_F(LoaderTest, RequiredAttributeMissing) {
  int i = instructionIndex(plan_, "dot_interaction");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 auto *attrs =
                     rank0(p).mutable_instructions(i)->mutable_attrs();
                 for (int k = 0; k < attrs->size(); ++k)
                   if (attrs->Get(k).name() == "num_features")
                     attrs->DeleteSubrange(k, 1);
               }),
               StatusCode::kInvalidArgument,
               "instruction " + std::to_string(i) +
                   " 'dot_interaction' (interaction): kernel "
                   "'dot_interaction' needs the attribute 'num_features' (an "
                   "int)");
}

TEST_F(LoaderTest, OptionalAttributesGetTheContractsDefaults) {
  // The plan leaves out linear's transpose_weight and dot_interaction's
  // pair_order: the loaded instructions hold the contract's defaults.
  auto program = loadProgram(planPath_, LoadOptions(), cpuKernels());
  ASSERT_TRUE(program.isOk()) << program.status().toString();
  int linear = instructionIndex(plan_, "linear");
  int dot = instructionIndex(plan_, "dot_interaction");
  const Attributes &l = (*program)->instructions[linear].attrs;
  ASSERT_TRUE(l.getInt("transpose_weight").isOk());
  EXPECT_EQ(*l.getInt("transpose_weight"), 1);
  EXPECT_EQ(*l.getString("activation"), "relu"); // given: kept
  const Attributes &d = (*program)->instructions[dot].attrs;
  ASSERT_TRUE(d.getString("pair_order").isOk());
  EXPECT_EQ(*d.getString("pair_order"), "dlrm");
}

TEST_F(LoaderTest, WrongArity) {
  int i = instructionIndex(plan_, "dot_interaction");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_instructions(i)->add_inputs(0);
               }),
               StatusCode::kInvalidArgument,
               "takes 2 to 2 inputs, the plan gives 3");
}

TEST_F(LoaderTest, UseBeforeDefinitionAndDoubleDefinition) {
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 // The first linear reads the top MLP's output.
                 int last = rank0(p).instructions_size() - 1;
                 int late = rank0(p).instructions(last).outputs(0);
                 rank0(p).mutable_instructions(0)->set_inputs(0, late);
               }),
               StatusCode::kInvalidArgument,
               "before any instruction defines it");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 int first = rank0(p).instructions(0).outputs(0);
                 rank0(p).mutable_instructions(1)->set_outputs(0, first);
               }),
               StatusCode::kInvalidArgument, "already defined");
}

TEST_F(LoaderTest, OutputNeverProduced) {
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_instructions()->RemoveLast();
               }),
               StatusCode::kInvalidArgument, "never produced");
}

TEST_F(LoaderTest, InconsistentShapes) {
  EXPECT_ERROR(
      loadMutated([&](plan::Plan &p) {
        p.mutable_signature()->mutable_inputs(0)->mutable_shape(1)->set_size(5);
      }),
      StatusCode::kInvalidArgument, "is declared float32[B, 5] but its slot");
  EXPECT_ERROR(
      loadMutated([&](plan::Plan &p) {
        p.mutable_signature()->mutable_outputs(0)->set_dtype(plan::INT64);
      }),
      StatusCode::kInvalidArgument, "output 0 'prob' is declared int64");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_constants(0)->set_nbytes(12);
               }),
               StatusCode::kInvalidArgument,
               "has nbytes 12 but float32[8, 4] needs 128");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 // A KJT lengths slot must be [F*B].
                 int lengths = rank0(p).kjt_input_slots(0).lengths();
                 rank0(p).mutable_slots(lengths)->mutable_shape(0)->set_factor(
                     2);
               }),
               StatusCode::kInvalidArgument, "must be int64[3*B]");
}

TEST_F(LoaderTest, BagOffsetsMustNameAnOffsetsInput) {
  // The test plan's input 0 is 'dense' [B, 2]: it cannot be bag offsets.
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 p.mutable_signature()->mutable_inputs(0)->set_bag_offsets(
                     "nothing");
               }),
               StatusCode::kInvalidArgument,
               "bag_offsets names 'nothing', which is not a 1-D offsets input");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 auto *inputs = p.mutable_signature()->mutable_inputs();
                 inputs->Mutable(0)->set_bag_offsets(inputs->Get(0).name());
               }),
               StatusCode::kInvalidArgument,
               "which is not a 1-D offsets input");
}

TEST_F(LoaderTest, HugeSizes) {
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 int slot = rank0(p).constants(0).slot();
                 auto *shape = rank0(p).mutable_slots(slot)->mutable_shape();
                 shape->Mutable(0)->set_size(int64_t{1} << 40);
                 shape->Mutable(1)->set_size(int64_t{1} << 40);
               }),
               StatusCode::kInvalidArgument, "too large");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_slots(0)->mutable_shape(1)->set_size(
                     int64_t{1} << 62);
               }),
               StatusCode::kInvalidArgument, "has size");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 auto *shape = rank0(p).mutable_slots(0)->mutable_shape();
                 for (int i = 0; i < 9; ++i)
                   shape->Add()->set_size(1);
               }),
               StatusCode::kInvalidArgument, "more than the maximum");
}

TEST_F(LoaderTest, BadDType) {
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_slots(3)->set_dtype(
                     static_cast<plan::DataType>(77));
               }),
               StatusCode::kInvalidArgument, "unknown dtype 77");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_slots(3)->set_dtype(
                     plan::DATA_TYPE_UNSPECIFIED);
               }),
               StatusCode::kInvalidArgument, "has no dtype");
}

TEST_F(LoaderTest, WeightsFileTooShort) {
  std::string bytes = readFileBytes(weightsPath());
  writeFileBytes(weightsPath(), bytes.substr(0, bytes.size() - 10));
  EXPECT_ERROR(load(planPath_), StatusCode::kDataLoss,
               "bytes but the plan expects");
}

TEST_F(LoaderTest, WeightsChecksumMismatch) {
  std::string bytes = readFileBytes(weightsPath());
  bytes[bytes.size() / 2] ^= 0x40;
  writeFileBytes(weightsPath(), bytes);
  EXPECT_ERROR(load(planPath_), StatusCode::kDataLoss, "checksum");
  // Without verification the same file loads (size still matches).
  LoadOptions noVerify;
  noVerify.verifyChecksums = false;
  EXPECT_TRUE(loadProgram(planPath_, noVerify, cpuKernels()).isOk());
}

TEST_F(LoaderTest, WeightsFileMissing) {
  std::filesystem::remove(weightsPath());
  EXPECT_ERROR(load(planPath_), StatusCode::kNotFound, "dlrm.rank0.weights");
}

TEST_F(LoaderTest, WeightsPathEscapes) {
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_weight_files(0)->set_path("../x.weights");
               }),
               StatusCode::kInvalidArgument, "must not contain '..'");
}

TEST_F(LoaderTest, ConstantPastEndOfFile) {
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 uint64_t size = p.programs(0).weight_files(0).size();
                 rank0(p).mutable_constants(0)->set_offset((size / 64) * 64);
               }),
               StatusCode::kDataLoss, "past the end");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_constants(0)->set_offset(~uint64_t{63});
               }),
               StatusCode::kDataLoss, "past the end");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_constants(0)->set_offset(8);
               }),
               StatusCode::kInvalidArgument, "not a multiple of 64");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_constants(0)->set_file(3);
               }),
               StatusCode::kInvalidArgument, "refers to weights file 3");
}

TEST_F(LoaderTest, EventsAndStreams) {
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).set_num_events(1);
                 rank0(p).mutable_instructions(1)->add_wait_events(0);
               }),
               StatusCode::kInvalidArgument,
               "which no earlier instruction records");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 rank0(p).mutable_instructions(1)->set_stream(2);
               }),
               StatusCode::kInvalidArgument, "stream 2");
  Status s = loadMutated([&](plan::Plan &p) {
    rank0(p).set_num_events(1);
    rank0(p).set_num_streams(2);
    rank0(p).mutable_instructions(0)->add_record_events(0);
    rank0(p).mutable_instructions(1)->set_stream(1);
    rank0(p).mutable_instructions(1)->add_wait_events(0);
  });
  EXPECT_TRUE(s.isOk()) << s.toString();
}

TEST_F(LoaderTest, MultiRankPlanIsRefused) {
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 p.set_world_size(2);
                 *p.add_programs() = p.programs(0);
                 p.mutable_programs(1)->set_rank(1);
                 auto *c = p.add_collectives();
                 c->set_kind(plan::CollectiveDescriptor::ALL_TO_ALL);
                 c->add_group_ranks(0);
                 c->add_group_ranks(1);
               }),
               StatusCode::kFailedPrecondition,
               "the plan is for 2 rank(s) but this is a single-rank session");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) {
                 auto *c = p.add_collectives();
                 c->set_kind(plan::CollectiveDescriptor::ALL_GATHER);
                 c->add_group_ranks(0);
                 c->add_group_ranks(4);
               }),
               StatusCode::kInvalidArgument, "outside the world of 1");
  EXPECT_ERROR(loadMutated([&](plan::Plan &p) { p.set_world_size(3); }),
               StatusCode::kInvalidArgument,
               "world_size is 3 but the plan has 1");
}

TEST_F(LoaderTest, SessionLoadReportsThePlan) {
  auto session = Session::load(dir_.file("absent.plan"));
  ASSERT_FALSE(session.isOk());
  EXPECT_EQ(session.status().code(), StatusCode::kNotFound);
  EXPECT_NE(session.status().message().find("absent.plan"), std::string::npos);
}

} // namespace
