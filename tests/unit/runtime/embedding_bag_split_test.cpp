//===- embedding_bag_split_test.cpp - parallelForBagsByIds ----------------===//
//
// The lookups' work split (runs of bags with equal numbers of ids) must hand
// every bag to exactly one call, in bounds, whatever the bag lengths: empty
// bags first and last, one bag longer than all the others together, all
// bags empty, offsets not starting at 0; with pools of 1, 2 and 3 threads.
// And it must balance: with 2 threads, a batch of a few long bags and many
// short ones is split by ids, not by bags.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/embedding_lookup_outcome.h"
#include "threading/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

using namespace ember;
using namespace ember::embedding;

namespace {

std::vector<int64_t> offsetsOf(const std::vector<int64_t> &lengths,
                               int64_t start = 0) {
  std::vector<int64_t> offsets{start};
  for (int64_t l : lengths)
    offsets.push_back(offsets.back() + l);
  return offsets;
}

void expectEveryBagOnce(const std::vector<int64_t> &offsets, int threads,
                        int64_t dim) {
  ThreadPool pool(threads);
  const int64_t numBags = static_cast<int64_t>(offsets.size()) - 1;
  std::vector<std::atomic<int>> seen(numBags);
  parallelForBagsByIds(pool, offsets.data(), numBags, dim,
                       [&](int64_t begin, int64_t end) {
                         ASSERT_LE(0, begin);
                         ASSERT_LT(begin, end);
                         ASSERT_LE(end, numBags);
                         for (int64_t b = begin; b < end; ++b)
                           seen[b].fetch_add(1);
                       });
  for (int64_t b = 0; b < numBags; ++b)
    EXPECT_EQ(seen[b].load(), 1) << "bag " << b << " with " << threads
                                 << " threads";
}

TEST(ParallelForBagsByIds, EveryBagExactlyOnce) {
  std::vector<std::vector<int64_t>> cases = {
      {0, 0, 5, 3, 0, 0},                   // empty first and last
      {100000, 1, 1, 1},                    // one bag longer than the rest
      {1, 1, 1, 100000, 0},                 // ... at the end
      {0, 0, 0, 0},                         // all empty
      {7},                                  // one bag
  };
  std::vector<int64_t> mixed; // 4 x L 20 then 22 x L 1, B = 512 each
  for (int f = 0; f < 26; ++f)
    for (int b = 0; b < 512; ++b)
      mixed.push_back(f < 4 ? 20 : 1);
  cases.push_back(mixed);
  for (const auto &lengths : cases)
    for (int threads : {1, 2, 3})
      for (int64_t dim : {1, 64}) {
        expectEveryBagOnce(offsetsOf(lengths), threads, dim);
        expectEveryBagOnce(offsetsOf(lengths, 1000), threads, dim);
      }
}

TEST(ParallelForBagsByIds, SplitsByIdsNotBags) {
  // 100 bags of 1000 ids, then 100,000 bags of 1 id: half the ids are in
  // the first 100 bags, so some run must start within them.
  std::vector<int64_t> lengths(100, 1000);
  lengths.resize(100100, 1);
  std::vector<int64_t> offsets = offsetsOf(lengths);
  ThreadPool pool(2);
  std::mutex m;
  std::vector<int64_t> starts;
  parallelForBagsByIds(pool, offsets.data(), 100100, 64,
                       [&](int64_t begin, int64_t) {
                         std::lock_guard<std::mutex> lock(m);
                         starts.push_back(begin);
                       });
  int runsInLongBags = 0;
  for (int64_t s : starts)
    runsInLongBags += s > 0 && s < 100;
  EXPECT_GT(runsInLongBags, 0) << "no run starts inside the long bags";
}

} // namespace
