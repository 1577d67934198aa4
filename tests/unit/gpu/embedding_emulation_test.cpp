//===- embedding_emulation_test.cpp - The lookup kernel's lanes on the CPU ===//
//
// Runs the device code of the CUDA lookups (lookupBagLane, bagRange,
// checkedLength in runtime/src/cuda/embedding/embedding_lookup.cuh) compiled
// by the host compiler over an emulated grid: every (bag, lane) of a launch,
// with the LookupParams the CUDA kernels build, over host memory. Results
// are compared with the CPU kernels of the same names on random data, and
// the errors the device would raise with what the CPU kernels report.
//
//===----------------------------------------------------------------------===//
#include "cuda/embedding/embedding_lookup.cuh"
#include "cuda/embedding/embedding_lookup.h"

#include "../runtime/embedding_test_support.h"
#include "../runtime/support/test_kernel_context.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace ember;
using namespace ember::testing;
using namespace ember::cuda;
using namespace ember::cuda::embedding;
using ember::embedding::Pooling;

namespace {

/// Records what the device would: the first error, the invalid id count.
struct RecordingSink {
  DeviceErrorRecord first{};
  int raised = 0;
  int64_t invalid = 0;
  void raise(DeviceErrorCode code, int64_t a, int64_t b, int64_t c, int64_t d) {
    ++raised;
    if (first.code == 0)
      first = DeviceErrorRecord{static_cast<int32_t>(code), 0, a, b, c, d};
  }
  void addInvalid(int64_t n) { invalid += n; }
};

/// Every lane of every bag, in a shuffled order of (bag, lane) pairs so that
/// nothing may depend on the order lanes run in.
void runGrid(const LookupParams &p, RecordingSink &sink, uint32_t seed = 1) {
  std::vector<std::pair<int64_t, int>> work;
  for (int64_t g = 0; g < p.numBags; ++g)
    for (int lane = 0; lane < p.lanes; ++lane)
      work.emplace_back(g, lane);
  std::mt19937 gen(seed);
  std::shuffle(work.begin(), work.end(), gen);
  for (auto [g, lane] : work)
    lookupBagLane(p, g, lane, sink);
}

TableDesc descOf(const TestTable &t, const uint8_t *data = nullptr) {
  TableDesc d;
  d.data = data ? data : t.tensor.data<uint8_t>();
  d.rows = t.rows;
  d.dim = static_cast<int32_t>(t.dim);
  d.format = static_cast<uint8_t>(t.format);
  d.rowBytes = tableRowBytes(t.format, t.dim);
  return d;
}

LookupPooling lookupPooling(Pooling p) {
  return static_cast<LookupPooling>(static_cast<uint8_t>(p));
}

const char *poolingStr(Pooling p) {
  return p == Pooling::kSum ? "sum" : p == Pooling::kMean ? "mean" : "max";
}

LookupBounds lookupBounds(BoundsCheckMode m) {
  return m == BoundsCheckMode::kFatal     ? LookupBounds::kFatal
         : m == BoundsCheckMode::kWarning ? LookupBounds::kWarning
                                          : LookupBounds::kIgnore;
}

void expectClose(const float *got, const float *want, int64_t n,
                 const std::string &what) {
  for (int64_t i = 0; i < n; ++i) {
    float tol = 2e-5f * std::max(1.0f, std::fabs(want[i]));
    ASSERT_NEAR(got[i], want[i], tol) << what << " element " << i;
  }
}

/// One embedding_bag case: CPU kernel vs the emulated GPU lanes.
struct BagCase {
  TableFormat format = TableFormat::kFloat32;
  int64_t rows = 50, dim = 16, batch = 7;
  Pooling pooling = Pooling::kSum;
  DType idType = DType::kInt64, offType = DType::kInt64;
  bool weights = false, includeLast = true, halfOut = false;
  int64_t paddingIdx = -1;
  int lanes = 0;         // 0: what setLookupDescriptors picks
  int chunksPerLane = 0; // likewise
  int64_t maxLength = 6;
  int invalidIds = 0; // ids replaced by out-of-range ones
  BoundsCheckMode mode = BoundsCheckMode::kWarning;
  uint32_t seed = 7;
  int tableByteShift = 0; // misaligns the table copy by this many bytes
};

void runBagCase(const BagCase &c) {
  SCOPED_TRACE(std::string(tableFormatName(c.format)) + " dim " +
               std::to_string(c.dim) + " " + poolingStr(c.pooling) + " lanes " +
               std::to_string(c.lanes) + " chunks/lane " +
               std::to_string(c.chunksPerLane));
  std::mt19937 gen(c.seed);
  TestTable table = makeTable(c.rows, c.dim, c.format, c.seed + 1);
  auto lengths = randomLengths(c.batch, c.maxLength, gen);
  auto offsets = offsetsOf(lengths);
  const int64_t n = offsets.back();
  auto ids = randomIds(n, c.rows, gen);
  if (c.paddingIdx >= 0)
    for (int64_t i = 0; i < n; i += 3)
      ids[i] = c.paddingIdx;
  for (int k = 0; k < c.invalidIds && n > 0; ++k)
    ids[(k * 7919) % n] = (k & 1) ? c.rows + k : -1 - k;
  auto weights = randomWeights(n, gen);
  std::vector<int64_t> offs = offsets;
  if (!c.includeLast)
    offs.pop_back();

  // CPU reference.
  TestKernelContext cpu(1, c.mode);
  cpu.addInput(table.tensor)
      .addInput(indexTensor(ids, c.idType))
      .addInput(indexTensor(offs, c.offType));
  if (c.weights)
    cpu.addInput(floatTensor(weights));
  cpu.setNumOutputs(1);
  cpu.attrs().set("pooling", std::string(poolingStr(c.pooling)));
  if (c.format == TableFormat::kInt8RowWise ||
      c.format == TableFormat::kInt4RowWise) {
    cpu.attrs().set("format", table.formatName());
    cpu.attrs().set("dim", c.dim);
  }
  cpu.attrs().set("padding_idx", c.paddingIdx);
  cpu.attrs().set("include_last_offset", int64_t{c.includeLast ? 1 : 0});
  Status cpuStatus = runKernel("embedding_bag", cpu);

  // Emulated GPU, with the parameters embedding_kernels.cpp sets.
  Tensor idT = indexTensor(ids, c.idType), offT = indexTensor(offs, c.offType);
  std::vector<uint8_t> shifted(table.tensor.nbytes() + 64);
  uint8_t *base = shifted.data() +
                  (64 - reinterpret_cast<uintptr_t>(shifted.data()) % 64) % 64;
  base += c.tableByteShift;
  ASSERT_LE(base + table.tensor.nbytes(), shifted.data() + shifted.size());
  std::memcpy(base, table.tensor.data(), table.tensor.nbytes());
  LookupParams p;
  FeatureDesc f;
  f.pooling = static_cast<uint8_t>(lookupPooling(c.pooling));
  ASSERT_TRUE(
      setLookupDescriptors(p, {descOf(table, base)}, {f}, nullptr, nullptr)
          .isOk());
  if (c.lanes)
    p.lanes = c.lanes;
  if (c.chunksPerLane)
    p.chunksPerLane = c.chunksPerLane;
  p.ids = idT.data();
  p.ids64 = c.idType == DType::kInt64;
  p.numIds = n;
  p.weights = c.weights ? weights.data() : nullptr;
  p.offsets = offT.data();
  p.offsets64 = c.offType == DType::kInt64;
  p.numOffsets = offT.numel();
  p.numBags = c.batch;
  p.bagsPerFeature = c.batch;
  p.paddingIdx = c.paddingIdx;
  std::vector<float> out(c.batch * c.dim, std::nanf(""));
  std::vector<uint16_t> outHalf(c.batch * c.dim, 0x7e00);
  p.out = c.halfOut ? static_cast<void *>(outHalf.data()) : out.data();
  p.outHalf = c.halfOut;
  p.outStride = c.dim;
  p.bounds = static_cast<uint8_t>(lookupBounds(c.mode));
  p.checkOffsets = 1;
  RecordingSink sink;
  runGrid(p, sink, c.seed);

  if (c.mode == BoundsCheckMode::kFatal && c.invalidIds > 0) {
    ASSERT_FALSE(cpuStatus.isOk());
    EXPECT_EQ(cpuStatus.code(), StatusCode::kOutOfRange);
    ASSERT_EQ(sink.first.code,
              static_cast<int32_t>(DeviceErrorCode::kIdOutOfRange));
    // The raised id is one of the invalid ones, at its position and bag.
    int64_t id = sink.first.a, pos = sink.first.b, bag = sink.first.c;
    ASSERT_GE(pos, 0);
    ASSERT_LT(pos, n);
    EXPECT_EQ(ids[pos], id);
    EXPECT_TRUE(id < 0 || id >= c.rows);
    EXPECT_TRUE(offsets[bag] <= pos && pos < offsets[bag + 1]);
    EXPECT_EQ(sink.first.d, c.rows);
    EXPECT_EQ(statusCodeOf(DeviceErrorCode::kIdOutOfRange),
              StatusCode::kOutOfRange);
    return;
  }
  ASSERT_TRUE(cpuStatus.isOk()) << cpuStatus.toString();
  EXPECT_EQ(sink.raised, 0) << describeDeviceError(sink.first);
  EXPECT_EQ(sink.invalid,
            c.mode == BoundsCheckMode::kWarning ? cpu.invalidIds() : 0);
  const float *want = cpu.output(0).data<float>();
  if (c.halfOut) {
    for (int64_t i = 0; i < c.batch * c.dim; ++i) {
      float w = halfToFloat(floatToHalf(want[i]));
      float g = halfToFloat(outHalf[i]);
      ASSERT_NEAR(g, w, 2e-3f * std::max(1.0f, std::fabs(w)))
          << "element " << i;
    }
  } else {
    expectClose(out.data(), want, c.batch * c.dim, "embedding_bag");
  }
}

} // namespace

