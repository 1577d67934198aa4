//===- sequence_all_to_all_test.cpp - sequence_all_to_all on 1-3 ranks ----===//
//
// The output dist of sequence embeddings against a naive reference over
// every rank's inputs: each rank is a thread with its own Gloo communicator
// (TCP on loopback, rendezvous through a file store), as in
// collective_test.cpp. Random data with fixed seeds: uneven batches (a rank
// with batch 0), empty bags, key_splits with zeros (positions without keys,
// which send nothing back), float32/float16/bfloat16 rows with trailing
// dims, int32/int64 lengths; a single-rank session (no communicator) and a
// group of one inside a larger world; and every bad input.
//
//===----------------------------------------------------------------------===//
#include "comm/collective_info.h"
#include "comm/comm_options.h"
#include "ember/dtype.h"
#include "support/temp_dir.h"
#include "support/collective_ranks.h"
#include "support/test_kernel_context.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <thread>

using namespace ember;
using namespace ember::testing;

namespace {

constexpr const char *kKernel = "sequence_all_to_all";

CollectiveInfo groupInfo(std::vector<int> ranks, int rank) {
  CollectiveInfo info;
  info.kind = CollectiveInfo::Kind::kAllToAll;
  info.groupRanks = std::move(ranks);
  for (size_t i = 0; i < info.groupRanks.size(); ++i)
    if (info.groupRanks[i] == rank)
      info.position = static_cast<int>(i);
  info.name = "seq_dist";
  return info;
}

CollectiveInfo worldInfo(int world, int rank) {
  std::vector<int> all;
  for (int r = 0; r < world; ++r)
    all.push_back(r);
  return groupInfo(all, rank);
}

// --- reference ---------------------------------------------------------------

/// One rank's inputs: its local KJT's lengths (key-major [K * batch]) and
/// the rows it sends back (`rowBytes` bytes each, ordered by destination).
struct RankInput {
  int64_t batch = 0;
  std::vector<int64_t> lengths;
  std::vector<uint8_t> rows;
  int64_t numRows = 0;
};

/// Rows rank r expects from position p: its lengths over p's keys.
int64_t expected(const RankInput &in, const std::vector<int64_t> &splits,
                 int p) {
  int64_t first = 0;
  for (int i = 0; i < p; ++i)
    first += splits[i];
  int64_t sum = 0;
  for (int64_t k = first; k < first + splits[p]; ++k)
    for (int64_t b = 0; b < in.batch; ++b)
      sum += in.lengths[k * in.batch + b];
  return sum;
}

/// Random inputs for `world` ranks: every rank's rows hold exactly what the
/// others expect from it, with random bytes.
std::vector<RankInput> randomInputs(std::mt19937 &rng,
                                    const std::vector<int64_t> &batches,
                                    const std::vector<int64_t> &splits,
                                    size_t rowBytes) {
  const int w = static_cast<int>(batches.size());
  int64_t keys = 0;
  for (int64_t s : splits)
    keys += s;
  std::vector<RankInput> in(w);
  for (int r = 0; r < w; ++r) {
    in[r].batch = batches[r];
    for (int64_t i = 0; i < keys * batches[r]; ++i)
      in[r].lengths.push_back(rng() % 3 == 0 ? 0 : rng() % 5); // empty bags
  }
  for (int q = 0; q < w; ++q) {
    for (int r = 0; r < w; ++r)
      in[q].numRows += expected(in[r], splits, q);
    in[q].rows.resize(in[q].numRows * rowBytes);
    for (uint8_t &b : in[q].rows)
      b = static_cast<uint8_t>(rng());
  }
  return in;
}

/// What rank r receives: from each position q in order, the block of q's
/// rows that follows the blocks q sends to ranks before r.
std::vector<uint8_t> reference(const std::vector<RankInput> &in,
                               const std::vector<int64_t> &splits, int r,
                               size_t rowBytes) {
  std::vector<uint8_t> out;
  for (int q = 0; q < static_cast<int>(in.size()); ++q) {
    int64_t first = 0;
    for (int p = 0; p < r; ++p)
      first += expected(in[p], splits, q);
    int64_t n = expected(in[r], splits, q);
    out.insert(out.end(), in[q].rows.begin() + first * rowBytes,
               in[q].rows.begin() + (first + n) * rowBytes);
  }
  return out;
}

Tensor lengthsTensor(const std::vector<int64_t> &lengths, DType dtype,
                     std::vector<int32_t> &storage32) {
  const int64_t n = static_cast<int64_t>(lengths.size());
  if (dtype == DType::kInt64)
    return Tensor::view(const_cast<int64_t *>(lengths.data()), DType::kInt64,
                        {n});
  storage32.assign(lengths.begin(), lengths.end());
  return Tensor::view(storage32.data(), DType::kInt32, {n});
}

std::vector<uint8_t> bytesOf(const Tensor &t) {
  const uint8_t *p = static_cast<const uint8_t *>(t.data());
  return std::vector<uint8_t>(p, p + t.nbytes());
}

/// [n, dims...].
Shape withRows(int64_t n, const std::vector<int64_t> &dims) {
  std::vector<int64_t> all = {n};
  all.insert(all.end(), dims.begin(), dims.end());
  return *Shape::fromDims(all.data(), all.size());
}

struct Layout {
  DType dtype;
  std::vector<int64_t> rowDims; // trailing dims of rows
};

class SequenceAllToAllTest : public RankCountTest {};

TEST_P(SequenceAllToAllTest, MatchesReference) {
  const int w = world();
  std::vector<std::vector<int64_t>> splitCases;
  std::vector<int64_t> batches;
  switch (w) {
  case 1:
    splitCases = {{1}, {4}};
    batches = {5};
    break;
  case 2:
    splitCases = {{1, 1}, {2, 3}, {0, 3}, {2, 0}};
    batches = {3, 0};
    break;
  default:
    splitCases = {{1, 1, 1}, {2, 0, 3}, {0, 0, 2}, {1, 3, 0}};
    batches = {2, 0, 4};
    break;
  }
  const Layout layouts[] = {{DType::kFloat32, {4}},
                            {DType::kFloat16, {2, 3}},
                            {DType::kBFloat16, {5}},
                            {DType::kFloat32, {}}};
  int seed = 100 * w;
  for (const std::vector<int64_t> &splits : splitCases)
    for (const Layout &layout : layouts)
      for (DType lengthType : {DType::kInt32, DType::kInt64}) {
        int64_t rowElements = 1;
        for (int64_t d : layout.rowDims)
          rowElements *= d;
        const size_t rowBytes = rowElements * dtypeSize(layout.dtype);
        std::mt19937 rng(++seed);
        std::vector<RankInput> in =
            randomInputs(rng, batches, splits, rowBytes);
        SCOPED_TRACE("key_splits[0] " + std::to_string(splits[0]) + " rows " +
                     std::string(dtypeName(layout.dtype)) + " lengths " +
                     std::string(dtypeName(lengthType)));
        runRanks(w, 30, [&](int r, Communicator *comm) {
          CollectiveContext ctx(worldInfo(w, r), comm);
          Shape rowShape = withRows(in[r].numRows, layout.rowDims);
          std::vector<int32_t> l32;
          ctx.addInput(Tensor::view(in[r].rows.data(), layout.dtype, rowShape))
              .addInput(lengthsTensor(in[r].lengths, lengthType, l32));
          ctx.setNumOutputs(1);
          ctx.attrs().set("key_splits", splits);
          Status s = runKernel(kKernel, ctx);
          ASSERT_TRUE(s.isOk()) << "rank " << r << ": " << s.toString();
          std::vector<uint8_t> want = reference(in, splits, r, rowBytes);
          const Tensor &out = ctx.output(0);
          Shape outShape = withRows(want.size() / rowBytes, layout.rowDims);
          EXPECT_EQ(out.dtype(), layout.dtype) << "rank " << r;
          EXPECT_EQ(out.shape(), outShape) << "rank " << r;
          EXPECT_EQ(bytesOf(out), want) << "rank " << r;
        });
      }
}

INSTANTIATE_TEST_SUITE_P(Ranks, SequenceAllToAllTest,
                         ::testing::Values(1, 2, 3), rankCountName);

// A rank with a lot of rows and uneven keys: the blocks are where the
// reference says, bit for bit, on float32 values.
TEST(SequenceAllToAll, ManyRowsOnThreeRanks) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "no Gloo";
  const std::vector<int64_t> splits = {3, 1, 4}, batches = {64, 17, 40};
  std::mt19937 rng(7);
  std::vector<RankInput> in = randomInputs(rng, batches, splits, 16 * 4);
  runRanks(3, 30, [&](int r, Communicator *comm) {
    CollectiveContext ctx(worldInfo(3, r), comm);
    ctx.addInput(Tensor::view(in[r].rows.data(), DType::kFloat32,
                              {in[r].numRows, 16}))
        .addInput(Tensor::view(in[r].lengths.data(), DType::kInt64,
                               {static_cast<int64_t>(in[r].lengths.size())}));
    ctx.setNumOutputs(1);
    ctx.attrs().set("key_splits", splits);
    Status s = runKernel(kKernel, ctx);
    ASSERT_TRUE(s.isOk()) << "rank " << r << ": " << s.toString();
    EXPECT_EQ(bytesOf(ctx.output(0)), reference(in, splits, r, 64))
        << "rank " << r;
  });
}

