//===- embedding_test.cpp - The CUDA embedding lookups on a GPU -----------===//
//
// embedding_bag, grouped_embedding_bag and embedding_sequence through
// CudaKernelRunner against the CPU kernels of the same names on the same
// random inputs, their error paths, and the TBE launch API (float16 output).
// Without a GPU every test skips and says why.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/embedding/embedding_lookup.h"
#include "cuda_kernel_runner.h"

#include "../runtime/embedding_test_support.h"
#include "../runtime/support/expect_status.h"
#include "../runtime/support/test_kernel_context.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace ember;
using namespace ember::testing;
using ember::embedding::Pooling;

namespace {

const char *poolingStr(Pooling p) {
  return p == Pooling::kSum ? "sum" : p == Pooling::kMean ? "mean" : "max";
}

bool quantized(TableFormat f) {
  return f == TableFormat::kInt8RowWise || f == TableFormat::kInt4RowWise;
}

/// The same inputs and attributes on the CPU context and the GPU runner.
struct Both {
  TestKernelContext cpu;
  CudaKernelRunner gpu;
  explicit Both(BoundsCheckMode mode = BoundsCheckMode::kFatal)
      : cpu(2, mode), gpu(mode) {}
  Both &input(const Tensor &t) {
    cpu.addInput(t);
    gpu.addInput(t);
    return *this;
  }
  template <class T> Both &attr(const std::string &name, T value) {
    cpu.attrs().set(name, value);
    gpu.attrs().set(name, value);
    return *this;
  }
  /// Runs both; expects both to succeed and to agree.
  void expectSame(const std::string &kernel) {
    cpu.setNumOutputs(1);
    gpu.setNumOutputs(1);
    Status c = runKernel(kernel, cpu);
    ASSERT_TRUE(c.isOk()) << c.toString();
    Status g = gpu.run(kernel);
    ASSERT_TRUE(g.isOk()) << g.toString();
    const Tensor &want = cpu.output(0), &got = gpu.output(0);
    ASSERT_EQ(got.dtype(), DType::kFloat32);
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < want.numel(); ++i) {
      float w = want.data<float>()[i];
      ASSERT_NEAR(got.data<float>()[i], w, 2e-5f * std::max(1.0f, std::fabs(w)))
          << kernel << " element " << i;
    }
    EXPECT_EQ(gpu.invalidIds(), cpu.invalidIds());
  }
  /// Runs the GPU kernel; expects a failure of `code` whose message has
  /// `text`.
  void expectGpuError(const std::string &kernel, StatusCode code,
                      const std::string &text) {
    gpu.setNumOutputs(1);
    Status g = gpu.run(kernel);
    ASSERT_FALSE(g.isOk());
    EXPECT_EQ(g.code(), code) << g.toString();
    EXPECT_NE(g.message().find(text), std::string::npos) << g.toString();
  }
};

struct BagInputs {
  TestTable table;
  std::vector<int64_t> ids, offsets;
  std::vector<float> weights;
};

BagInputs bagInputs(TableFormat format, int64_t rows, int64_t dim,
                    int64_t batch, int64_t maxLength, uint32_t seed) {
  std::mt19937 gen(seed);
  BagInputs in;
  in.table = makeTable(rows, dim, format, seed + 1);
  in.offsets = offsetsOf(randomLengths(batch, maxLength, gen));
  in.ids = randomIds(in.offsets.back(), rows, gen);
  in.weights = randomWeights(in.offsets.back(), gen);
  return in;
}

void addTableAttrs(Both &b, const TestTable &t) {
  if (quantized(t.format)) {
    b.attr("format", t.formatName());
    b.attr("dim", t.dim);
  }
}

} // namespace