TEST(EmbeddingEmulation, ShapeFollowsTheWidestRow) {
  auto shape = [](int64_t chunks, int perLane) {
    LookupShape s = chooseLookupShape(chunks, perLane);
    return std::make_pair(s.lanes, s.chunksPerLane);
  };
  // One chunk per lane: the old rule, lanes = the next power of two.
  EXPECT_EQ(shape(1, 1), std::make_pair(1, 1));
  EXPECT_EQ(shape(3, 1), std::make_pair(4, 1));
  EXPECT_EQ(shape(24, 1), std::make_pair(32, 1));
  EXPECT_EQ(shape(1000, 1), std::make_pair(32, 1));
  // Up to four: the fewest lanes that cover the row, but 8 at least where
  // the row has 8 chunks; no idle lane for 24.
  EXPECT_EQ(shape(24, 4), std::make_pair(8, 3));
  EXPECT_EQ(shape(32, 4), std::make_pair(8, 4));
  EXPECT_EQ(shape(16, 4), std::make_pair(8, 2));
  EXPECT_EQ(shape(48, 4), std::make_pair(16, 3));
  EXPECT_EQ(shape(8, 4), std::make_pair(8, 1));
  EXPECT_EQ(shape(3, 4), std::make_pair(4, 1));
  EXPECT_EQ(shape(1, 4), std::make_pair(1, 1));
  EXPECT_EQ(shape(1000, 4), std::make_pair(32, 4)); // several groups
  EXPECT_EQ(shape(24, 0), std::make_pair(32, 1));   // a bound below 1 is 1
  // What setLookupDescriptors picks for the widest row of its tables.
  LookupParams p;
  TableDesc t;
  t.dim = 192; // float16: 24 chunks of 8
  t.format = static_cast<uint8_t>(TableFormat::kFloat16);
  ASSERT_TRUE(
      setLookupDescriptors(p, {t}, {FeatureDesc()}, nullptr, nullptr).isOk());
  LookupShape want = chooseLookupShape(24, kMaxChunksPerLane);
  EXPECT_EQ(p.lanes, want.lanes);
  EXPECT_EQ(p.chunksPerLane, want.chunksPerLane);
  TableDesc narrow;
  narrow.dim = 12; // float32: 3 chunks of 4
  narrow.format = static_cast<uint8_t>(TableFormat::kFloat32);
  ASSERT_TRUE(
      setLookupDescriptors(p, {narrow, t}, {FeatureDesc()}, nullptr, nullptr)
          .isOk());
  EXPECT_EQ(p.lanes, want.lanes);
}

