//===- communication_thread.h - A session's communication stream -*- C++
//-*-===//
//
// One worker thread that runs submitted jobs one after the other, in the
// order they were submitted: the CPU backend runs a plan's stream 1 (its
// collectives) on it while the caller's thread runs stream 0 (docs/runtime.md,
// "Overlapping communication"). It never runs kernels of the thread pool's
// kind: compute stays on the caller's thread and the pool.
//
// The thread starts with the first job and is joined by the destructor,
// after the jobs already submitted have run.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_THREADING_COMMUNICATION_THREAD_H
#define EMBER_THREADING_COMMUNICATION_THREAD_H

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace ember {

class CommunicationThread {
public:
  CommunicationThread() = default;
  ~CommunicationThread();
  CommunicationThread(const CommunicationThread &) = delete;
  CommunicationThread &operator=(const CommunicationThread &) = delete;

  /// Queues `job`; it runs after every job submitted before it. `job` must
  /// not throw. Throws (and queues nothing) when the thread cannot start.
  void submit(std::function<void()> job);

private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace ember

#endif // EMBER_THREADING_COMMUNICATION_THREAD_H
