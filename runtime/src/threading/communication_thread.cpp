//===- communication_thread.cpp - A session's communication stream --------===//
#include "threading/communication_thread.h"

namespace ember {

CommunicationThread::~CommunicationThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void CommunicationThread::submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
    if (!thread_.joinable()) {
      try {
        thread_ = std::thread([this] { loop(); });
      } catch (...) {
        jobs_.pop_back(); // never to run later with what it refers to gone
        throw;
      }
    }
  }
  wake_.notify_all();
}

void CommunicationThread::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty())
      return; // stopping, and every job has run
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

} // namespace ember