TEST(EmbeddingEmulation, EmbeddingBagMatchesCpuOnEveryFormatAndPooling) {
  uint32_t seed = 100;
  for (TableFormat format : allFormats())
    for (Pooling pooling : {Pooling::kSum, Pooling::kMean, Pooling::kMax})
      for (int64_t dim : {1, 3, 4, 8, 13, 16, 40, 64, 128, 192, 300}) {
        BagCase c;
        c.format = format;
        c.pooling = pooling;
        c.dim = dim;
        c.seed = ++seed;
        c.idType = seed % 2 ? DType::kInt32 : DType::kInt64;
        c.offType = seed % 3 ? DType::kInt64 : DType::kInt32;
        c.includeLast = seed % 4 != 0;
        c.weights = pooling == Pooling::kSum && seed % 2 == 0;
        runBagCase(c);
        if (HasFatalFailure())
          return;
      }
}

TEST(EmbeddingEmulation, SmallBatchesGetMoreLanes) {
  auto fit = [](int lanes, int chunks, int64_t bags, int64_t target) {
    LookupShape s = fitLookupShapeToBatch({lanes, chunks}, bags, target);
    return std::make_pair(s.lanes, s.chunksPerLane);
  };
  // Enough threads: unchanged.
  EXPECT_EQ(fit(8, 4, 131072, 67584), std::make_pair(8, 4));
  // 1,024 bags of 8 lanes leave an H100 (132 x 512 threads) short: wider
  // until one chunk per lane.
  EXPECT_EQ(fit(8, 4, 1024, 67584), std::make_pair(32, 1));
  EXPECT_EQ(fit(8, 3, 1024, 67584), std::make_pair(32, 1));
  EXPECT_EQ(fit(8, 4, 4096, 60000), std::make_pair(16, 2));
  // One chunk per lane or 32 lanes already: nothing to widen.
  EXPECT_EQ(fit(4, 1, 10, 67584), std::make_pair(4, 1));
  EXPECT_EQ(fit(32, 4, 10, 67584), std::make_pair(32, 4));
  // The widened shape still covers the row: lanes x chunks does not shrink.
  for (int chunks = 1; chunks <= kMaxChunksPerLane; ++chunks) {
    auto [l, c] = fit(8, chunks, 1, 1 << 20);
    EXPECT_GE(l * c, 8 * chunks) << chunks;
  }
}

