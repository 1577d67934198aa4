//===- embedding_pool_whole_row.h - Pooling with a whole row in registers -===//
//
// The pooling loop for rows that fit in the vector registers at once (FBGEMM's
// JIT kernel gets the same shape by generating code per D): the number of
// vectors NV is a template argument, so every load and prefetch has a
// constant displacement from the row's address, the accumulators stay in
// registers for the whole bag, and each id is read once (the blocked loops
// of the AVX2 and AVX-512 files make one pass over the bag per block of
// columns). Sum, mean and weighted sum; max stays with the blocked loops.
//
// Included by embedding_pool_avx2.cpp and embedding_pool_avx512.cpp after
// embedding_pool_loop.h (prefetchDistance, prefetchLine, prefetchRow) and
// after defining the vector traits `V`:
//   V::Reg, V::Mask, V::kLanes
//   V::zero(), V::set1(f), V::add(a, b), V::fmadd(a, b, c) = a * b + c,
//   V::div(a, b), V::tailMask(n) (lanes of the last vector, 1..kLanes),
//   V::fullMask()
//   V::template load<F>(row, k, mask): vector k of the row's elements as
//       floats (codes without scale/bias); lanes outside `mask` read 0
//   V::store(out, k, v, mask): the lanes of `mask` of vector k
// AVX2 has no masked loads for 8- and 16-bit elements: its dispatcher uses
// this loop only when dim is a multiple of 8, and its masks are ignored.
// No include guard on purpose: one inclusion per TU.
//
//===----------------------------------------------------------------------===//

