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

#include <type_traits>
#include <utility>

namespace {

/// Prefetches row `id` (skipped outside the table): the line at every
/// 64 * kLineStep bytes from the row's start, of the row's first kLines
/// lines (all inside the row's codes), and, when rows are not whole aligned
/// lines or end in a scale and bias (`lastLine`), the line of the row's last
/// byte. With kLineStep 1 every line the row's lookup reads is requested;
/// with more, the others are left to the hardware prefetchers.
template <int kLines, int kLineStep = 1>
EMBER_POOL_TARGET __attribute__((always_inline)) inline void
prefetchRowLines(const uint8_t *table, int64_t id, int64_t rows,
                 int64_t rowBytes, bool lastLine) {
  if (static_cast<uint64_t>(id) >= static_cast<uint64_t>(rows))
    return;
  const uint8_t *row = table + id * rowBytes;
#pragma GCC unroll 16
  for (int l = 0; l < kLines; l += kLineStep)
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

/// Adds vectors [K0, K0 + NK) of one row (NV vectors in all) to the NK
/// accumulators: for quantized rows codes * s + (acc + b) with
/// kFbgemmOrder (FBGEMM's order, the multiply-add fused: int8 sums are
/// bit-identical to its kernels), else codes * s + acc with b added to
/// `biasSum` by the row's first vectors (K0 == 0; QuantizedSums::kFast);
/// w * row + acc for weighted float rows, row + acc otherwise. `w` is the
/// id's weight (1 unweighted; s and b are multiplied by it); the row's last
/// vector is masked by `tail`.
template <class V, TableFormat F, int NV, bool kWeighted, bool kFbgemmOrder,
          int K0 = 0, int NK = NV>
EMBER_POOL_TARGET __attribute__((always_inline)) inline void
addWholeRow(typename V::Reg (&acc)[NK], const uint8_t *row, int64_t scaleAt,
            float w, typename V::Mask tail, float &biasSum) {
  using ember::embedding::rowdecode::isQuantized;
  using ember::embedding::rowdecode::loadFloat;
  static_assert(K0 >= 0 && K0 + NK <= NV, "vectors outside the row");
  auto mask = [tail](int k) {
    return K0 + k == NV - 1 ? tail : V::fullMask();
  };
  if constexpr (isQuantized(F)) {
    float s = loadFloat(row + scaleAt), b = loadFloat(row + scaleAt + 4);
    if constexpr (kWeighted) {
      s *= w;
      b *= w;
    }
    const typename V::Reg vs = V::set1(s);
    if constexpr (kFbgemmOrder) {
      const typename V::Reg vb = V::set1(b);
#pragma GCC unroll 16
      for (int k = 0; k < NK; ++k)
        acc[k] = V::fmadd(V::template load<F>(row, K0 + k, mask(k)), vs,
                          V::add(acc[k], vb));
    } else {
      // One FMA per vector on each accumulator's chain (two with the bias
      // added per row): long chains hold back the loads of a memory-bound
      // bag (int8 1.03-1.21x on a Zen 3, docs/performance.md).
#pragma GCC unroll 16
      for (int k = 0; k < NK; ++k)
        acc[k] =
            V::fmadd(V::template load<F>(row, K0 + k, mask(k)), vs, acc[k]);
      if constexpr (K0 == 0)
        biasSum += b;
    }
  } else if constexpr (kWeighted) {
    const typename V::Reg vw = V::set1(w);
#pragma GCC unroll 16
    for (int k = 0; k < NK; ++k)
      acc[k] =
          V::fmadd(V::template load<F>(row, K0 + k, mask(k)), vw, acc[k]);
  } else {
#pragma GCC unroll 16
    for (int k = 0; k < NK; ++k)
      acc[k] = V::add(acc[k], V::template load<F>(row, K0 + k, mask(k)));
  }
}

/// Adds the bag's bias sum (kAddBias: quantized rows in the fast order),
/// divides by the bag's count for mean pooling and stores vectors
/// [K0, K0 + NK) of the bag's row (NV vectors in all).
template <class V, int NV, bool kAddBias, int K0 = 0, int NK = NV>
EMBER_POOL_TARGET __attribute__((always_inline)) inline void
storeWholeRow(typename V::Reg (&acc)[NK], float *out, bool mean, int64_t count,
              typename V::Mask tail, float biasSum) {
  if constexpr (kAddBias) {
    const typename V::Reg vb = V::set1(biasSum);
#pragma GCC unroll 16
    for (int k = 0; k < NK; ++k)
      acc[k] = V::add(acc[k], vb);
  }
  if (mean && count > 1) {
    const typename V::Reg c = V::set1(static_cast<float>(count));
#pragma GCC unroll 16
    for (int k = 0; k < NK; ++k)
      acc[k] = V::div(acc[k], c);
  }
#pragma GCC unroll 16
  for (int k = 0; k < NK; ++k)
    V::store(out, K0 + k, acc[k], K0 + k == NV - 1 ? tail : V::fullMask());
}

/// Calls fn(std::integral_constant<int, P>()) for each P in order.
template <class Fn, int... P>
EMBER_POOL_TARGET __attribute__((always_inline)) inline void
forEachPass(std::integer_sequence<int, P...>, Fn &&fn) {
  (fn(std::integral_constant<int, P>()), ...);
}

/// The least mean ids per bag of a job that poolWholeRows pools in pairs.
constexpr int64_t kPairMinMeanLength = 48;

/// Pools every bag of `job` (sum or mean, weighted when kWeighted) with the
/// row's NV vectors in registers; the last vector is masked by the row's
/// tail. With kPairs, bags go two at a time, their rows interleaved (row j
/// of bag b, row j of bag b + 1, ...) into two sets of accumulators: two
/// independent chains of adds and twice the independent loads in the
/// out-of-order window, while each bag still adds its rows in order (the
/// same bits as one bag at a time). With kPasses > 1 the row's columns are
/// pooled in kPasses passes over the bag (or pair) of NV / kPasses vectors
/// each (FBGEMM's JIT kernel does the same when a row does not fit its
/// registers): the first pass prefetches and reads the rows from memory,
/// the later ones find them in L1. The accumulators take
/// (kPairs ? 2 : 1) * NV / kPasses registers. kFbgemmSums: quantized rows
/// in FBGEMM's order (QuantizedSums::kFbgemm), else the fast order.
template <class V, TableFormat F, typename IndexT, int NV, bool kWeighted,
          bool kPairs, int kPasses = 1, bool kMayPrime = true,
          bool kFbgemmSums = false>
EMBER_POOL_TARGET PoolResult poolWholeRows(const PoolJob &job) {
  using ember::embedding::rowdecode::codeBytes;
  using ember::embedding::rowdecode::isQuantized;
  using Reg = typename V::Reg;
  static_assert(kPasses >= 1 && NV % kPasses == 0, "passes split the row");
  constexpr int NVP = NV / kPasses; // vectors per pass
  constexpr bool kAddBias = isQuantized(F) && !kFbgemmSums;
  using Passes = std::make_integer_sequence<int, kPasses>;
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
  // AVX2 rows of 16 vectors in one pass (fp32 rows of 512 bytes, the path
  // of AMD CPUs without AVX-512): one prefetch per 256 bytes of the row,
  // the L2's prefetchers bring the rest. Fewer prefetch instructions in
  // flight measured 1.04-1.10x of one per line in all 8 configurations on
  // a Zen 3 (in-process A/B, 1M and 10M rows, L 20 and 80, B 2,048 and
  // 16,384, 4 KiB and huge pages); one per 128 bytes 1.02-1.11x, one per
  // row 0.99-1.14x. Rows of 4 lines or fewer (fp32 D 64 and 32, int8
  // D 128) measured level or worse with fewer prefetches, so keep one per
  // line; the distance stays 2 KiB (4 and 1 KiB measured 0.92-0.98x and
  // 0.88-0.93x).
  constexpr int kLineStep = V::kLanes == 8 && NV == 16 && kPasses == 1 ? 4 : 1;
  // The lambdas that prefetch carry the ISA's target attribute: a lambda
  // without it is compiled for the baseline ISA, so GCC cannot inline
  // prefetchRowLines (an EMBER_POOL_TARGET function) into it and every row
  // paid an out-of-line call (A/B of the drivers, interleaved, 60 rounds:
  // int8 1.03-1.12x, fp32 1.04-1.05x by the median).
  auto prefetchAt = [&](int64_t pos) EMBER_POOL_TARGET
      __attribute__((always_inline)) {
    prefetchRowLines<kLines, kLineStep>(table, ids[pos], rows, rowBytes,
                                        lastLine);
  };
  for (int64_t i = offsets[0]; i < std::min(idsEnd, offsets[0] + distance); ++i)
    prefetchAt(i);
  // The TLB is primed twice as far ahead as the rows are prefetched: one
  // line of the row 2 * distance ids ahead, so that the page walk of a row
  // (random rows in 4 KiB pages miss the TLB almost every time; in a VM each
  // walk is a nested one) is done before its lines are requested, and the
  // row's prefetches and loads do not wait for it. (A/B on 10M x 128 fp32
  // rows, 1 thread: 1.02-1.12x by the median, 1.14-1.45x by the minimum.)
  // Not for AVX2 loops with more than 8 ymm of accumulators, which leave no
  // register to spare: there the priming measured 0.92-0.96x.
  // Nor where the caller says priming measured slower (kMayPrime false:
  // the AVX2 loops on AMD without AVX-512, avx2PrimesTlb).
  constexpr bool kPrime =
      kMayPrime && (V::kLanes >= 16 || (kPairs ? 2 : 1) * NVP <= 8);
  const int64_t primeAhead = kPrime ? 2 * distance : 0;
  auto primeAt = [&](int64_t pos) EMBER_POOL_TARGET
      __attribute__((always_inline)) {
    const int64_t id = ids[pos];
    if (static_cast<uint64_t>(id) < static_cast<uint64_t>(rows))
      prefetchLine(table + id * rowBytes);
  };
  for (int64_t i = offsets[0] + distance;
       i < std::min(idsEnd, offsets[0] + primeAhead); ++i)
    primeAt(i);
  int64_t bag = 0;
  // Pairs only for long bags: at L 20 they measured 0.87-0.95x of one bag
  // at a time (int8 1M rows, 1 thread), at L 80 1.00-1.07x.
  if (kPairs && idsEnd - offsets[0] >= kPairMinMeanLength * numBags) {
    // Two streams of rows, one per bag of the pair, each prefetched half the
    // distance ahead; a stream that runs past its bag continues in the same
    // bag of the next pair (bag + 2), so both of the next pair's bags have
    // their first rows in flight when it starts.
    const int64_t half = std::max<int64_t>(distance / 2, 1);
    // Prefetches the row `half` ahead in a stream and primes the TLB for
    // the one 2 * half ahead.
    auto streamPos = [&](int64_t pos, int64_t end, int64_t nextBag)
        EMBER_POOL_TARGET __attribute__((always_inline)) {
      if (pos < end)
        return pos;
      if (nextBag >= numBags)
        return int64_t{-1};
      pos = offsets[nextBag] + (pos - end);
      return pos < offsets[nextBag + 1] ? pos : int64_t{-1};
    };
    auto prefetchStream = [&](int64_t pos, int64_t end, int64_t nextBag)
        EMBER_POOL_TARGET __attribute__((always_inline)) {
      if (distance <= 0)
        return;
      const int64_t row = streamPos(pos + half, end, nextBag);
      if (row >= 0)
        prefetchAt(row);
      const int64_t prime =
          kPrime ? streamPos(pos + 2 * half, end, nextBag) : int64_t{-1};
      if (prime >= 0)
        primeAt(prime);
    };
    if (numBags > 1 && distance > 0) {
      for (int64_t i = offsets[1];
           i < std::min(offsets[2], offsets[1] + half); ++i)
        prefetchAt(i);
      for (int64_t i = offsets[1] + half;
           kPrime && i < std::min(offsets[2], offsets[1] + 2 * half); ++i)
        primeAt(i);
    }
    for (; bag + 1 < numBags; bag += 2) {
      const int64_t a = offsets[bag], b = offsets[bag + 1],
                    e = offsets[bag + 2];
      const int64_t common = std::min(b - a, e - b);
      bool ok = true;
      float biasA = 0.0f, biasB = 0.0f; // summed by the first pass
      forEachPass(Passes(), [&](auto pass) EMBER_POOL_TARGET
                  __attribute__((always_inline)) {
        constexpr int K0 = decltype(pass)::value * NVP;
        constexpr bool kFirst = K0 == 0;
        if (!ok)
          return;
        // Adds row i to `acc` (padding skipped, invalid ids counted once);
        // false at an invalid id with kFatal.
        auto addAt = [&](Reg(&acc)[NVP], int64_t i, int64_t & count,
                         float &biasSum) EMBER_POOL_TARGET
                     __attribute__((always_inline))
                         ->bool {
          const int64_t id = ids[i];
          if (hasPadding && id == padding)
            return true;
          ++count;
          if (check &&
              static_cast<uint64_t>(id) >= static_cast<uint64_t>(rows)) {
            if (stopAtInvalid)
              return false;
            if (kFirst)
              ++result.invalidIds;
            return true;
          }
          addWholeRow<V, F, NV, kWeighted, kFbgemmSums, K0, NVP>(
              acc, table + id * rowBytes, scaleAt,
              kWeighted ? weights[i] : 1.0f, tail, biasSum);
          return true;
        };
        Reg accA[NVP], accB[NVP];
#pragma GCC unroll 16
        for (int k = 0; k < NVP; ++k)
          accA[k] = accB[k] = V::zero();
        int64_t countA = 0, countB = 0;
        for (int64_t j = 0; j < common && ok; ++j) {
          if (kFirst) {
            prefetchStream(a + j, b, bag + 2);
            prefetchStream(b + j, e, bag + 3);
          }
          ok = addAt(accA, a + j, countA, biasA) &&
               addAt(accB, b + j, countB, biasB);
        }
        for (int64_t i = a + common; i < b && ok; ++i) {
          if (kFirst)
            prefetchStream(i, b, bag + 2);
          ok = addAt(accA, i, countA, biasA);
        }
        for (int64_t i = b + common; i < e && ok; ++i) {
          if (kFirst)
            prefetchStream(i, e, bag + 3);
          ok = addAt(accB, i, countB, biasB);
        }
        // An invalid id with kFatal (found by the first pass, before
        // anything of the pair is stored): the bags are pooled again one
        // at a time below, which stops at the first invalid id in order.
        if (!ok)
          return;
        storeWholeRow<V, NV, kAddBias, K0, NVP>(accA, outBase + bag * outStride,
                                                mean, countA, tail, biasA);
        storeWholeRow<V, NV, kAddBias, K0, NVP>(
            accB, outBase + (bag + 1) * outStride, mean, countB, tail, biasB);
      });
      if (!ok)
        break;
    }
  }
  // One stream of ids across the bags: the row `distance` ids ahead is
  // requested whether or not it is in the same bag, so the next bag's first
  // rows are in flight while this one finishes.
  const int64_t prefetchEnd = distance > 0 ? idsEnd - distance : offsets[0];
  const int64_t primeEnd = idsEnd - primeAhead;
  // The lean loop, for bags pooled with no TLB priming and no padding id
  // whose rows `distance` ahead all lie inside the ids (all but the last
  // few): no per-id test of the prefetch's range, of the padding id or of
  // the count (a bag's count is its length, invalid ids included, as
  // below), and the last-line prefetch chosen once per job. The same sums,
  // bit for bit. In one process on one table (Zen 3, 4 KiB pages,
  // 1 thread, 11-15 rounds x 5), against the general loop: fp32 rows of 64
  // columns 1.07-1.14x (1M and 10M rows, B 2,048 and 16,384, L 20 and 80;
  // huge pages 1.04x), 128 columns 1.06-1.12x, 32 columns 1.13x; int8 rows
  // of 64 columns 0.96-1.01x (level); int8 rows of 128 columns in two
  // passes, quantized sums in the fast order, 1.00-1.05x (1M and 10M rows,
  // L 20 and 80, 4 KiB and huge pages). Those per-id instructions cost a
  // memory-bound loop that much because they sit between the loads the
  // out-of-order window keeps in flight.
  auto leanBag = [&](int64_t begin, int64_t end, auto withLastLine)
                     EMBER_POOL_TARGET __attribute__((always_inline))
                         ->bool {
    constexpr bool kLastLine = decltype(withLastLine)::value;
    bool ok = true;
    float biasSum = 0.0f;
    forEachPass(
        Passes(), [&](auto pass) EMBER_POOL_TARGET
        __attribute__((always_inline)) {
          constexpr int K0 = decltype(pass)::value * NVP;
          constexpr bool kFirst = K0 == 0;
          if (!ok)
            return;
          Reg acc[NVP];
#pragma GCC unroll 16
          for (int k = 0; k < NVP; ++k)
            acc[k] = V::zero();
          for (int64_t i = begin; i < end; ++i) {
            if (kFirst)
              prefetchRowLines<kLines, kLineStep>(table, ids[i + distance],
                                                  rows, rowBytes, kLastLine);
            const int64_t id = ids[i];
            if (check &&
                static_cast<uint64_t>(id) >= static_cast<uint64_t>(rows)) {
              if (stopAtInvalid) {
                result.firstInvalidPos = i;
                result.firstInvalidId = id;
                ok = false;
                return;
              }
              if (kFirst)
                ++result.invalidIds;
              continue;
            }
            addWholeRow<V, F, NV, kWeighted, kFbgemmSums, K0, NVP>(
                acc, table + id * rowBytes, scaleAt,
                kWeighted ? weights[i] : 1.0f, tail, biasSum);
          }
          storeWholeRow<V, NV, kAddBias, K0, NVP>(
              acc, outBase + bag * outStride, mean, end - begin, tail, biasSum);
        });
    return ok;
  };
  for (; bag < numBags; ++bag) {
    const int64_t begin = offsets[bag], end = offsets[bag + 1];
    if constexpr (!kPrime) {
      if (!hasPadding && distance > 0 && end <= prefetchEnd) {
        if (!(lastLine ? leanBag(begin, end, std::true_type())
                       : leanBag(begin, end, std::false_type())))
          return result;
        continue;
      }
    }
    bool ok = true;
    float biasSum = 0.0f; // summed by the first pass
    forEachPass(Passes(), [&](auto pass) EMBER_POOL_TARGET
                __attribute__((always_inline)) {
      constexpr int K0 = decltype(pass)::value * NVP;
      constexpr bool kFirst = K0 == 0;
      if (!ok)
        return;
      Reg acc[NVP];
#pragma GCC unroll 16
      for (int k = 0; k < NVP; ++k)
        acc[k] = V::zero();
      int64_t count = 0;
      for (int64_t i = begin; i < end; ++i) {
        if (kFirst && i < prefetchEnd) {
          prefetchAt(i + distance);
          if (kPrime && i < primeEnd)
            primeAt(i + primeAhead);
        }
        const int64_t id = ids[i];
        if (hasPadding && id == padding)
          continue;
        ++count;
        if (check &&
            static_cast<uint64_t>(id) >= static_cast<uint64_t>(rows)) {
          if (stopAtInvalid) { // found by the first pass
            result.firstInvalidPos = i;
            result.firstInvalidId = id;
            ok = false;
            return;
          }
          if (kFirst)
            ++result.invalidIds;
          continue;
        }
        addWholeRow<V, F, NV, kWeighted, kFbgemmSums, K0, NVP>(
            acc, table + id * rowBytes, scaleAt, kWeighted ? weights[i] : 1.0f,
            tail, biasSum);
      }
      storeWholeRow<V, NV, kAddBias, K0, NVP>(acc, outBase + bag * outStride,
                                              mean, count, tail, biasSum);
    });
    if (!ok)
      return result;
  }
  return result;
}

} // namespace