TEST(CudaEmbedding, EmbeddingBagMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  uint32_t seed = 1;
  for (TableFormat format : allFormats())
    for (Pooling pooling : {Pooling::kSum, Pooling::kMean, Pooling::kMax})
      for (int64_t dim : {1, 4, 13, 64, 128, 192, 300}) {
        SCOPED_TRACE(std::string(tableFormatName(format)) + " " +
                     poolingStr(pooling) + " dim " + std::to_string(dim));
        ++seed;
        BagInputs in = bagInputs(format, 97, dim, 33, 9, seed);
        bool includeLast = seed % 3 != 0;
        if (!includeLast)
          in.offsets.pop_back();
        bool weights = pooling == Pooling::kSum && seed % 2 == 0;
        int64_t padding = seed % 4 == 0 ? 5 : -1;
        if (padding >= 0)
          for (size_t i = 0; i < in.ids.size(); i += 4)
            in.ids[i] = padding;
        Both b;
        b.input(in.table.tensor)
            .input(
                indexTensor(in.ids, seed % 2 ? DType::kInt32 : DType::kInt64))
            .input(indexTensor(in.offsets,
                               seed % 5 ? DType::kInt64 : DType::kInt32));
        if (weights)
          b.input(floatTensor(in.weights));
        b.attr("pooling", std::string(poolingStr(pooling)))
            .attr("padding_idx", padding)
            .attr("include_last_offset", int64_t{includeLast ? 1 : 0});
        addTableAttrs(b, in.table);
        b.expectSame("embedding_bag");
        if (HasFatalFailure())
          return;
      }
}

TEST(CudaEmbedding, EmbeddingBagEdgeCases) {
  EMBER_SKIP_WITHOUT_GPU();
  // Batch 1; all bags empty; ids at the table edge; a large batch.
  for (auto [batch, maxLength] :
       {std::pair<int64_t, int64_t>{1, 5}, {6, 0}, {4096, 64}}) {
    BagInputs in =
        bagInputs(TableFormat::kFloat16, 1000, 96, batch, maxLength, 77);
    if (!in.ids.empty()) {
      in.ids.front() = 999;
      in.ids.back() = 0;
    }
    Both b;
    b.input(in.table.tensor)
        .input(indexTensor(in.ids, DType::kInt64))
        .input(indexTensor(in.offsets, DType::kInt64))
        .attr("pooling", std::string("mean"));
    b.expectSame("embedding_bag");
  }
  // Zero bags (offsets = [] with include_last_offset = 0): a [0, dim] output.
  BagInputs in = bagInputs(TableFormat::kFloat32, 10, 8, 1, 3, 3);
  CudaKernelRunner gpu;
  gpu.addInput(in.table.tensor)
      .addInput(indexTensor(in.ids, DType::kInt64))
      .addInput(indexTensor({}, DType::kInt64))
      .setNumOutputs(1);
  gpu.attrs().set("pooling", std::string("sum"));
  gpu.attrs().set("include_last_offset", int64_t{0});
  ASSERT_OK(gpu.run("embedding_bag"));
  EXPECT_EQ(gpu.output(0).shape(), (Shape{0, 8}));
}

TEST(CudaEmbedding, InvalidIdsFatalAndWarning) {
  EMBER_SKIP_WITHOUT_GPU();
  for (Pooling pooling : {Pooling::kSum, Pooling::kMean, Pooling::kMax}) {
    BagInputs in = bagInputs(TableFormat::kInt4RowWise, 50, 20, 16, 6, 9);
    ASSERT_GT(in.ids.size(), 4u);
    in.ids[1] = 50;
    in.ids[3] = -1;
    Both warn(BoundsCheckMode::kWarning);
    warn.input(in.table.tensor)
        .input(indexTensor(in.ids, DType::kInt64))
        .input(indexTensor(in.offsets, DType::kInt64))
        .attr("pooling", std::string(poolingStr(pooling)));
    addTableAttrs(warn, in.table);
    warn.expectSame("embedding_bag");
    EXPECT_EQ(warn.gpu.invalidIds(), 2);

    Both fatal(BoundsCheckMode::kFatal);
    fatal.input(in.table.tensor)
        .input(indexTensor(in.ids, DType::kInt32))
        .input(indexTensor(in.offsets, DType::kInt64))
        .attr("pooling", std::string(poolingStr(pooling)));
    addTableAttrs(fatal, in.table);
    fatal.expectGpuError("embedding_bag", StatusCode::kOutOfRange,
                         "is out of range for a table of 50 rows");
  }
}

