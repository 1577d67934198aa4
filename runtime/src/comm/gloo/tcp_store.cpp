//===- tcp_store.cpp - A key-value store over TCP for rendezvous ----------===//
//
// Wire format (native byte order: one machine or one architecture):
//   request  'S' u32 keyLen key u64 dataLen data   -> reply 'K'
//            'G' u32 keyLen key                    -> reply 'V' u64 len data
//                                                     or 'T' (timed out)
//
//===----------------------------------------------------------------------===//
#include "comm/gloo/tcp_store.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ember {

namespace {

using Clock = std::chrono::steady_clock;

bool writeAll(int fd, const void *data, size_t n) {
  const char *p = static_cast<const char *>(data);
  while (n) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool readAll(int fd, void *data, size_t n) {
  char *p = static_cast<char *>(data);
  while (n) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

constexpr uint32_t kMaxKey = 4096;
constexpr uint64_t kMaxValue = uint64_t{1} << 24;

/// The server: keys and values in memory, a thread per connection.
class TcpStoreServer {
public:
  TcpStoreServer(int listenFd, std::chrono::milliseconds timeout)
      : listenFd_(listenFd), timeout_(timeout),
        acceptor_([this] { acceptLoop(); }) {}

  ~TcpStoreServer() {
    stopping_ = true;
    ::shutdown(listenFd_, SHUT_RDWR);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int fd : clients_)
        ::shutdown(fd, SHUT_RDWR);
      cv_.notify_all();
    }
    acceptor_.join();
    for (std::thread &t : workers_)
      t.join();
    for (int fd : clients_)
      ::close(fd);
    ::close(listenFd_);
  }

private:
  void acceptLoop() {
    while (!stopping_) {
      pollfd p{listenFd_, POLLIN, 0};
      int n = ::poll(&p, 1, 100);
      if (n <= 0 || stopping_)
        continue;
      int fd = ::accept(listenFd_, nullptr, nullptr);
      if (fd < 0)
        continue;
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) {
        ::close(fd);
        break;
      }
      clients_.push_back(fd);
      workers_.emplace_back([this, fd] { serve(fd); });
    }
  }

  void serve(int fd) {
    for (;;) {
      char op;
      uint32_t keyLen;
      if (!readAll(fd, &op, 1) || !readAll(fd, &keyLen, 4) || keyLen > kMaxKey)
        return;
      std::string key(keyLen, '\0');
      if (!readAll(fd, key.data(), keyLen))
        return;
      if (op == 'S') {
        uint64_t len;
        if (!readAll(fd, &len, 8) || len > kMaxValue)
          return;
        std::vector<char> data(len);
        if (!readAll(fd, data.data(), len))
          return;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          values_[key] = std::move(data);
        }
        cv_.notify_all();
        if (!writeAll(fd, "K", 1))
          return;
      } else if (op == 'G') {
        std::vector<char> data;
        bool found;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          found = cv_.wait_for(lock, timeout_, [&] {
            return stopping_ || values_.count(key) != 0;
          });
          found = found && !stopping_;
          if (found)
            data = values_[key];
        }
        if (!found) {
          if (!writeAll(fd, "T", 1))
            return;
          continue;
        }
        uint64_t len = data.size();
        if (!writeAll(fd, "V", 1) || !writeAll(fd, &len, 8) ||
            !writeAll(fd, data.data(), len))
          return;
      } else {
        return;
      }
    }
  }

  int listenFd_;
  std::chrono::milliseconds timeout_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<char>> values_;
  std::vector<int> clients_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

Result<int> listenOn(int port) {
  int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  bool v6 = fd >= 0;
  if (!v6)
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return unavailable(std::string("TCP store: socket: ") +
                       std::strerror(errno));
  int one = 1, zero = 0;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  int rc;
  if (v6) {
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    rc = ::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a));
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<uint16_t>(port));
    rc = ::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a));
  }
  if (rc != 0 || ::listen(fd, 1024) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return unavailable("TCP store: rank 0 cannot listen on port " +
                       std::to_string(port) + ": " + why +
                       " (MASTER_PORT in use?)");
  }
  return fd;
}

