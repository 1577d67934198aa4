//===- thread_pool_test.cpp - ThreadPool ----------------------------------===//
#include "threading/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace ember;

TEST(ThreadPool, CoversTheRangeExactlyOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {0, 1, 7, 1000, 12345}) {
      std::vector<std::atomic<int>> hits(n);
      pool.parallelFor(0, n, 16, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          hits[i]++;
      });
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(hits[i].load(), 1) << "threads=" << threads << " n=" << n;
    }
  }
}

TEST(ThreadPool, ConcurrentCallersEachGetTheirOwnLoop) {
  ThreadPool pool(3);
  std::vector<std::thread> callers;
  std::vector<int64_t> sums(8, 0);
  for (int c = 0; c < 8; ++c) {
    callers.emplace_back([&, c] {
      for (int rep = 0; rep < 50; ++rep) {
        std::atomic<int64_t> sum{0};
        pool.parallelFor(0, 1000, 10, [&](int64_t b, int64_t e) {
          int64_t local = 0;
          for (int64_t i = b; i < e; ++i)
            local += i;
          sum += local;
        });
        sums[c] += sum.load();
      }
    });
  }
  for (auto &t : callers)
    t.join();
  for (int64_t s : sums)
    EXPECT_EQ(s, 50 * 999 * 1000 / 2);
}