namespace {

/// Prefetches row `id` (skipped outside the table): the line at every 64
/// bytes from the row's start, kLines of them (all inside the row's codes),
/// and, when rows are not whole aligned lines or end in a scale and bias
/// (`lastLine`), the line of the row's last byte, so that every line the
/// row's lookup reads is requested.
template <int kLines>
EMBER_POOL_TARGET inline void prefetchRowLines(const uint8_t *table,
                                               int64_t id, int64_t rows,
                                               int64_t rowBytes,
                                               bool lastLine) {
  if (static_cast<uint64_t>(id) >= static_cast<uint64_t>(rows))
    return;
  const uint8_t *row = table + id * rowBytes;
#pragma GCC unroll 16
  for (int l = 0; l < kLines; ++l)
    prefetchLine(row + 64 * l);
  if (lastLine)
    prefetchLine(row + rowBytes - 1);
}

/// Bytes of the first NV vectors of a row in format F (an upper bound on the
/// bytes the loop reads, scale and bias excluded).
template <class V, TableFormat F, int NV> constexpr int64_t wholeRowCodeBytes() {
  constexpr int64_t elems = int64_t{NV} * V::kLanes;
  switch (F) {
  case TableFormat::kFloat32:
    return 4 * elems;
  case TableFormat::kFloat16:
  case TableFormat::kBFloat16:
    return 2 * elems;
  case TableFormat::kInt8RowWise:
    return elems;
  case TableFormat::kInt4RowWise:
    return elems / 2;
  }
  return 4 * elems;
}

/// Pools every bag of `job` (sum or mean, weighted when kWeighted) with the
/// row's NV vectors in registers; the last vector is masked by the row's
/// tail.
template <class V, TableFormat F, typename IndexT, int NV, bool kWeighted>
EMBER_POOL_TARGET PoolResult poolWholeRows(const PoolJob &job) {
  using ember::embedding::rowdecode::codeBytes;
  using ember::embedding::rowdecode::isQuantized;
  using ember::embedding::rowdecode::loadFloat;
  PoolResult result;
  if (job.numBags <= 0)
    return result;
  // Everything the loop reads from `job` in locals: stores to the output
  // could otherwise alias them and force reloads on every id.
  const IndexT *const ids = static_cast<const IndexT *>(job.ids);
  const uint8_t *const table = job.table.data;
  const int64_t rows = job.table.rows, rowBytes = job.table.rowBytes;
  const int64_t dim = job.table.dim;
  const int64_t scaleAt = isQuantized(F) ? codeBytes(F, dim) : 0;
  const float *const weights = job.weights;
  const int64_t *const offsets = job.offsets;
  const int64_t numBags = job.numBags, outStride = job.outStride;
  float *const outBase = job.out;
  const int64_t padding = job.paddingIdx;
  const bool hasPadding = padding >= 0, check = job.checkBounds,
             stopAtInvalid = job.stopAtInvalid,
             mean = job.pooling == Pooling::kMean;
  const int64_t distance = prefetchDistance(rowBytes);
  const int64_t idsEnd = offsets[numBags];
  // Lines at every 64 bytes of the NV vectors: the row has more than NV - 1
  // vectors' codes, so each of these starts inside the row. The last line
  // covers the rest of a misaligned row and a quantized row's scale/bias.
  constexpr int kLines =
      static_cast<int>((wholeRowCodeBytes<V, F, NV>() + 63) / 64);
  const bool lastLine =
      isQuantized(F) ||
      ((reinterpret_cast<uintptr_t>(table) | static_cast<uintptr_t>(rowBytes)) &
       63) != 0;
  const typename V::Mask tail =
      V::tailMask(dim - int64_t{NV - 1} * V::kLanes);
  // The mask of vector k: `tail` for the last one, else all lanes (a
  // constant once the loops over k are unrolled).
  auto lastMask = [tail](int k) { return k == NV - 1 ? tail : V::fullMask(); };
  for (int64_t i = offsets[0]; i < std::min(idsEnd, offsets[0] + distance); ++i)
    prefetchRowLines<kLines>(table, ids[i], rows, rowBytes, lastLine);
  // One stream of ids across the bags: the row `distance` ids ahead is
  // requested whether or not it is in the same bag, so the next bag's first
  // rows are in flight while this one finishes.
  const int64_t prefetchEnd = distance > 0 ? idsEnd - distance : offsets[0];
  for (int64_t bag = 0; bag < numBags; ++bag) {
    const int64_t begin = offsets[bag], end = offsets[bag + 1];
    typename V::Reg acc[NV];
#pragma GCC unroll 16
    for (int k = 0; k < NV; ++k)
      acc[k] = V::zero();
    int64_t count = 0;
    for (int64_t i = begin; i < end; ++i) {
      if (i < prefetchEnd)
        prefetchRowLines<kLines>(table, ids[i + distance], rows, rowBytes,
                                 lastLine);
      const int64_t id = ids[i];
      if (hasPadding && id == padding)
        continue;
      ++count;
      if (check && static_cast<uint64_t>(id) >= static_cast<uint64_t>(rows)) {
        if (stopAtInvalid) {
          result.firstInvalidPos = i;
          result.firstInvalidId = id;
          return result;
        }
        ++result.invalidIds;
        continue;
      }
      const uint8_t *row = table + id * rowBytes;
      if constexpr (isQuantized(F)) {
        float s = loadFloat(row + scaleAt), b = loadFloat(row + scaleAt + 4);
        if constexpr (kWeighted) {
          const float w = weights[i];
          s *= w;
          b *= w;
        }
        // FBGEMM's order: acc = codes * s + (acc + b), the multiply-add
        // fused, so that int8 sums are bit-identical to its kernels.
        const typename V::Reg vs = V::set1(s), vb = V::set1(b);
#pragma GCC unroll 16
        for (int k = 0; k < NV; ++k)
          acc[k] = V::fmadd(V::template load<F>(row, k, lastMask(k)), vs,
                            V::add(acc[k], vb));
      } else if constexpr (kWeighted) {
        const typename V::Reg vw = V::set1(weights[i]);
#pragma GCC unroll 16
        for (int k = 0; k < NV; ++k)
          acc[k] = V::fmadd(
              V::template load<F>(row, k, lastMask(k)), vw,
              acc[k]);
      } else {
#pragma GCC unroll 16
        for (int k = 0; k < NV; ++k)
          acc[k] = V::add(
              acc[k], V::template load<F>(row, k, lastMask(k)));
      }
    }
    if (mean && count > 1) {
      const typename V::Reg c = V::set1(static_cast<float>(count));
#pragma GCC unroll 16
      for (int k = 0; k < NV; ++k)
        acc[k] = V::div(acc[k], c);
    }
    float *out = outBase + bag * outStride;
#pragma GCC unroll 16
    for (int k = 0; k < NV; ++k)
      V::store(out, k, acc[k], lastMask(k));
  }
  return result;
}

} // namespace
