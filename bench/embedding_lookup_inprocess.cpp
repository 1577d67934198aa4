//===- embedding_lookup_inprocess.cpp - Ember's lookup in a peer's process
//-===//
//
// libember_bench_lookup: Ember's embedding_bag and the loads-only ceiling
// (row_read_ceiling.h) behind a C API, for bench/embedding_vs_peers.py to
// call through ctypes on the very table, ids and offsets buffers torch and
// FBGEMM read. Across processes the same lookup on the same data differs by
// up to 1.6x for a process's lifetime on a VM (the guest pages behind each
// table: docs/performance.md), which is as large as the differences being
// measured; in one process every side reads the same memory.
//
//   void *ember_bench_lookup_open(table, rows, dim, format, ids, num_ids,
//                                 offsets, num_bags, threads, flush_mib,
//                                 err, err_len)
//       table: rows x dim float32/float16/bfloat16, or rows x (dim + 8)
//       uint8 for int8_rowwise; ids int64 [num_ids]; offsets int64
//       [num_bags + 1]. The buffers must outlive the handle. Runs the lookup
//       once (checks the inputs, allocates the output). Null on error, with
//       the message in err.
//   int ember_bench_lookup_run(h, err, err_len)       one lookup; 0 or -1
//   int ember_bench_lookup_set_quantized_sums(h, order)  "fast" or "fbgemm":
//       this handle's later lookups add quantized rows in that order
//       (QuantizedSums; the process's default otherwise), so that two
//       handles on the same buffers compare the orders in one process;
//       0, or -1 for another order
//   int ember_bench_lookup_output(h, float *dst)      copies the [num_bags,
//                                                     dim] output; 0 or -1
//   double ember_bench_lookup_ceiling(h, distance)    seconds of one pass of
//                                                     the loads-only loop (-1
//                                                     unless 1 thread and rows
//                                                     of 4 bytes or more)
//   int64_t ember_bench_lookup_ceiling_distance(h)    the prefetch distance
//       at which that loop is fastest (each trial after reading flush_mib
//       MiB, as ember_embedding_driver's `ceiling` chooses it)
//   void ember_bench_lookup_close(h)
//
//===----------------------------------------------------------------------===//
#include "bench_kernel_context.h"
#include "embedding_bag_inputs.h"
#include "row_read_ceiling.h"

#include "kernels/cpu/embedding_pool.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace ember;

namespace {

struct Lookup {
  explicit Lookup(int threads) : ctx(threads) {}
  bench::BenchKernelContext ctx;
  bench::RowReads reads;
  std::vector<uint64_t> flush;
  std::optional<embedding::QuantizedSums> sums; // nullopt: the default
};

void setError(char *err, size_t errLen, const std::string &message) {
  if (err && errLen > 0)
    std::snprintf(err, errLen, "%s", message.c_str());
}

} // namespace

extern "C" {

void *ember_bench_lookup_open(const void *table, int64_t rows, int64_t dim,
                              const char *format, const int64_t *ids,
                              int64_t numIds, const int64_t *offsets,
                              int64_t numBags, int threads, int flushMib,
                              char *err, size_t errLen) {
  if (!table || !ids || !offsets || !format) {
    setError(err, errLen, "null table, ids, offsets or format");
    return nullptr;
  }
  if (numIds < 0 || numBags < 0 || threads <= 0 || flushMib < 0) {
    setError(err, errLen,
             "num_ids, num_bags and flush_mib must be >= 0 "
             "and threads positive");
    return nullptr;
  }
  auto layout = bench::embeddingTableLayout(format, rows, dim);
  if (!layout.isOk()) {
    setError(err, errLen, layout.status().toString());
    return nullptr;
  }
  auto lookup = std::make_unique<Lookup>(threads);
  Tensor tableView =
      Tensor::view(table, layout.value().first, layout.value().second);
  bench::setEmbeddingBagInputs(
      lookup->ctx, tableView, format, dim,
      Tensor::view(ids, DType::kInt64, Shape{numIds}),
      Tensor::view(offsets, DType::kInt64, Shape{numBags + 1}));
  lookup->ctx.setNumOutputs(1);
  Status s = lookup->ctx.run("embedding_bag");
  if (!s.isOk()) {
    setError(err, errLen, s.toString());
    return nullptr;
  }
  bench::RowReads &r = lookup->reads;
  r.table = static_cast<const uint8_t *>(table);
  r.rows = rows;
  r.rowBytes = static_cast<int64_t>(tableView.nbytes()) / rows;
  r.ids = ids;
  r.numIds = numIds;
  lookup->flush.assign(static_cast<size_t>(flushMib) << 17, 1);
  return lookup.release();
}

int ember_bench_lookup_run(void *handle, char *err, size_t errLen) {
  Lookup *lookup = static_cast<Lookup *>(handle);
  // The order is a process setting: set for this run only.
  if (lookup->sums)
    embedding::setQuantizedSumsOverride(lookup->sums);
  Status s = lookup->ctx.run("embedding_bag");
  if (lookup->sums)
    embedding::setQuantizedSumsOverride(std::nullopt);
  if (s.isOk())
    return 0;
  setError(err, errLen, s.toString());
  return -1;
}

int ember_bench_lookup_set_quantized_sums(void *handle, const char *order) {
  std::optional<embedding::QuantizedSums> sums =
      order ? embedding::parseQuantizedSums(order) : std::nullopt;
  if (!sums)
    return -1;
  static_cast<Lookup *>(handle)->sums = sums;
  return 0;
}

int ember_bench_lookup_output(void *handle, float *dst) {
  const Tensor &out = static_cast<Lookup *>(handle)->ctx.output(0);
  if (!out.defined() || out.dtype() != DType::kFloat32)
    return -1;
  std::memcpy(dst, out.data(), out.nbytes());
  return 0;
}

double ember_bench_lookup_ceiling(void *handle, int64_t distance) {
  Lookup *lookup = static_cast<Lookup *>(handle);
  if (lookup->reads.rowBytes < 4 || lookup->ctx.threadPool().size() != 1)
    return -1;
  return bench::timeRowReads(lookup->reads, distance);
}

int64_t ember_bench_lookup_ceiling_distance(void *handle) {
  Lookup *lookup = static_cast<Lookup *>(handle);
  if (lookup->reads.rowBytes < 4 || lookup->ctx.threadPool().size() != 1)
    return -1;
  return bench::fastestCeilingDistance(lookup->reads, lookup->flush);
}

void ember_bench_lookup_close(void *handle) {
  delete static_cast<Lookup *>(handle);
}

} // extern "C"
