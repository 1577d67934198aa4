//===- embedding_pool_loop.h - The lookup loops, per ISA -------*- C++ -*-===//
//
// Included once by each ISA translation unit (embedding_pool_portable.cpp,
// embedding_pool_avx2.cpp, embedding_pool_avx512.cpp) after it has defined
// EMBER_POOL_TARGET (the function attribute of that ISA, empty for portable
// code) and its row routines `template <TableFormat F> struct RowOps` with
// static members:
//   fill(acc, value, dim)          acc[d] = value
//   storeRow(out, row, dim)        out[d] = row[d]
// and, for poolBagsLoop (used by the portable TU; the AVX2 and AVX-512 TUs
// have register-blocked pooling loops of their own):
//   addRow(acc, row, w, dim)       acc[d] += w * row[d]
//   maxRow(acc, row, dim)          acc[d] = max(acc[d], row[d])
//   divide(acc, c, dim)            acc[d] /= c
//   maxZero(acc, dim)              acc[d] = max(acc[d], 0)
// The prefetch helpers here are shared by all of them.
// Everything here is a template instantiated with those internal types, so
// each ISA gets its own code and nothing compiled for AVX2 leaks into the
// portable path. No include guard on purpose: one inclusion per TU.
//
//===----------------------------------------------------------------------===//

#include "kernels/cpu/embedding_pool.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#ifndef EMBER_POOL_TARGET
#error "define EMBER_POOL_TARGET before including embedding_pool_loop.h"
#endif

