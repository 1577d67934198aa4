//===- bench_embedding.cpp - Embedding lookup throughput ------------------===//
//
// Google Benchmark program for the CPU lookups:
//   BM_EmbeddingBag/<format>      one table, one embedding_bag call
//   BM_GroupedEmbeddingBag/<fmt>  8 tables (one feature each), one
//                                 grouped_embedding_bag call
//   BM_SeparateEmbeddingBags/<f>  the same 8 lookups as 8 embedding_bag calls
// Arguments: dim, batch, pooling factor L (ids per bag, fixed), threads.
// Tables have 1M rows (8 x 1M x 128 float32 = 4 GiB at most, built once per
// format/dim) in transparent huge pages (EMBER_BENCH_HUGEPAGES=0: 4 KiB
// pages); ids are uniform over the rows, so rows come from DRAM.
// Counter `bytes_per_second` counts useful bytes: rows read plus the pooled
// output written (not the ids).
//
//   build/<dir>/bin/bench_embedding --benchmark_filter='BM_EmbeddingBag/fp32'
//
//===----------------------------------------------------------------------===//
#include "bench_kernel_context.h"
#include "bench_table_memory.h"
#include "kernels/cpu/embedding_pool.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace ember;

namespace {

constexpr int64_t kRows = 1 << 20;
constexpr int kNumTables = 8;

uint64_t nextRandom(uint64_t &s) { // xorshift64*
  s ^= s >> 12;
  s ^= s << 25;
  s ^= s >> 27;
  return s * 0x2545F4914F6CDD1Dull;
}

/// Fills a table quickly with plausible values: floats in [-1, 1], halves and
/// bfloat16 with a small exponent, random codes with scale 1/255, bias -0.5.
void fillTable(Tensor &t, TableFormat format, int64_t dim, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  const int64_t rows = t.dim(0), rowBytes = t.dim(1) * dtypeSize(t.dtype());
  uint8_t *base = t.data<uint8_t>();
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t *row = base + r * rowBytes;
    switch (format) {
    case TableFormat::kFloat32:
      for (int64_t d = 0; d < dim; ++d) {
        float f = static_cast<float>(nextRandom(s) >> 40) / (1 << 23) - 1.0f;
        std::memcpy(row + 4 * d, &f, 4);
      }
      break;
    case TableFormat::kFloat16:
    case TableFormat::kBFloat16:
      for (int64_t d = 0; d < dim; ++d) {
        uint16_t bits = static_cast<uint16_t>(nextRandom(s));
        bits = format == TableFormat::kFloat16 ? (bits & 0x83ff) | 0x3800
                                               : (bits & 0x807f) | 0x3f00;
        std::memcpy(row + 2 * d, &bits, 2);
      }
      break;
    default: {
      int64_t codes = rowBytes - 8;
      for (int64_t d = 0; d < codes; ++d)
        row[d] = static_cast<uint8_t>(nextRandom(s));
      float scale = 1.0f / 255, bias = -0.5f;
      std::memcpy(row + codes, &scale, 4);
      std::memcpy(row + codes + 4, &bias, 4);
    }
    }
  }
}

/// The 8 tables of the current format/dim (rebuilt when they change, so at
/// most one set is alive).
const std::vector<Tensor> &tables(TableFormat format, int64_t dim) {
  static std::vector<Tensor> cache;
  static TableFormat cachedFormat;
  static int64_t cachedDim = -1;
  if (cachedDim != dim || cachedFormat != format) {
    cache.clear();
    for (int t = 0; t < kNumTables; ++t) {
      const bool huge = bench::hugePagesRequested();
      Tensor table;
      if (format == TableFormat::kInt8RowWise ||
          format == TableFormat::kInt4RowWise)
        table = *bench::allocateTable(
            DType::kUInt8, {kRows, tableRowBytes(format, dim)}, huge);
      else
        table = *bench::allocateTable(
            format == TableFormat::kFloat32   ? DType::kFloat32
            : format == TableFormat::kFloat16 ? DType::kFloat16
                                              : DType::kBFloat16,
            {kRows, dim}, huge);
      fillTable(table, format, dim, t + 1);
      cache.push_back(table);
    }
    cachedFormat = format;
    cachedDim = dim;
  }
  return cache;
}