Result<int> connectTo(const std::string &host, int port,
                      std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  std::string last = "no attempt";
  while (true) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int gai =
        ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (gai != 0) {
      last = ::gai_strerror(gai);
    } else {
      for (addrinfo *a = res; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0)
          continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          ::freeaddrinfo(res);
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          return fd;
        }
        last = std::strerror(errno);
        ::close(fd);
      }
      ::freeaddrinfo(res);
    }
    if (Clock::now() >= deadline)
      return deadlineExceeded(
          "TCP store: cannot reach " + host + ":" + std::to_string(port) +
          " within " + std::to_string(timeout.count() / 1000) + " s: " + last +
          " (is rank 0 running with the same "
          "MASTER_ADDR/MASTER_PORT?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

/// The client side; rank 0 also owns the server.
class TcpStore final : public gloo::rendezvous::Store {
public:
  TcpStore(int fd, std::unique_ptr<TcpStoreServer> server,
           std::chrono::milliseconds timeout)
      : fd_(fd), server_(std::move(server)), timeout_(timeout) {
    // A reply can take up to the server's timeout; allow a margin.
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000 + 10);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~TcpStore() override {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    server_.reset();
  }

  void set(const std::string &key, const std::vector<char> &data) override {
    std::lock_guard<std::mutex> lock(mutex_);
    uint32_t keyLen = static_cast<uint32_t>(key.size());
    uint64_t len = data.size();
    char ack = 0;
    if (!writeAll(fd_, "S", 1) || !writeAll(fd_, &keyLen, 4) ||
        !writeAll(fd_, key.data(), keyLen) || !writeAll(fd_, &len, 8) ||
        !writeAll(fd_, data.data(), len) || !readAll(fd_, &ack, 1) ||
        ack != 'K')
      throw std::runtime_error("TCP store: lost the connection to the store "
                               "(rank 0) while setting '" +
                               key + "'");
  }

  std::vector<char> get(const std::string &key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    uint32_t keyLen = static_cast<uint32_t>(key.size());
    char reply = 0;
    if (!writeAll(fd_, "G", 1) || !writeAll(fd_, &keyLen, 4) ||
        !writeAll(fd_, key.data(), keyLen) || !readAll(fd_, &reply, 1))
      throw std::runtime_error("TCP store: lost the connection to the store "
                               "(rank 0) while waiting for '" +
                               key + "'");
    if (reply == 'T')
      throw std::runtime_error("TCP store: timed out after " +
                               std::to_string(timeout_.count() / 1000) +
                               " s waiting for '" + key +
                               "' (a rank did not show up)");
    uint64_t len = 0;
    if (reply != 'V' || !readAll(fd_, &len, 8) || len > kMaxValue)
      throw std::runtime_error("TCP store: malformed reply for '" + key + "'");
    std::vector<char> data(len);
    if (!readAll(fd_, data.data(), len))
      throw std::runtime_error(
          "TCP store: lost the connection while reading '" + key + "'");
    return data;
  }

  void wait(const std::vector<std::string> &keys) override {
    for (const std::string &k : keys)
      (void)get(k);
  }
  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &) override {
    wait(keys);
  }

private:
  int fd_;
  std::unique_ptr<TcpStoreServer> server_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
};

} // namespace

Result<std::unique_ptr<gloo::rendezvous::Store>>
openTcpStore(const std::string &host, int port, bool serve,
             std::chrono::milliseconds timeout) {
  std::unique_ptr<TcpStoreServer> server;
  if (serve) {
    EMBER_ASSIGN_OR_RETURN(int listenFd, listenOn(port));
    server = std::make_unique<TcpStoreServer>(listenFd, timeout);
  }
  EMBER_ASSIGN_OR_RETURN(int fd, connectTo(host, port, timeout));
  return std::unique_ptr<gloo::rendezvous::Store>(
      new TcpStore(fd, std::move(server), timeout));
}

} // namespace ember