TEST(EmbeddingEmulation, AnyShapeGivesTheSameBags) {
  // Every sub-warp shape, on rows that fill its groups exactly, leave the
  // last group partly empty, or need several groups (72 float32 = 18 chunks,
  // 72 float16 = 9, 200 float32 = 50).
  for (TableFormat format : allFormats())
    for (int64_t dim : {int64_t{72}, int64_t{200}})
      for (int lanes : {1, 2, 8, 32})
        for (int chunks = 1; chunks <= kMaxChunksPerLane; ++chunks) {
          BagCase c;
          c.format = format;
          c.dim = dim;
          c.lanes = lanes;
          c.chunksPerLane = chunks;
          c.pooling = (lanes + chunks) % 3 == 0   ? Pooling::kMax
                      : (lanes + chunks) % 3 == 1 ? Pooling::kMean
                                                  : Pooling::kSum;
          c.weights = c.pooling == Pooling::kSum;
          c.paddingIdx = chunks == 2 ? 3 : -1;
          c.seed = static_cast<uint32_t>(lanes * 10 + chunks);
          runBagCase(c);
          if (HasFatalFailure())
            return;
        }
}

TEST(EmbeddingEmulation, MisalignedTablesUseTheNarrowPath) {
  for (TableFormat format : allFormats())
    for (int shift : {1, 2, 4, 8}) {
      BagCase c;
      c.format = format;
      c.dim = 64;
      c.tableByteShift = shift;
      c.weights = true;
      runBagCase(c);
      if (HasFatalFailure())
        return;
    }
}

TEST(EmbeddingEmulation, PaddingBatchOneEmptyBagsAndLongBags) {
  for (Pooling pooling : {Pooling::kSum, Pooling::kMean, Pooling::kMax}) {
    BagCase c;
    c.pooling = pooling;
    c.paddingIdx = 3;
    runBagCase(c);
    c.paddingIdx = -1;
    c.batch = 1;
    c.maxLength = 0; // one empty bag
    runBagCase(c);
    c.batch = 3;
    c.maxLength = 70; // bags longer than kUnroll * anything
    c.format = TableFormat::kBFloat16;
    runBagCase(c);
    if (HasFatalFailure())
      return;
  }
}

TEST(EmbeddingEmulation, IdsAtTheTableEdgeAndOutOfRange) {
  // Every id is the last row: nothing is invalid.
  BagCase edge;
  edge.rows = 1;
  edge.mode = BoundsCheckMode::kFatal;
  runBagCase(edge);
  for (Pooling pooling : {Pooling::kSum, Pooling::kMean, Pooling::kMax})
    for (BoundsCheckMode mode :
         {BoundsCheckMode::kWarning, BoundsCheckMode::kFatal}) {
      BagCase c;
      c.pooling = pooling;
      c.mode = mode;
      c.invalidIds = 5;
      c.format = TableFormat::kInt8RowWise;
      c.dim = 20;
      runBagCase(c);
      if (HasFatalFailure())
        return;
    }
}

TEST(EmbeddingEmulation, IgnoreModeGivesZeroRowsUncounted) {
  // kIgnore on the GPU: invalid ids are zero rows (as kWarning), not counted.
  BagCase c;
  c.invalidIds = 4;
  c.mode = BoundsCheckMode::kWarning;
  runBagCase(c); // the values, against the CPU's kWarning
  std::vector<int64_t> ids = {0, 99, -5, 2};
  TestTable table = makeTable(4, 8, TableFormat::kFloat32, 3);
  std::vector<int64_t> offsets = {0, 2, 4};
  LookupParams p;
  ASSERT_TRUE(setLookupDescriptors(p, {descOf(table)}, {FeatureDesc()}, nullptr,
                                   nullptr)
                  .isOk());
  p.ids = ids.data();
  p.ids64 = 1;
  p.numIds = 4;
  p.offsets = offsets.data();
  p.offsets64 = 1;
  p.numOffsets = 3;
  p.numBags = p.bagsPerFeature = 2;
  std::vector<float> out(16, -1.0f);
  p.out = out.data();
  p.outStride = 8;
  p.bounds = static_cast<uint8_t>(LookupBounds::kIgnore);
  p.checkOffsets = 1;
  RecordingSink sink;
  runGrid(p, sink);
  EXPECT_EQ(sink.raised, 0);
  EXPECT_EQ(sink.invalid, 0);
  for (int d = 0; d < 8; ++d) {
    EXPECT_FLOAT_EQ(out[d], table.row(0)[d]);
    EXPECT_FLOAT_EQ(out[8 + d], table.row(2)[d]);
  }
}

TEST(EmbeddingEmulation, HalfOutputRoundsTheFloatResult) {
  for (TableFormat format : allFormats())
    for (int64_t dim : {4, 8, 12, 192}) {
      BagCase c;
      c.format = format;
      c.dim = dim;
      c.halfOut = true;
      c.weights = true;
      runBagCase(c);
      if (HasFatalFailure())
        return;
    }
}