Tensor randomIds(int64_t n, uint64_t seed) {
  Tensor ids = *Tensor::allocate(DType::kInt64, {n});
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
  for (int64_t i = 0; i < n; ++i)
    ids.data<int64_t>()[i] = static_cast<int64_t>(nextRandom(s) % kRows);
  return ids;
}

Tensor fixedOffsets(int64_t batch, int64_t pooling) {
  Tensor offsets = *Tensor::allocate(DType::kInt64, {batch + 1});
  for (int64_t b = 0; b <= batch; ++b)
    offsets.data<int64_t>()[b] = b * pooling;
  return offsets;
}

Tensor fixedLengths(int64_t count, int64_t pooling) {
  Tensor lengths = *Tensor::allocate(DType::kInt64, {count});
  for (int64_t i = 0; i < count; ++i)
    lengths.data<int64_t>()[i] = pooling;
  return lengths;
}

void setTableAttrs(Attributes &attrs, TableFormat format, int64_t dim) {
  attrs.set("format", std::string(tableFormatName(format))).set("dim", dim);
}

void reportBytes(benchmark::State &state, int64_t lookups, int64_t outputFloats,
                 TableFormat format, int64_t dim) {
  double bytes = static_cast<double>(lookups) * tableRowBytes(format, dim) +
                 static_cast<double>(outputFloats) * 4;
  state.counters["bytes_per_second"] =
      benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1024);
  state.counters["lookups_per_second"] =
      benchmark::Counter(static_cast<double>(lookups),
                         benchmark::Counter::kIsIterationInvariantRate);
}

void checkOk(benchmark::State &state, const Status &s) {
  if (!s.isOk())
    state.SkipWithError(s.toString().c_str());
}

template <TableFormat F> void BM_EmbeddingBag(benchmark::State &state) {
  const int64_t dim = state.range(0), batch = state.range(1),
                pooling = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  const Tensor &table = tables(F, dim)[0];
  bench::BenchKernelContext ctx(threads);
  ctx.setInputs(
      {table, randomIds(batch * pooling, 1), fixedOffsets(batch, pooling)});
  ctx.setNumOutputs(1);
  ctx.attrs().set("pooling", std::string("sum"));
  setTableAttrs(ctx.attrs(), F, dim);
  checkOk(state, ctx.run("embedding_bag")); // warm-up, allocates the output
  for (auto _ : state) {
    Status s = ctx.run("embedding_bag");
    if (!s.isOk()) {
      state.SkipWithError(s.toString().c_str());
      break;
    }
  }
  reportBytes(state, batch * pooling, batch * dim, F, dim);
}

template <TableFormat F> void BM_GroupedEmbeddingBag(benchmark::State &state) {
  const int64_t dim = state.range(0), batch = state.range(1),
                pooling = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  const auto &ts = tables(F, dim);
  bench::BenchKernelContext ctx(threads);
  std::vector<Tensor> inputs = {randomIds(kNumTables * batch * pooling, 2),
                                fixedLengths(kNumTables * batch, pooling),
                                Tensor()};
  std::vector<int64_t> featureTables, dims, outputOffsets;
  std::vector<std::string> poolings, formats;
  for (int t = 0; t < kNumTables; ++t) {
    inputs.push_back(ts[t]);
    featureTables.push_back(t);
    poolings.push_back("sum");
    formats.push_back(std::string(tableFormatName(F)));
    dims.push_back(dim);
    outputOffsets.push_back(t * dim);
  }
  ctx.setInputs(inputs);
  ctx.setNumOutputs(1);
  ctx.attrs()
      .set("feature_tables", featureTables)
      .set("pooling", poolings)
      .set("table_formats", formats)
      .set("table_dims", dims)
      .set("output_offsets", outputOffsets)
      .set("output_width", kNumTables * dim);
  checkOk(state, ctx.run("grouped_embedding_bag"));
  for (auto _ : state) {
    Status s = ctx.run("grouped_embedding_bag");
    if (!s.isOk()) {
      state.SkipWithError(s.toString().c_str());
      break;
    }
  }
  reportBytes(state, kNumTables * batch * pooling, kNumTables * batch * dim, F,
              dim);
}

