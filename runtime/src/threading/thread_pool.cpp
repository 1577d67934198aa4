//===- thread_pool.cpp - The runtime's worker threads ---------------------===//
#include "threading/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace ember {

namespace {
/// The shared state of one parallelFor call. Workers and the caller claim
/// chunks from `next` until none are left; the caller returns once every
/// worker that joined has left, so the state can live on the caller's stack.
struct LoopState {
  int64_t begin, end, chunk;
  const std::function<void(int64_t, int64_t)> *fn;
  std::atomic<int64_t> next{0};
  int64_t numChunks;
  std::mutex m;
  std::condition_variable cv;
  int activeHelpers = 0;

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
  bool stop = false;

  void workerMain() {
    for (;;) {
      LoopState *loop;
      {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return stop || !queue.empty(); });
        if (stop && queue.empty())
          return;
        loop = queue.front();
        queue.pop_front();
      }
      loop->work();
      std::lock_guard<std::mutex> lock(loop->m);
      if (--loop->activeHelpers == 0)
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
  loop.activeHelpers = helpers;
  {
    std::lock_guard<std::mutex> lock(impl_->m);
    for (int i = 0; i < helpers; ++i)
      impl_->queue.push_back(&loop);
  }
  if (helpers == 1)
    impl_->cv.notify_one();
  else
    impl_->cv.notify_all();
  loop.work();
  std::unique_lock<std::mutex> lock(loop.m);
  loop.cv.wait(lock, [&] { return loop.activeHelpers == 0; });
}

} // namespace ember