namespace {

/// Runs embedding_bag's emulated lanes over raw offsets (bad ones included)
/// and returns what was raised; the output must stay finite (no garbage read).
RecordingSink badOffsets(const std::vector<int64_t> &offsets, int64_t numIds,
                         bool includeLast) {
  TestTable table = makeTable(10, 4, TableFormat::kFloat32, 5);
  std::vector<int64_t> ids(numIds, 1);
  LookupParams p;
  EXPECT_TRUE(setLookupDescriptors(p, {descOf(table)}, {FeatureDesc()}, nullptr,
                                   nullptr)
                  .isOk());
  p.ids = ids.data();
  p.ids64 = 1;
  p.numIds = numIds;
  p.offsets = offsets.data();
  p.offsets64 = 1;
  p.numOffsets = static_cast<int64_t>(offsets.size());
  p.numBags = p.bagsPerFeature = p.numOffsets - (includeLast ? 1 : 0);
  std::vector<float> out(p.numBags * 4, std::nanf(""));
  p.out = out.data();
  p.outStride = 4;
  p.checkOffsets = 1;
  RecordingSink sink;
  runGrid(p, sink);
  for (float v : out)
    EXPECT_TRUE(std::isfinite(v));
  return sink;
}

} // namespace

TEST(EmbeddingEmulation, BadOffsetsAreRaisedWithoutReadingOutside) {
  auto s = badOffsets({0, 3, 2, 4}, 4, true);
  ASSERT_EQ(s.first.code,
            static_cast<int32_t>(DeviceErrorCode::kOffsetsDecreasing));
  EXPECT_EQ(s.first.a, 2);
  EXPECT_EQ(s.first.b, 2);
  EXPECT_EQ(s.first.c, 3);
  s = badOffsets({0, 2, 9}, 4, true);
  ASSERT_EQ(s.first.code,
            static_cast<int32_t>(DeviceErrorCode::kOffsetOutOfRange));
  EXPECT_EQ(s.first.a, 2);
  EXPECT_EQ(s.first.b, 9);
  EXPECT_EQ(s.first.c, 4);
  EXPECT_NE(describeDeviceError(s.first).find("offsets[2] = 9"),
            std::string::npos);
  s = badOffsets({1, 2}, 4, false);
  ASSERT_EQ(s.first.code,
            static_cast<int32_t>(DeviceErrorCode::kFirstOffsetNotZero));
  EXPECT_EQ(s.first.a, 1);
  EXPECT_EQ(describeDeviceError(s.first), "offsets[0] must be 0, got 1");
  s = badOffsets({0, -7, 4}, 4, true);
  ASSERT_EQ(s.first.code,
            static_cast<int32_t>(DeviceErrorCode::kOffsetsDecreasing));
  // Good offsets, include_last_offset = 0: the last bag ends at numIds.
  s = badOffsets({0, 1, 1}, 4, false);
  EXPECT_EQ(s.raised, 0);
  // ... and with include_last_offset = 1 ids past the last offset are unused.
  s = badOffsets({0, 1, 2}, 4, true);
  EXPECT_EQ(s.raised, 0);
}