TEST(CudaEmbedding, BadOffsetsAreErrors) {
  EMBER_SKIP_WITHOUT_GPU();
  TestTable table = makeTable(10, 8, TableFormat::kFloat32, 1);
  std::vector<int64_t> ids = {1, 2, 3, 4};
  struct Case {
    std::vector<int64_t> offsets;
    StatusCode code;
    std::string text;
  };
  for (const Case &c :
       {Case{{0, 3, 2, 4},
             StatusCode::kInvalidArgument,
             "offsets[2] = 2 is below offsets[1] = 3"},
        Case{{0, 2, 9}, StatusCode::kOutOfRange, "offsets[2] = 9 is outside"},
        Case{{1, 2, 4},
             StatusCode::kInvalidArgument,
             "offsets[0] must be 0, got 1"}}) {
    CudaKernelRunner gpu;
    gpu.addInput(table.tensor)
        .addInput(indexTensor(ids, DType::kInt64))
        .addInput(indexTensor(c.offsets, DType::kInt32))
        .setNumOutputs(1);
    gpu.attrs().set("pooling", std::string("sum"));
    Status s = gpu.run("embedding_bag");
    ASSERT_FALSE(s.isOk());
    EXPECT_EQ(s.code(), c.code) << s.toString();
    EXPECT_NE(s.message().find(c.text), std::string::npos) << s.toString();
  }
}

TEST(CudaEmbedding, HostSideChecksMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  BagInputs in = bagInputs(TableFormat::kFloat32, 10, 8, 3, 3, 5);
  // Weights with mean pooling.
  CudaKernelRunner gpu;
  gpu.addInput(in.table.tensor)
      .addInput(indexTensor(in.ids, DType::kInt64))
      .addInput(indexTensor(in.offsets, DType::kInt64))
      .addInput(floatTensor(in.weights))
      .setNumOutputs(1);
  gpu.attrs().set("pooling", std::string("mean"));
  Status s = gpu.run("embedding_bag");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("per_sample_weights are only supported"),
            std::string::npos);
  // A float index tensor.
  CudaKernelRunner bad;
  bad.addInput(in.table.tensor)
      .addInput(floatTensor({1.0f}))
      .addInput(indexTensor({0}, DType::kInt64))
      .setNumOutputs(1);
  bad.attrs().set("pooling", std::string("sum"));
  s = bad.run("embedding_bag");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("input 1 (indices)"), std::string::npos)
      << s.toString();
  // padding_idx past the table.
  CudaKernelRunner pad;
  pad.addInput(in.table.tensor)
      .addInput(indexTensor(in.ids, DType::kInt64))
      .addInput(indexTensor(in.offsets, DType::kInt64))
      .setNumOutputs(1);
  pad.attrs().set("pooling", std::string("sum"));
  pad.attrs().set("padding_idx", int64_t{10});
  s = pad.run("embedding_bag");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.toString();
}

namespace {

struct GroupedSetup {
  std::vector<TestTable> tables;
  std::vector<int64_t> featureTables, lengths, ids, outOffsets, dims;
  std::vector<std::string> pooling, formats;
  std::vector<float> weights;
  int64_t width = 0;
};

GroupedSetup groupedSetup(int64_t numTables, int64_t numFeatures, int64_t batch,
                          int64_t maxLength, int64_t gap, bool sumOnly,
                          uint32_t seed) {
  std::mt19937 gen(seed);
  GroupedSetup s;
  const int64_t dims[] = {16, 192, 24, 33, 7, 128, 64};
  for (int64_t t = 0; t < numTables; ++t) {
    TableFormat f = allFormats()[t % 5];
    s.tables.push_back(
        makeTable(30 + t, dims[t % 7], f, seed + static_cast<uint32_t>(t)));
    s.dims.push_back(dims[t % 7]);
    s.formats.push_back(s.tables.back().formatName());
  }
  for (int64_t f = 0; f < numFeatures; ++f) {
    int64_t t = (f * 3) % numTables;
    s.featureTables.push_back(t);
    s.pooling.push_back(sumOnly ? "sum"
                                : poolingStr(static_cast<Pooling>(f % 3)));
    s.width += gap;
    s.outOffsets.push_back(s.width);
    s.width += s.dims[t];
  }
  s.width += gap;
  s.lengths = randomLengths(numFeatures * batch, maxLength, gen);
  auto offsets = offsetsOf(s.lengths);
  for (int64_t f = 0; f < numFeatures; ++f)
    for (int64_t i = offsets[f * batch]; i < offsets[(f + 1) * batch]; ++i)
      s.ids.push_back(std::uniform_int_distribution<int64_t>(
          0, s.tables[s.featureTables[f]].rows - 1)(gen));
  s.weights = randomWeights(s.ids.size(), gen);
  return s;
}

void addGrouped(Both &b, const GroupedSetup &s, DType idType, DType lenType,
                bool weights) {
  b.input(indexTensor(s.ids, idType))
      .input(indexTensor(s.lengths, lenType))
      .input(weights ? floatTensor(s.weights) : Tensor());
  for (auto &t : s.tables)
    b.input(t.tensor);
  b.attr("feature_tables", s.featureTables)
      .attr("pooling", s.pooling)
      .attr("table_formats", s.formats)
      .attr("table_dims", s.dims)
      .attr("output_offsets", s.outOffsets)
      .attr("output_width", s.width);
}

} // namespace

