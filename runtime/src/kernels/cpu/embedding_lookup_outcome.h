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
#include "threading/thread_pool.h"

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

/// Calls fn(bagBegin, bagEnd) over disjoint runs of bags covering
/// [0, numBags), on the pool. The runs hold about equal numbers of ids, not
/// of bags, so that threads get equal work when bag lengths differ (the 4
/// features with 20 ids and 22 with 1 of a DLRM batch). `bagOffsets` has
/// numBags + 1 non-decreasing entries; bag b is ids [bagOffsets[b],
/// bagOffsets[b + 1]). A bag belongs to the run holding its first id; empty
/// bags at the end belong to the last run; a run may hold no bag (inside a
/// long one) and is then skipped.
template <typename Fn>
void parallelForBagsByIds(ThreadPool &pool, const int64_t *bagOffsets,
                          int64_t numBags, int64_t dim, const Fn &fn) {
  const int64_t base = bagOffsets[0];
  const int64_t numIds = bagOffsets[numBags] - base;
  if (numIds <= 0 || pool.size() == 1) {
    fn(int64_t{0}, numBags);
    return;
  }
  const int64_t *end = bagOffsets + numBags;
  auto firstBagFrom = [&](int64_t id) {
    return static_cast<int64_t>(
        std::lower_bound(bagOffsets, end, base + id) - bagOffsets);
  };
  pool.parallelFor(0, numIds, std::max<int64_t>(1, (16 * 1024) / dim),
                   [&](int64_t idBegin, int64_t idEnd) {
                     int64_t first = idBegin == 0 ? 0 : firstBagFrom(idBegin);
                     int64_t last =
                         idEnd == numIds ? numBags : firstBagFrom(idEnd);
                     if (first < last)
                       fn(first, last);
                   });
}

} // namespace ember::embedding

#endif // EMBER_KERNELS_CPU_EMBEDDING_LOOKUP_OUTCOME_H