// A group of one inside a world of two: each rank copies its own rows,
// without touching the communicator.
TEST(SequenceAllToAll, GroupOfOneCopiesLocally) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "no Gloo";
  std::mt19937 rng(8);
  std::vector<std::vector<RankInput>> in;
  for (int r = 0; r < 2; ++r)
    in.push_back(randomInputs(rng, {static_cast<int64_t>(3 + r)}, {2}, 12));
  runRanks(2, 30, [&](int r, Communicator *comm) {
    CollectiveContext ctx(groupInfo({r}, r), comm);
    const RankInput &mine = in[r][0];
    ctx.addInput(Tensor::view(const_cast<uint8_t *>(mine.rows.data()),
                              DType::kFloat32, {mine.numRows, 3}))
        .addInput(Tensor::view(const_cast<int64_t *>(mine.lengths.data()),
                               DType::kInt64,
                               {static_cast<int64_t>(mine.lengths.size())}));
    ctx.setNumOutputs(1);
    ctx.attrs().set("key_splits", std::vector<int64_t>{2});
    Status s = runKernel(kKernel, ctx);
    ASSERT_TRUE(s.isOk()) << "rank " << r << ": " << s.toString();
    EXPECT_EQ(ctx.output(0).shape(), Shape({mine.numRows, 3}));
    EXPECT_EQ(bytesOf(ctx.output(0)), mine.rows) << "rank " << r;
  });
}