TEST(CudaEmbedding, GroupedMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  struct Case {
    int64_t tables, features, batch, maxLength, gap;
    bool weights;
  };
  uint32_t seed = 40;
  for (const Case &c :
       {Case{5, 7, 9, 6, 0, false}, Case{5, 7, 1, 6, 3, false},
        Case{2, 3, 64, 0, 0, false}, Case{3, 4, 512, 40, 1, true},
        Case{40, 45, 5, 4, 0, false}}) {
    SCOPED_TRACE("features " + std::to_string(c.features) + " batch " +
                 std::to_string(c.batch));
    GroupedSetup s = groupedSetup(c.tables, c.features, c.batch, c.maxLength,
                                  c.gap, c.weights, ++seed);
    Both b(BoundsCheckMode::kWarning);
    addGrouped(b, s, seed % 2 ? DType::kInt32 : DType::kInt64,
               seed % 3 ? DType::kInt32 : DType::kInt64, c.weights);
    b.expectSame("grouped_embedding_bag");
    if (HasFatalFailure())
      return;
  }
}

TEST(CudaEmbedding, GroupedErrors) {
  EMBER_SKIP_WITHOUT_GPU();
  GroupedSetup s = groupedSetup(2, 3, 4, 5, 0, true, 3);
  ASSERT_FALSE(s.ids.empty());
  {
    GroupedSetup bad = s;
    bad.ids[0] = 1 << 20;
    Both b(BoundsCheckMode::kFatal);
    addGrouped(b, bad, DType::kInt64, DType::kInt32, false);
    b.expectGpuError("grouped_embedding_bag", StatusCode::kOutOfRange,
                     "id 1048576 at position 0");
    Both w(BoundsCheckMode::kWarning);
    addGrouped(w, bad, DType::kInt64, DType::kInt32, false);
    w.expectSame("grouped_embedding_bag");
    EXPECT_EQ(w.gpu.invalidIds(), 1);
  }
  {
    GroupedSetup bad = s;
    bad.lengths[2] = -1;
    Both b;
    addGrouped(b, bad, DType::kInt64, DType::kInt64, false);
    b.expectGpuError("grouped_embedding_bag", StatusCode::kInvalidArgument,
                     "length -1 at position 2 is negative");
  }
  {
    GroupedSetup bad = s;
    bad.lengths.back() += 1; // the last bag only: no other bag shifts
    Both b;
    addGrouped(b, bad, DType::kInt64, DType::kInt32, false);
    b.expectGpuError("grouped_embedding_bag", StatusCode::kInvalidArgument,
                     "the lengths sum to");
  }
}

TEST(CudaEmbedding, SequenceMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  uint32_t seed = 90;
  for (TableFormat format : allFormats())
    for (int64_t dim : {1, 5, 8, 64, 100}) {
      std::mt19937 gen(++seed);
      TestTable table = makeTable(30, dim, format, seed);
      auto ids = randomIds(257, 30, gen);
      Both b;
      b.input(table.tensor).input(indexTensor(ids, DType::kInt32));
      addTableAttrs(b, table);
      b.expectSame("embedding_sequence");
      if (HasFatalFailure())
        return;
    }
  TestTable table = makeTable(30, 8, TableFormat::kFloat32, 1);
  Both warn(BoundsCheckMode::kWarning);
  warn.input(table.tensor).input(indexTensor({3, -1, 29, 30}, DType::kInt64));
  warn.expectSame("embedding_sequence");
  EXPECT_EQ(warn.gpu.invalidIds(), 2);
  Both b(BoundsCheckMode::kFatal);
  b.input(table.tensor).input(indexTensor({1, 30}, DType::kInt64));
  b.expectGpuError("embedding_sequence", StatusCode::kOutOfRange,
                   "id 30 at position 1");
}