namespace {

struct GroupedCase {
  std::vector<TableFormat> formats;
  std::vector<int64_t> dims, rows;
  std::vector<int64_t> featureTables;
  std::vector<Pooling> pooling;
  int64_t batch = 5, maxLength = 5, gap = 0;
  bool weights = false;
  DType idType = DType::kInt64, lenType = DType::kInt32;
  BoundsCheckMode mode = BoundsCheckMode::kWarning;
  int invalidIds = 0;
  uint32_t seed = 11;
  bool deviceDescs = false; // descriptors through p.tables / p.features
};

/// The grouped lookup: lengths -> offsets as launchLengthsToOffsets does
/// (checkedLength per element, then the scan), then the lanes.
void runGroupedCase(const GroupedCase &c) {
  std::mt19937 gen(c.seed);
  const int64_t T = c.formats.size(), F = c.featureTables.size(), B = c.batch;
  std::vector<TestTable> tables;
  for (int64_t t = 0; t < T; ++t)
    tables.push_back(makeTable(c.rows[t], c.dims[t], c.formats[t],
                               c.seed * 31 + static_cast<uint32_t>(t)));
  auto lengths = randomLengths(F * B, c.maxLength, gen);
  auto offsets = offsetsOf(lengths);
  const int64_t n = offsets.back();
  std::vector<int64_t> ids(n);
  for (int64_t f = 0; f < F; ++f) {
    int64_t rows = c.rows[c.featureTables[f]];
    for (int64_t i = offsets[f * B]; i < offsets[(f + 1) * B]; ++i)
      ids[i] = std::uniform_int_distribution<int64_t>(0, rows - 1)(gen);
  }
  for (int k = 0; k < c.invalidIds && n > 0; ++k)
    ids[(k * 131) % n] = (k & 1) ? 1000000 : -2;
  auto weights = randomWeights(n, gen);
  std::vector<int64_t> outOffsets;
  std::vector<std::string> poolingNames, formatNames;
  int64_t width = 0;
  for (int64_t f = 0; f < F; ++f) {
    width += c.gap;
    outOffsets.push_back(width);
    width += c.dims[c.featureTables[f]];
    poolingNames.push_back(poolingStr(c.pooling[f]));
  }
  width += c.gap;
  for (auto &t : tables)
    formatNames.push_back(t.formatName());

  TestKernelContext cpu(2, c.mode);
  cpu.addInput(indexTensor(ids, c.idType))
      .addInput(indexTensor(lengths, c.lenType))
      .addInput(c.weights ? floatTensor(weights) : Tensor());
  for (auto &t : tables)
    cpu.addInput(t.tensor);
  cpu.setNumOutputs(1);
  cpu.attrs().set("feature_tables", c.featureTables);
  cpu.attrs().set("pooling", poolingNames);
  cpu.attrs().set("table_formats", formatNames);
  cpu.attrs().set("table_dims", c.dims);
  cpu.attrs().set("output_offsets", outOffsets);
  cpu.attrs().set("output_width", width);
  Status cpuStatus = runKernel("grouped_embedding_bag", cpu);

  // Device side: offsets from the lengths, then the lanes.
  Tensor lenT = indexTensor(lengths, c.lenType),
         idT = indexTensor(ids, c.idType);
  RecordingSink sink;
  std::vector<int64_t> devOffsets(F * B + 1, 0);
  for (int64_t i = 0; i < F * B; ++i)
    devOffsets[i + 1] =
        devOffsets[i] +
        checkedLength(lenT.data(), c.lenType == DType::kInt64, i, sink);
  std::vector<TableDesc> descs;
  for (auto &t : tables)
    descs.push_back(descOf(t));
  std::vector<FeatureDesc> feats(F);
  int64_t covered = 0;
  for (int64_t f = 0; f < F; ++f) {
    feats[f].table = static_cast<int32_t>(c.featureTables[f]);
    feats[f].outOffset = outOffsets[f];
    feats[f].pooling = static_cast<uint8_t>(lookupPooling(c.pooling[f]));
    covered += c.dims[c.featureTables[f]];
  }
  LookupParams p;
  if (c.deviceDescs) {
    // What setLookupDescriptors does past kInlineDescs, over host memory.
    ASSERT_GT(lookupDescriptorBytes(descs.size(), feats.size()), 0u);
    LookupParams probe;
    TableDesc widest = descs[0];
    for (auto &d : descs)
      if (d.dim > widest.dim)
        widest = d;
    ASSERT_TRUE(
        setLookupDescriptors(probe, {widest}, {FeatureDesc()}, nullptr, nullptr)
            .isOk());
    p.lanes = probe.lanes;
    p.tables = descs.data();
    p.features = feats.data();
    p.numTables = static_cast<int32_t>(T);
    p.numFeatures = static_cast<int32_t>(F);
  } else {
    ASSERT_TRUE(setLookupDescriptors(p, descs, feats, nullptr, nullptr).isOk());
  }
  p.ids = idT.data();
  p.ids64 = c.idType == DType::kInt64;
  p.numIds = n;
  p.weights = c.weights ? weights.data() : nullptr;
  p.offsets = devOffsets.data();
  p.offsets64 = 1;
  p.numOffsets = F * B + 1;
  p.numBags = F * B;
  p.bagsPerFeature = B;
  std::vector<float> out(B * width, covered < width ? 0.0f : std::nanf(""));
  p.out = out.data();
  p.outStride = width;
  p.bounds = static_cast<uint8_t>(lookupBounds(c.mode));
  p.checkLengthSum = 1;
  runGrid(p, sink, c.seed);

  if (c.mode == BoundsCheckMode::kFatal && c.invalidIds > 0) {
    ASSERT_FALSE(cpuStatus.isOk());
    ASSERT_EQ(sink.first.code,
              static_cast<int32_t>(DeviceErrorCode::kIdOutOfRange));
    EXPECT_EQ(ids[sink.first.b], sink.first.a);
    int64_t bag = sink.first.c;
    EXPECT_TRUE(offsets[bag] <= sink.first.b &&
                sink.first.b < offsets[bag + 1]);
    EXPECT_EQ(sink.first.d, c.rows[c.featureTables[bag / B]]);
    return;
  }
  ASSERT_TRUE(cpuStatus.isOk()) << cpuStatus.toString();
  EXPECT_EQ(sink.raised, 0) << describeDeviceError(sink.first);
  EXPECT_EQ(sink.invalid,
            c.mode == BoundsCheckMode::kWarning ? cpu.invalidIds() : 0);
  expectClose(out.data(), cpu.output(0).data<float>(), B * width,
              "grouped_embedding_bag");
}

} // namespace