// --- bad input
// -----------------------------------------------------------------

/// Runs a single-rank case and returns its status.
Status runSingle(const Tensor &rows, const Tensor &lengths,
                 const Attributes *attrs = nullptr,
                 std::vector<int64_t> splits = {2}) {
  TestKernelContext ctx;
  ctx.addInput(rows).addInput(lengths).setNumOutputs(1);
  if (attrs)
    ctx.attrs() = *attrs;
  else
    ctx.attrs().set("key_splits", splits);
  return runKernel(kKernel, ctx);
}

void expectError(const Status &s, const std::string &part,
                 StatusCode code = StatusCode::kInvalidArgument) {
  EXPECT_EQ(s.code(), code) << s.toString();
  EXPECT_NE(s.message().find(part), std::string::npos)
      << "expected \"" << part << "\" in: " << s.toString();
}

TEST(SequenceAllToAllErrors, BadRanksAndDtypes) {
  std::vector<float> rows(12, 1.f);
  std::vector<int32_t> ids(12, 1);
  std::vector<int64_t> lengths = {1, 0, 2, 1}; // K = 2, B = 2: 4 rows
  Tensor l = Tensor::view(lengths.data(), DType::kInt64, {4});
  Tensor r = Tensor::view(rows.data(), DType::kFloat32, {4, 3});
  ASSERT_TRUE(runSingle(r, l).isOk());
  // rows: a scalar, int32, float64 (not a float type of the kernel), absent.
  expectError(runSingle(Tensor::view(rows.data(), DType::kFloat32, {}), l),
              "rows must be float32, float16 or bfloat16 of rank >= 1");
  expectError(runSingle(Tensor::view(ids.data(), DType::kInt32, {4, 3}), l),
              "rows must be float32, float16 or bfloat16");
  expectError(runSingle(Tensor::view(rows.data(), DType::kFloat64, {4, 1}), l),
              "rows must be float32, float16 or bfloat16");
  expectError(runSingle(Tensor(), l), "not absent");
  // lengths: float, rank 2, absent.
  expectError(runSingle(r, Tensor::view(rows.data(), DType::kFloat32, {4})),
              "lengths must be int32/int64 of rank 1");
  expectError(runSingle(r, Tensor::view(lengths.data(), DType::kInt64, {2, 2})),
              "lengths must be int32/int64 of rank 1");
  expectError(runSingle(r, Tensor()), "lengths must be int32/int64");
}