TEST(CudaEmbedding, TbeForwardHalfOutput) {
  EMBER_SKIP_WITHOUT_GPU();
  using namespace ember::cuda;
  using namespace ember::cuda::embedding;
  GroupedSetup s = groupedSetup(2, 2, 300, 32, 0, true, 8);
  // The reference: the CPU grouped lookup.
  TestKernelContext cpu;
  cpu.addInput(indexTensor(s.ids, DType::kInt64))
      .addInput(indexTensor(s.lengths, DType::kInt64))
      .addAbsentInput();
  for (auto &t : s.tables)
    cpu.addInput(t.tensor);
  cpu.setNumOutputs(1);
  cpu.attrs().set("feature_tables", s.featureTables);
  cpu.attrs().set("pooling", s.pooling);
  cpu.attrs().set("table_formats", s.formats);
  cpu.attrs().set("table_dims", s.dims);
  cpu.attrs().set("output_offsets", s.outOffsets);
  cpu.attrs().set("output_width", s.width);
  ASSERT_TRUE(runKernel("grouped_embedding_bag", cpu).isOk());

  // Device copies and the launch.
  std::vector<void *> buffers;
  auto upload = [&](const void *src, size_t bytes) {
    void *p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, bytes ? bytes : 1), cudaSuccess);
    if (src && bytes) {
      EXPECT_EQ(cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    }
    buffers.push_back(p);
    return p;
  };
  auto offsets = offsetsOf(s.lengths);
  TbeForwardArgs args;
  for (auto &t : s.tables) {
    TableDesc d;
    d.data = static_cast<const uint8_t *>(
        upload(t.tensor.data(), t.tensor.nbytes()));
    d.rows = t.rows;
    d.dim = static_cast<int32_t>(t.dim);
    d.format = static_cast<uint8_t>(t.format);
    d.rowBytes = tableRowBytes(t.format, t.dim);
    args.tables.push_back(d);
  }
  for (size_t f = 0; f < s.featureTables.size(); ++f) {
    FeatureDesc d;
    d.table = static_cast<int32_t>(s.featureTables[f]);
    d.outOffset = s.outOffsets[f];
    args.features.push_back(d);
  }
  const int64_t B = 300;
  args.ids = upload(s.ids.data(), s.ids.size() * 8);
  args.ids64 = true;
  args.numIds = static_cast<int64_t>(s.ids.size());
  args.offsets =
      static_cast<const int64_t *>(upload(offsets.data(), offsets.size() * 8));
  args.batch = B;
  void *out = upload(nullptr, static_cast<size_t>(B * s.width) * 2);
  args.out = out;
  args.outStride = s.width;
  args.output = TbeOutput::kFloat16;
  auto *errors = static_cast<DeviceErrorRecord *>(
      upload(nullptr, sizeof(DeviceErrorRecord)));
  ASSERT_EQ(cudaMemset(errors, 0, sizeof *errors), cudaSuccess);
  args.errors = errors;
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  Status st = launchTbeForward(args, prop.multiProcessorCount, nullptr);
  ASSERT_TRUE(st.isOk()) << st.toString();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint16_t> got(B * s.width);
  DeviceErrorRecord record;
  ASSERT_EQ(cudaMemcpy(got.data(), out, got.size() * 2, cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&record, errors, sizeof record, cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (void *p : buffers)
    cudaFree(p);
  EXPECT_EQ(record.code, 0) << describeDeviceError(record);
  const float *want = cpu.output(0).data<float>();
  for (size_t i = 0; i < got.size(); ++i) {
    float w = halfToFloat(floatToHalf(want[i]));
    ASSERT_NEAR(halfToFloat(got[i]), w, 2e-3f * std::max(1.0f, std::fabs(w)))
        << "element " << i;
  }
}