TEST(EmbeddingEmulation, GroupedMatchesCpuWithMixedTables) {
  GroupedCase c;
  c.formats = {TableFormat::kFloat32, TableFormat::kFloat16,
               TableFormat::kInt8RowWise, TableFormat::kInt4RowWise,
               TableFormat::kBFloat16};
  c.dims = {16, 192, 24, 33, 7};
  c.rows = {40, 30, 20, 25, 9};
  c.featureTables = {0, 1, 2, 3, 4, 1, 0};
  c.pooling = {Pooling::kSum,  Pooling::kMean, Pooling::kMax, Pooling::kSum,
               Pooling::kMean, Pooling::kMax,  Pooling::kMax};
  runGroupedCase(c);
  c.gap = 3; // columns no feature covers stay zero
  c.idType = DType::kInt32;
  c.lenType = DType::kInt64;
  c.seed = 12;
  runGroupedCase(c);
  c.batch = 1;
  c.seed = 13;
  runGroupedCase(c);
  c.maxLength = 0; // all bags empty, no ids
  runGroupedCase(c);
}

TEST(EmbeddingEmulation, GroupedWeightsAndInvalidIds) {
  GroupedCase c;
  c.formats = {TableFormat::kFloat16, TableFormat::kInt8RowWise};
  c.dims = {64, 12};
  c.rows = {100, 50};
  c.featureTables = {0, 1, 0};
  c.pooling = {Pooling::kSum, Pooling::kSum, Pooling::kSum};
  c.weights = true;
  c.batch = 9;
  runGroupedCase(c);
  c.invalidIds = 6;
  runGroupedCase(c);
  c.mode = BoundsCheckMode::kFatal;
  runGroupedCase(c);
}

TEST(EmbeddingEmulation, GroupedWithMoreFeaturesThanFitInline) {
  GroupedCase c;
  for (int t = 0; t < 40; ++t) {
    c.formats.push_back(allFormats()[t % 5]);
    c.dims.push_back(4 + t % 9);
    c.rows.push_back(10 + t);
  }
  for (int f = 0; f < 45; ++f) {
    c.featureTables.push_back(f % 40);
    c.pooling.push_back(static_cast<Pooling>(f % 3));
  }
  c.batch = 3;
  c.deviceDescs = true;
  runGroupedCase(c);
}

TEST(EmbeddingEmulation, GroupedLengthErrors) {
  // A negative length and lengths that do not add up to the ids.
  RecordingSink sink;
  std::vector<int32_t> lengths = {2, -1, 3};
  std::vector<int64_t> offsets(4, 0);
  for (int i = 0; i < 3; ++i)
    offsets[i + 1] = offsets[i] + checkedLength(lengths.data(), false, i, sink);
  ASSERT_EQ(sink.first.code,
            static_cast<int32_t>(DeviceErrorCode::kNegativeLength));
  EXPECT_EQ(sink.first.a, -1);
  EXPECT_EQ(sink.first.b, 1);

  TestTable table = makeTable(5, 4, TableFormat::kFloat32, 1);
  std::vector<int64_t> ids(6, 1);
  for (int64_t numIds : {int64_t{3}, int64_t{6}}) {
    LookupParams p;
    ASSERT_TRUE(setLookupDescriptors(p, {descOf(table)}, {FeatureDesc()},
                                     nullptr, nullptr)
                    .isOk());
    std::vector<int64_t> off = {0, 2, 4}; // sums to 4
    p.ids = ids.data();
    p.ids64 = 1;
    p.numIds = numIds;
    p.offsets = off.data();
    p.offsets64 = 1;
    p.numOffsets = 3;
    p.numBags = p.bagsPerFeature = 2;
    std::vector<float> out(8, std::nanf(""));
    p.out = out.data();
    p.outStride = 4;
    p.checkLengthSum = 1;
    RecordingSink s;
    runGrid(p, s);
    ASSERT_EQ(s.first.code,
              static_cast<int32_t>(DeviceErrorCode::kLengthsSumMismatch));
    EXPECT_EQ(s.first.a, 4);
    EXPECT_EQ(s.first.b, numIds);
    for (float v : out)
      EXPECT_TRUE(std::isfinite(v)); // clamped to the ids there are
  }
}

