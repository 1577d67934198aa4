//===- thread_pool.h - The runtime's worker threads ------------*- C++ -*-===//
#ifndef EMBER_THREADING_THREAD_POOL_H
#define EMBER_THREADING_THREAD_POOL_H

#include <cstdint>
#include <functional>

namespace ember {

/// A fixed set of worker threads that runs data-parallel loops. Several
/// threads (concurrent Session::run calls) may call parallelFor at the same
/// time; each call returns when all of its own chunks are done. A pool of
/// size 1 runs everything on the calling thread.
class ThreadPool {
public:
  /// numThreads <= 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int numThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  /// Number of threads that execute work, the calling thread included.
  int size() const;

  /// Calls fn(chunkBegin, chunkEnd) over disjoint chunks covering
  /// [begin, end), each at least `grain` long (except the last), spread over
  /// the pool. The calling thread works too. fn must not throw.
  void parallelFor(int64_t begin, int64_t end, int64_t grain,
                   const std::function<void(int64_t, int64_t)> &fn);

private:
  struct Impl;
  Impl *impl_;
};

} // namespace ember

#endif // EMBER_THREADING_THREAD_POOL_H