TEST(SequenceAllToAllErrors, BadLengths) {
  std::vector<float> rows(12, 1.f);
  Tensor r = Tensor::view(rows.data(), DType::kFloat32, {4, 3});
  // Negative (int32 and int64).
  std::vector<int64_t> neg64 = {1, 0, -3, 1};
  expectError(runSingle(r, Tensor::view(neg64.data(), DType::kInt64, {4})),
              "lengths[2] is negative (-3)");
  std::vector<int32_t> neg32 = {1, -1, 2, 1};
  expectError(runSingle(r, Tensor::view(neg32.data(), DType::kInt32, {4})),
              "lengths[1] is negative (-1)");
  // Not divisible by the K = 2 keys.
  std::vector<int64_t> odd = {1, 2, 1};
  expectError(runSingle(r, Tensor::view(odd.data(), DType::kInt64, {3})),
              "lengths has 3 entries, not a multiple of the 2 keys");
  // Sums past the limit (no overflow).
  std::vector<int64_t> huge = {int64_t{1} << 62, int64_t{1} << 62,
                               int64_t{1} << 62, 1};
  expectError(runSingle(r, Tensor::view(huge.data(), DType::kInt64, {4})),
              "more than the");
}

TEST(SequenceAllToAllErrors, RowCountMismatchNamesTheCounts) {
  std::vector<float> rows(15, 1.f);
  std::vector<int64_t> lengths = {1, 0, 2, 1}; // 4 rows expected
  Tensor l = Tensor::view(lengths.data(), DType::kInt64, {4});
  Status s = runSingle(Tensor::view(rows.data(), DType::kFloat32, {5, 3}), l);
  expectError(s, "rows has 5 rows but the group's positions expect 4 from "
                 "this rank (position 0: 4");
  EXPECT_NE(s.message().find("test kernel"), std::string::npos) << s.toString();
}