TEST(EmbeddingEmulation, SequenceMatchesCpu) {
  uint32_t seed = 300;
  for (TableFormat format : allFormats())
    for (int64_t dim : {1, 5, 8, 64, 100}) {
      std::mt19937 gen(++seed);
      TestTable table = makeTable(30, dim, format, seed);
      auto ids = randomIds(23, 30, gen);
      ids[4] = 29;
      ids[7] = 0;
      TestKernelContext cpu(1, BoundsCheckMode::kFatal);
      DType idType = seed % 2 ? DType::kInt32 : DType::kInt64;
      Tensor idT = indexTensor(ids, idType);
      cpu.addInput(table.tensor).addInput(idT).setNumOutputs(1);
      if (format == TableFormat::kInt8RowWise ||
          format == TableFormat::kInt4RowWise) {
        cpu.attrs().set("format", table.formatName());
        cpu.attrs().set("dim", dim);
      }
      ASSERT_TRUE(runKernel("embedding_sequence", cpu).isOk());
      LookupParams p;
      ASSERT_TRUE(setLookupDescriptors(p, {descOf(table)}, {FeatureDesc()},
                                       nullptr, nullptr)
                      .isOk());
      p.ids = idT.data();
      p.ids64 = idType == DType::kInt64;
      p.numIds = p.numBags = p.bagsPerFeature = 23;
      std::vector<float> out(23 * dim, std::nanf(""));
      p.out = out.data();
      p.outStride = dim;
      RecordingSink sink;
      runGrid(p, sink);
      EXPECT_EQ(sink.raised, 0);
      expectClose(out.data(), cpu.output(0).data<float>(), 23 * dim,
                  std::string("embedding_sequence ") +
                      std::string(tableFormatName(format)));
      if (HasFatalFailure())
        return;
    }
}

namespace {

template <TableFormat F> void checkLastChunk(int64_t dim) {
  SCOPED_TRACE(std::string(tableFormatName(F)) + " dim " + std::to_string(dim));
  constexpr int V = chunkElems(F);
  const int64_t codeBytes = chunkBytesOf<F>(static_cast<int>(dim));
  // The codes of one row, then guard bytes the lane must not read.
  alignas(16) uint8_t buf[64 + 32];
  std::memset(buf, 0xAB, sizeof buf);
  for (int64_t k = 0; k < codeBytes; ++k)
    buf[k] = static_cast<uint8_t>(k + 1);
  const int64_t last = (dim + V - 1) / V - 1;
  RawChunk r;
  loadChunk<F>(buf, last, dim, r);
  const int elems = static_cast<int>(dim - last * V);
  const int n = chunkBytesOf<F>(elems);
  const uint8_t *bytes = reinterpret_cast<const uint8_t *>(r.w);
  for (int k = 0; k < 16; ++k)
    EXPECT_EQ(bytes[k], k < n ? buf[last * chunkBytes(F) + k] : 0)
        << "byte " << k;
  // Full aligned chunks take the vector load, others do not.
  EXPECT_TRUE(vectorChunk<F>(buf, V));
  EXPECT_FALSE(vectorChunk<F>(buf + 1, V));
  EXPECT_EQ(vectorChunk<F>(buf, elems), elems == V);
}

} // namespace

TEST(EmbeddingEmulation, PartialChunksNeverReadPastTheRow) {
  for (int64_t dim : {1, 3, 5, 7, 13, 20}) {
    checkLastChunk<TableFormat::kFloat32>(dim);
    checkLastChunk<TableFormat::kFloat16>(dim);
    checkLastChunk<TableFormat::kBFloat16>(dim);
    checkLastChunk<TableFormat::kInt8RowWise>(dim);
    checkLastChunk<TableFormat::kInt4RowWise>(dim);
  }
}

TEST(EmbeddingEmulation, SequenceInvalidIdsAreZeroRowsAndCounted) {
  TestTable table = makeTable(30, 12, TableFormat::kBFloat16, 4);
  std::vector<int64_t> ids = {3, -1, 29, 30, 0, 1000};
  Tensor idT = indexTensor(ids, DType::kInt64);
  TestKernelContext cpu(1, BoundsCheckMode::kWarning);
  cpu.addInput(table.tensor).addInput(idT).setNumOutputs(1);
  ASSERT_TRUE(runKernel("embedding_sequence", cpu).isOk());
  for (LookupBounds bounds : {LookupBounds::kWarning, LookupBounds::kFatal}) {
    LookupParams p;
    ASSERT_TRUE(setLookupDescriptors(p, {descOf(table)}, {FeatureDesc()},
                                     nullptr, nullptr)
                    .isOk());
    p.ids = idT.data();
    p.ids64 = 1;
    p.numIds = p.numBags = p.bagsPerFeature = 6;
    std::vector<float> out(6 * 12, std::nanf(""));
    p.out = out.data();
    p.outStride = 12;
    p.bounds = static_cast<uint8_t>(bounds);
    RecordingSink sink;
    runGrid(p, sink);
    // Zero rows for the invalid ids on every mode.
    expectClose(out.data(), cpu.output(0).data<float>(), 6 * 12,
                "embedding_sequence");
    if (bounds == LookupBounds::kWarning) {
      EXPECT_EQ(sink.invalid, cpu.invalidIds());
      EXPECT_EQ(sink.invalid, 3);
      EXPECT_EQ(sink.raised, 0);
    } else {
      ASSERT_EQ(sink.first.code,
                static_cast<int32_t>(DeviceErrorCode::kIdOutOfRange));
      EXPECT_EQ(ids[sink.first.b], sink.first.a);
      EXPECT_EQ(sink.first.c, sink.first.b); // bag = position
      EXPECT_EQ(sink.raised, 3);
    }
  }
}