template <TableFormat F>
void BM_SeparateEmbeddingBags(benchmark::State &state) {
  const int64_t dim = state.range(0), batch = state.range(1),
                pooling = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  const auto &ts = tables(F, dim);
  std::vector<std::unique_ptr<bench::BenchKernelContext>> ctxs;
  Tensor offsets = fixedOffsets(batch, pooling);
  for (int t = 0; t < kNumTables; ++t) {
    auto ctx = std::make_unique<bench::BenchKernelContext>(threads);
    ctx->setInputs({ts[t], randomIds(batch * pooling, 3 + t), offsets});
    ctx->setNumOutputs(1);
    ctx->attrs().set("pooling", std::string("sum"));
    setTableAttrs(ctx->attrs(), F, dim);
    checkOk(state, ctx->run("embedding_bag"));
    ctxs.push_back(std::move(ctx));
  }
  for (auto _ : state)
    for (auto &ctx : ctxs) {
      Status s = ctx->run("embedding_bag");
      if (!s.isOk()) {
        state.SkipWithError(s.toString().c_str());
        break;
      }
    }
  reportBytes(state, kNumTables * batch * pooling, kNumTables * batch * dim, F,
              dim);
}

/// embedding_bag with the portable row routines, to show what the AVX2 ones
/// buy (same arguments as BM_EmbeddingBag).
void BM_EmbeddingBagPortable(benchmark::State &state) {
  embedding::setRowIsaOverride(embedding::RowIsa::kPortable);
  BM_EmbeddingBag<TableFormat::kFloat32>(state);
  embedding::setRowIsaOverride(std::nullopt);
}

void lookupArgs(benchmark::internal::Benchmark *b,
                const std::vector<int64_t> &dims,
                const std::vector<int64_t> &batches) {
  b->ArgNames({"dim", "batch", "L", "threads"});
  for (int64_t dim : dims)
    for (int64_t batch : batches)
      for (int64_t pooling : {20, 80})
        for (int64_t threads : {1, 2})
          b->Args({dim, batch, pooling, threads});
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.3);
}

} // namespace

// Registration order groups benchmarks by format and dim, so each table set
// is built once.
#define EMBER_LOOKUP_BENCHMARKS(F, NAME, DIM)                                  \
  BENCHMARK_TEMPLATE(BM_EmbeddingBag, F)                                       \
      ->Name("BM_EmbeddingBag/" NAME "/D" #DIM)                                \
      ->Apply([](auto *b) {                                                    \
        lookupArgs(b, {DIM}, {2048, 16384});                                   \
      });                                                                      \
  BENCHMARK_TEMPLATE(BM_GroupedEmbeddingBag, F)                                \
      ->Name("BM_GroupedEmbeddingBag/" NAME "/D" #DIM)                         \
      ->Apply([](auto *b) {                                                    \
        lookupArgs(b, {DIM}, {2048, 8192});                                    \
      });                                                                      \
  BENCHMARK_TEMPLATE(BM_SeparateEmbeddingBags, F)                              \
      ->Name("BM_SeparateEmbeddingBags/" NAME "/D" #DIM)                       \
      ->Apply([](auto *b) {                                                    \
        lookupArgs(b, {DIM}, {2048, 8192});                                    \
      });

EMBER_LOOKUP_BENCHMARKS(TableFormat::kFloat32, "fp32", 64)
EMBER_LOOKUP_BENCHMARKS(TableFormat::kFloat32, "fp32", 128)
BENCHMARK(BM_EmbeddingBagPortable)
    ->Name("BM_EmbeddingBagPortable/fp32/D128")
    ->Apply([](auto *b) {
      lookupArgs(b, {128}, {2048, 16384});
    });
EMBER_LOOKUP_BENCHMARKS(TableFormat::kFloat16, "fp16", 64)
EMBER_LOOKUP_BENCHMARKS(TableFormat::kFloat16, "fp16", 128)
EMBER_LOOKUP_BENCHMARKS(TableFormat::kInt8RowWise, "int8", 64)
EMBER_LOOKUP_BENCHMARKS(TableFormat::kInt8RowWise, "int8", 128)

BENCHMARK_MAIN();