TEST(SequenceAllToAllErrors, BadKeySplits) {
  std::vector<float> rows(12, 1.f);
  std::vector<int64_t> lengths = {1, 0, 2, 1};
  Tensor r = Tensor::view(rows.data(), DType::kFloat32, {4, 3});
  Tensor l = Tensor::view(lengths.data(), DType::kInt64, {4});
  Attributes none;
  expectError(runSingle(r, l, &none), "key_splits");
  expectError(runSingle(r, l, nullptr, {0}), "at least one key");
  expectError(runSingle(r, l, nullptr, {-1}), "key_splits");
  // One entry per group position.
  CollectiveContext ctx(worldInfo(1, 0), nullptr);
  ctx.addInput(r).addInput(l).setNumOutputs(1);
  ctx.attrs().set("key_splits", std::vector<int64_t>{1, 1});
  expectError(runKernel(kKernel, ctx),
              "'key_splits' has 2 entries but the collective's group has 1");
  // Load-time checks of the registry.
  const KernelDef *def = cpuKernels().find(kKernel);
  ASSERT_NE(def, nullptr);
  ASSERT_NE(def->validateGroup, nullptr);
  Attributes two;
  two.set("key_splits", std::vector<int64_t>{1, 1});
  EXPECT_TRUE(def->validateGroup(two, 2).isOk());
  EXPECT_FALSE(def->validateGroup(two, 3).isOk());
  EXPECT_FALSE(def->validate(none, 2, 1).isOk());
  EXPECT_EQ(def->collectiveKind,
            static_cast<int>(CollectiveInfo::Kind::kAllToAll));
}

TEST(SequenceAllToAllErrors, GroupOfTwoWithoutCommunicator) {
  std::vector<float> rows(12, 1.f);
  std::vector<int64_t> lengths = {1, 0, 2, 1};
  CollectiveContext ctx(worldInfo(2, 0), nullptr);
  ctx.addInput(Tensor::view(rows.data(), DType::kFloat32, {4, 3}))
      .addInput(Tensor::view(lengths.data(), DType::kInt64, {4}))
      .setNumOutputs(1);
  ctx.attrs().set("key_splits", std::vector<int64_t>{1, 1});
  expectError(runKernel(kKernel, ctx), "single-rank",
              StatusCode::kFailedPrecondition);
}

// Between ranks: a rank with too many rows fails naming the counts; a rank
// whose rows disagree in dtype or width fails naming the position (its
// peers fail too: they find out when it stops).
TEST(SequenceAllToAllErrors, MismatchesBetweenRanks) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "no Gloo";
  std::vector<int64_t> lengths = {1, 2, 0, 1}; // K = 2, B = 2 on each rank
  // Each rank expects 3 rows from position 0 (key 0) and 1 from position 1;
  // so position 0 sends 6 rows, position 1 sends 2.
  std::vector<float> rows(8 * 4, 0.5f);
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant);
    runRanks(2, 10, [&](int r, Communicator *comm) {
      CollectiveContext ctx(worldInfo(2, r), comm);
      int64_t n = r == 0 ? 6 : 2, width = 4;
      DType dtype = DType::kFloat32;
      if (r == 1 && variant == 0)
        n = 3; // one row too many
      if (r == 1 && variant == 1)
        dtype = DType::kFloat16;
      if (r == 1 && variant == 2)
        width = 2;
      ctx.addInput(Tensor::view(rows.data(), dtype, {n, width}))
          .addInput(Tensor::view(lengths.data(), DType::kInt64, {4}))
          .setNumOutputs(1);
      ctx.attrs().set("key_splits", std::vector<int64_t>{1, 1});
      Status s = runKernel(kKernel, ctx);
      ASSERT_FALSE(s.isOk()) << "rank " << r;
      if (variant == 0 && r == 1)
        expectError(s, "rows has 3 rows but the group's positions expect 2 "
                       "from this rank (position 0: 1, position 1: 1;");
      if (variant > 0) // both see the other's header
        expectError(s,
                    "group position " + std::to_string(1 - r) + " has rows of");
      if (s.code() != StatusCode::kInvalidArgument)
        return;
      EXPECT_NE(s.message().find("seq_dist"), std::string::npos)
          << s.toString();
    });
  }
}

} // namespace