namespace {

using ember::TableFormat;
using ember::embedding::Pooling;
using ember::embedding::PoolJob;
using ember::embedding::PoolResult;
using ember::embedding::QuantizedSums;

/// Rows to prefetch ahead: prefetchBytes() of rows (16 KiB by default, 2 KiB
/// on AMD without AVX-512) in flight per thread, at least 2 and at most 32
/// rows; 0 when prefetching is off.
inline int64_t prefetchDistance(int64_t rowBytes) {
  const int64_t bytes = ember::embedding::prefetchBytes();
  if (bytes == 0)
    return 0;
  return std::clamp<int64_t>(bytes / std::max<int64_t>(rowBytes, 1), 2, 32);
}

/// Prefetches one cache line into the L2 cache (prefetcht2), not L1: on the
/// AVX-512 Xeon of docs/performance.md, L1 prefetches (prefetcht0, what
/// FBGEMM's JIT kernel issues) of 16 rows ahead held the core at 5-7 GB/s on
/// 512-byte rows, L2 prefetches of 32 rows ahead reached 8-10 GB/s in the
/// same interleaved runs; the rows' loads then hit L2. On a Zen 3,
/// prefetcht0, prefetcht2 and prefetchnta measured level within the spread
/// (docs/performance.md). On x86 this is inline
/// asm: GCC deletes loops whose only statements are __builtin_prefetch calls
/// (it treats them as free of side effects), which silently removed every
/// row prefetch.
inline void prefetchLine(const uint8_t *p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht2 %0" : : "m"(*p));
#else
  __builtin_prefetch(p, 0, 1);
#endif
}

/// Prefetches every cache line of row `id` (ids outside the table are skipped:
/// their address is never formed).
inline void prefetchRow(const uint8_t *table, int64_t id, int64_t rows,
                        int64_t rowBytes) {
  if (static_cast<uint64_t>(id) >= static_cast<uint64_t>(rows))
    return;
  const uint8_t *row = table + id * rowBytes;
  const uint8_t *end = row + rowBytes;
  prefetchLine(row);
  // The following lines start at the next 64-byte boundary.
  for (const uint8_t *line = row + 64 - (reinterpret_cast<uintptr_t>(row) & 63);
       line < end; line += 64)
    prefetchLine(line);
}

template <class Ops, typename IndexT, bool kMax>
EMBER_POOL_TARGET PoolResult poolBagsLoop(const PoolJob &job) {
  PoolResult result;
  if (job.numBags <= 0)
    return result;
  const IndexT *ids = static_cast<const IndexT *>(job.ids);
  const uint8_t *table = job.table.data;
  const int64_t rows = job.table.rows, rowBytes = job.table.rowBytes;
  const int64_t dim = job.table.dim;
  const int64_t distance = prefetchDistance(rowBytes);
  const int64_t idsEnd = job.offsets[job.numBags];
  const float *weights = job.weights;
  const int64_t padding = job.paddingIdx;
  const bool hasPadding = padding >= 0;
  const bool check = job.checkBounds;
  const bool fbgemmOrder = job.quantizedSums == QuantizedSums::kFbgemm;
  // Prime the prefetcher with the first rows of the job.
  for (int64_t i = job.offsets[0];
       i < std::min(idsEnd, job.offsets[0] + distance); ++i)
    prefetchRow(table, ids[i], rows, rowBytes);
  for (int64_t b = 0; b < job.numBags; ++b) {
    const int64_t begin = job.offsets[b], end = job.offsets[b + 1];
    float *acc = job.out + b * job.outStride;
    Ops::fill(acc, kMax ? -std::numeric_limits<float>::infinity() : 0.0f, dim);
    int64_t count = 0;
    float biasSum = 0.0f; // quantized rows, kFast: the bag's weighted biases
    for (int64_t i = begin; i < end; ++i) {
      if (distance > 0 && i + distance < idsEnd)
        prefetchRow(table, ids[i + distance], rows, rowBytes);
      const int64_t id = ids[i];
      if (hasPadding && id == padding)
        continue;
      ++count;
      if (check && static_cast<uint64_t>(id) >= static_cast<uint64_t>(rows)) {
        if (job.stopAtInvalid) {
          result.firstInvalidPos = i;
          result.firstInvalidId = id;
          return result;
        }
        ++result.invalidIds;
        if (kMax)
          Ops::maxZero(acc, dim);
        continue;
      }
      const uint8_t *row = table + id * rowBytes;
      if (kMax)
        Ops::maxRow(acc, row, dim);
      else
        Ops::addRow(acc, row, weights ? weights[i] : 1.0f, dim, fbgemmOrder,
                    biasSum);
    }
    if (!kMax && Ops::kQuantized && !fbgemmOrder)
      for (int64_t d = 0; d < dim; ++d)
        acc[d] += biasSum;
    if (count == 0) {
      if (kMax)
        Ops::fill(acc, 0.0f, dim);
    } else if (!kMax && job.pooling == Pooling::kMean && count > 1) {
      Ops::divide(acc, static_cast<float>(count), dim);
    }
  }
  return result;
}

template <class Ops, typename IndexT>
EMBER_POOL_TARGET PoolResult gatherRowsLoop(const PoolJob &job) {
  PoolResult result;
  const IndexT *ids = static_cast<const IndexT *>(job.ids);
  const uint8_t *table = job.table.data;
  const int64_t rows = job.table.rows, rowBytes = job.table.rowBytes;
  const int64_t dim = job.table.dim;
  const int64_t distance = prefetchDistance(rowBytes);
  const int64_t n = job.numBags;
  for (int64_t i = 0; i < std::min(n, distance); ++i)
    prefetchRow(table, ids[i], rows, rowBytes);
  for (int64_t i = 0; i < n; ++i) {
    if (distance > 0 && i + distance < n)
      prefetchRow(table, ids[i + distance], rows, rowBytes);
    const int64_t id = ids[i];
    float *out = job.out + i * job.outStride;
    if (job.checkBounds &&
        static_cast<uint64_t>(id) >= static_cast<uint64_t>(rows)) {
      if (job.stopAtInvalid) {
        result.firstInvalidPos = i;
        result.firstInvalidId = id;
        return result;
      }
      ++result.invalidIds;
      Ops::fill(out, 0.0f, dim);
      continue;
    }
    Ops::storeRow(out, table + id * rowBytes, dim);
  }
  return result;
}

template <template <TableFormat> class RowOps, TableFormat F>
PoolResult poolBagsFor(const PoolJob &job) {
  bool isMax = job.pooling == Pooling::kMax;
  if (job.idsAre64)
    return isMax ? poolBagsLoop<RowOps<F>, int64_t, true>(job)
                 : poolBagsLoop<RowOps<F>, int64_t, false>(job);
  return isMax ? poolBagsLoop<RowOps<F>, int32_t, true>(job)
               : poolBagsLoop<RowOps<F>, int32_t, false>(job);
}

template <template <TableFormat> class RowOps, TableFormat F>
PoolResult gatherRowsFor(const PoolJob &job) {
  return job.idsAre64 ? gatherRowsLoop<RowOps<F>, int64_t>(job)
                      : gatherRowsLoop<RowOps<F>, int32_t>(job);
}

template <template <TableFormat> class RowOps>
PoolResult dispatchPoolBags(const PoolJob &job) {
  switch (job.table.format) {
  case TableFormat::kFloat32:
    return poolBagsFor<RowOps, TableFormat::kFloat32>(job);
  case TableFormat::kFloat16:
    return poolBagsFor<RowOps, TableFormat::kFloat16>(job);
  case TableFormat::kBFloat16:
    return poolBagsFor<RowOps, TableFormat::kBFloat16>(job);
  case TableFormat::kInt8RowWise:
    return poolBagsFor<RowOps, TableFormat::kInt8RowWise>(job);
  case TableFormat::kInt4RowWise:
    return poolBagsFor<RowOps, TableFormat::kInt4RowWise>(job);
  }
  return PoolResult();
}

template <template <TableFormat> class RowOps>
PoolResult dispatchGatherRows(const PoolJob &job) {
  switch (job.table.format) {
  case TableFormat::kFloat32:
    return gatherRowsFor<RowOps, TableFormat::kFloat32>(job);
  case TableFormat::kFloat16:
    return gatherRowsFor<RowOps, TableFormat::kFloat16>(job);
  case TableFormat::kBFloat16:
    return gatherRowsFor<RowOps, TableFormat::kBFloat16>(job);
  case TableFormat::kInt8RowWise:
    return gatherRowsFor<RowOps, TableFormat::kInt8RowWise>(job);
  case TableFormat::kInt4RowWise:
    return gatherRowsFor<RowOps, TableFormat::kInt4RowWise>(job);
  }
  return PoolResult();
}

} // namespace
