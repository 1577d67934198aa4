//===- embedding_pool.h - Pooled and unpooled row lookups ------*- C++ -*-===//
//
// The inner loops of every CPU embedding lookup. A PoolJob is a run of
// consecutive bags over one table; poolBags reduces each bag's rows into a
// float32 output row, gatherRows copies (dequantizes) one row per id. Both
// prefetch upcoming rows and use the best row routines this CPU has, chosen
// once at start-up: AVX-512 (register-blocked accumulation), AVX2 + FMA +
// F16C, or portable C++.
// Callers split work into jobs per thread; a job never fails half-way except
// at the first out-of-range id when `stopAtInvalid` is set.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_CPU_EMBEDDING_POOL_H
#define EMBER_KERNELS_CPU_EMBEDDING_POOL_H

#include "ember/dtype.h"
#include "kernels/quantized_sums.h"
#include "kernels/shared/embedding_table.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace ember::embedding {

struct PoolJob {
  TableView table;
  const void *ids = nullptr; // int32 or int64 (idsAre64), indexed by offsets
  bool idsAre64 = false;
  const float *weights = nullptr;   // per id, or null (sum pooling only)
  const int64_t *offsets = nullptr; // bag b = ids[offsets[b], offsets[b + 1])
  int64_t numBags = 0;
  float *out = nullptr; // bag b writes out[b * outStride, + dim)
  int64_t outStride = 0;
  Pooling pooling = Pooling::kSum;
  int64_t paddingIdx = -1;   // ids equal to it are skipped (-1: none)
  bool checkBounds = true;   // false: kIgnore, ids are trusted
  bool stopAtInvalid = true; // kFatal: stop at the first invalid id
  QuantizedSums quantizedSums = QuantizedSums::kFast; // the run's order
};

struct PoolResult {
  int64_t invalidIds = 0;       // ids treated as zero rows (kWarning)
  int64_t firstInvalidPos = -1; // kFatal: position of the first invalid id
  int64_t firstInvalidId = 0;
};

/// Pools every bag of `job`. An invalid id (negative or >= rows) is a zero
/// row: it adds nothing to sum, counts in mean's divisor and takes part in
/// max as zeros. Empty bags (or bags of only padding) give zeros.
PoolResult poolBags(const PoolJob &job);

/// Unpooled lookup: for i in [0, numBags) (offsets unused) writes row
/// ids[i] to out + i * outStride. Invalid ids give zero rows (or stop).
PoolResult gatherRows(const PoolJob &job);

/// The row routine sets, in order of preference.
enum class RowIsa { kPortable, kAvx2, kAvx512 };
std::string_view rowIsaName(RowIsa isa);
/// The set in use: the best the CPU supports, capped by the environment
/// variable EMBER_CPU_ISA (portable, avx2, avx512), unless setRowIsaOverride
/// says otherwise.
RowIsa activeRowIsa();
/// Whether this CPU can run `isa`.
bool rowIsaSupported(RowIsa isa);
/// Bytes of rows the lookups prefetch ahead of the row they are reading:
/// defaultPrefetchBytes() unless the environment variable
/// EMBER_PREFETCH_BYTES (0 = no prefetch, up to 1 MiB) says otherwise. Read
/// once.
int64_t prefetchBytes();

/// This CPU's default prefetch distance in bytes of rows: 2048 on AMD CPUs
/// without AVX-512 (Zen 1-3; measured on a Zen 3), 16384 elsewhere (measured
/// on an AVX-512 Xeon).
int64_t defaultPrefetchBytes();

/// Forces a set (tests and benchmarks compare them); nullopt restores the
/// default. Not meant to be changed while lookups run.
void setRowIsaOverride(std::optional<RowIsa> isa);

/// Passes the AVX2 lookups make over a bag for unweighted float32 rows of
/// 128 columns (16 ymm vectors): 1 keeps all 16 accumulators in registers
/// and reads each row once; 2 pools 64 columns at a time (the second pass
/// finds the rows in L1) and leaves registers to prime the TLB.
/// defaultAvx2WideRowPasses() unless EMBER_AVX2_WIDE_ROW_PASSES (1 or 2)
/// says otherwise (read once) or a test overrides it. Results are
/// bit-identical either way (each column's sum in id order).
int avx2WideRowPasses();
/// 1 on AMD CPUs without AVX-512 (measured on a Zen 3), 2 elsewhere
/// (measured on an AVX-512 Xeon running the AVX2 routines).
int defaultAvx2WideRowPasses();
/// Forces 1 or 2 passes (tests compare them); nullopt restores the default.
/// Not meant to be changed while lookups run.
void setAvx2WideRowPassesOverride(std::optional<int> passes);

/// Whether the AVX2 lookups prime the TLB (one line of the row twice the
/// prefetch distance ahead, where registers allow): false on AMD CPUs
/// without AVX-512 (measured slower on a Zen 3), true elsewhere (measured
/// faster on an AVX-512 Xeon). Read once; results do not depend on it.
bool avx2PrimesTlb();

namespace detail {
PoolResult poolBagsPortable(const PoolJob &job);
PoolResult gatherRowsPortable(const PoolJob &job);
PoolResult poolBagsAvx2(const PoolJob &job);
PoolResult gatherRowsAvx2(const PoolJob &job);
PoolResult poolBagsAvx512(const PoolJob &job);
PoolResult gatherRowsAvx512(const PoolJob &job);
} // namespace detail

} // namespace ember::embedding

#endif // EMBER_KERNELS_CPU_EMBEDDING_POOL_H
