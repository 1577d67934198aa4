//===- thread_pool.cpp - The runtime's worker threads ---------------------===//
//
// Waiting is "spin briefly, then sleep": a worker that finished a loop
// watches for the next one for up to kSpinMicros before it blocks on the
// condition variable, and a caller waiting for its helpers does the same.
// Kernels of one run follow each other within microseconds, and waking a
// sleeping thread costs tens of microseconds on a VM (a futex wake, the
// scheduler, an IPI): without the spin a second thread loses much of a
// short lookup to its own wake-up. The spin is short so that an idle pool
// does not burn a core.
//
//===----------------------------------------------------------------------===//
#include "threading/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ember {

namespace {

constexpr int64_t kSpinMicros = 50;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

/// Spins until done() or kSpinMicros have passed; returns done().
template <typename Done> bool spinBriefly(const Done &done) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done())
        return true;
      cpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return done();
  }
}

struct LoopState {
  int64_t begin, end, chunk;
  const std::function<void(int64_t, int64_t)> *fn;
  std::atomic<int64_t> next{0};
  int64_t numChunks;
  std::mutex m;
  std::condition_variable cv;
  std::atomic<int> activeHelpers{0};

  void work() {
    for (;;) {
      int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= numChunks)
        return;
      int64_t b = begin + c * chunk;
      (*fn)(b, std::min(end, b + chunk));
    }
  }
};
} // namespace

struct ThreadPool::Impl {
  int size = 1;
  std::vector<std::thread> workers;
  std::mutex m;
  std::condition_variable cv;
  std::deque<LoopState *> queue; // one entry per helper requested
  /// queue.size(), readable without the lock (the workers' spin).
  std::atomic<int64_t> queued{0};
  bool stop = false;
  std::atomic<bool> stopping{false};

  void workerMain() {
    for (;;) {
      spinBriefly([&] {
        return queued.load(std::memory_order_acquire) > 0 ||
               stopping.load(std::memory_order_relaxed);
      });
      LoopState *loop;
      {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return stop || !queue.empty(); });
        if (stop && queue.empty())
          return;
        loop = queue.front();
        queue.pop_front();
        queued.fetch_sub(1, std::memory_order_relaxed);
      }
      loop->work();
      // The last helper wakes the caller; the lock orders the notify after
      // the caller's check (no lost wake-up), and the caller may free the
      // loop as soon as it sees 0, so nothing touches it after the unlock.
      std::lock_guard<std::mutex> lock(loop->m);
      if (loop->activeHelpers.fetch_sub(1, std::memory_order_acq_rel) == 1)
        loop->cv.notify_all();
    }
  }
};

ThreadPool::ThreadPool(int numThreads) : impl_(new Impl) {
  if (numThreads <= 0)
    numThreads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  impl_->size = numThreads;
  for (int i = 1; i < numThreads; ++i)
    impl_->workers.emplace_back([this] { impl_->workerMain(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->m);
    impl_->stop = true;
    impl_->stopping.store(true, std::memory_order_relaxed);
  }
  impl_->cv.notify_all();
  for (auto &t : impl_->workers)
    t.join();
  delete impl_;
}

int ThreadPool::size() const { return impl_->size; }

void ThreadPool::parallelFor(int64_t begin, int64_t end, int64_t grain,
                             const std::function<void(int64_t, int64_t)> &fn) {
  if (end <= begin)
    return;
  grain = std::max<int64_t>(grain, 1);
  int64_t range = end - begin;
  int64_t maxChunks = (range + grain - 1) / grain;
  if (impl_->size == 1 || maxChunks == 1) {
    fn(begin, end);
    return;
  }
  // A few chunks per thread balance uneven work (bags of different lengths).
  int64_t numChunks = std::min<int64_t>(maxChunks, int64_t{impl_->size} * 4);
  LoopState loop;
  loop.begin = begin;
  loop.end = end;
  loop.chunk = (range + numChunks - 1) / numChunks;
  loop.numChunks = (range + loop.chunk - 1) / loop.chunk;
  loop.fn = &fn;
  int helpers = static_cast<int>(std::min<int64_t>(impl_->size - 1, loop.numChunks - 1));
  loop.activeHelpers.store(helpers, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(impl_->m);
    for (int i = 0; i < helpers; ++i)
      impl_->queue.push_back(&loop);
    impl_->queued.fetch_add(helpers, std::memory_order_release);
  }
  if (helpers == 1)
    impl_->cv.notify_one();
  else
    impl_->cv.notify_all();
  loop.work();
  spinBriefly([&] {
    return loop.activeHelpers.load(std::memory_order_acquire) == 0;
  });
  // Even when the spin saw 0, take the lock once: the last helper may still
  // hold loop.m (it notifies under it) and must be done with the loop
  // before it goes out of scope.
  std::unique_lock<std::mutex> lock(loop.m);
  loop.cv.wait(lock, [&] {
    return loop.activeHelpers.load(std::memory_order_acquire) == 0;
  });
}

} // namespace ember
