//===- embedding_lookup_outcome.h - Merging per-thread results -*- C++ -*-===//
//
// A lookup runs as PoolJobs on several threads; each job reports how many
// ids it zeroed (kWarning) or where it stopped (kFatal). LookupOutcome merges
// them and keeps the first invalid id by position, so the error a run reports
// does not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_CPU_EMBEDDING_LOOKUP_OUTCOME_H
#define EMBER_KERNELS_CPU_EMBEDDING_LOOKUP_OUTCOME_H

#include "kernels/cpu/embedding_pool.h"

#include <algorithm>
#include <cstdint>
#include <mutex>

namespace ember::embedding {

class LookupOutcome {
public:
  /// Merges one job's result; `tag` says which feature/table the job was.
  void merge(const PoolResult &r, int64_t tag) {
    if (r.invalidIds == 0 && r.firstInvalidPos < 0)
      return;
    std::lock_guard<std::mutex> lock(mutex_);
    invalidIds_ += r.invalidIds;
    if (r.firstInvalidPos >= 0 &&
        (firstPos_ < 0 || r.firstInvalidPos < firstPos_)) {
      firstPos_ = r.firstInvalidPos;
      firstId_ = r.firstInvalidId;
      firstTag_ = tag;
    }
  }
  int64_t invalidIds() const { return invalidIds_; }
  bool stopped() const { return firstPos_ >= 0; }
  int64_t firstPos() const { return firstPos_; }
  int64_t firstId() const { return firstId_; }
  int64_t firstTag() const { return firstTag_; }

private:
  std::mutex mutex_;
  int64_t invalidIds_ = 0;
  int64_t firstPos_ = -1, firstId_ = 0, firstTag_ = 0;
};

/// Bags per parallelFor chunk: enough rows that a chunk amortizes its
/// dispatch (about 16K elements of work), at least one bag.
inline int64_t lookupGrain(int64_t numBags, int64_t numIds, int64_t dim) {
  int64_t idsPerBag = numBags > 0 ? std::max<int64_t>(1, numIds / numBags) : 1;
  return std::max<int64_t>(1,
                           (16 * 1024) / std::max<int64_t>(1, idsPerBag * dim));
}

} // namespace ember::embedding

#endif // EMBER_KERNELS_CPU_EMBEDDING_LOOKUP_OUTCOME_H
