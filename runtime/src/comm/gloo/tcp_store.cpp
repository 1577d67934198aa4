//===- tcp_store.cpp - A key-value store over TCP for rendezvous ----------===//
//
// Wire format, integers little-endian:
//   greeting  client -> "EMBRSTO1", server -> "EMBRSTO1" (8 bytes each)
//   set       'S' u32 keyLen u64 valueLen key value -> 'K'
//                                                    | 'E' u32 len message
//   check     'C' u32 count {u32 keyLen key}*       -> 'V' u32 count
//                                    {u8 present [u64 len value]}* | 'E' ...
//
//===----------------------------------------------------------------------===//
#include "comm/gloo/tcp_store.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

namespace ember {

namespace {

using Clock = StoreClock;

constexpr char kGreeting[8] = {'E', 'M', 'B', 'R', 'S', 'T', 'O', '1'};
constexpr uint32_t kMaxKey = 1024;
constexpr uint64_t kMaxValue = uint64_t{16} << 20;
constexpr uint32_t kMaxCheckKeys = 65537;
constexpr uint64_t kMaxStoredBytes = uint64_t{256} << 20;
constexpr size_t kMaxKeys = size_t{1} << 20;
constexpr size_t kMaxConnections = 1024;
constexpr uint64_t kMaxReply = uint64_t{64} << 20;
constexpr auto kGreetingTimeout = std::chrono::seconds(10);
constexpr int kReportedDrops = 5;

void putU32(std::string &s, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void putU64(std::string &s, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    s += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t getU32(const char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}
uint64_t getU64(const char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

std::string peerName(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getpeername(fd, reinterpret_cast<sockaddr *>(&ss), &len) != 0)
    return "an unknown peer";
  char host[NI_MAXHOST], port[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<sockaddr *>(&ss), len, host, sizeof(host),
                    port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "an unknown peer";
  return std::string(host) + ":" + port;
}

// --- server
// -------------------------------------------------------------------

class TcpStoreServer {
public:
  TcpStoreServer(std::vector<int> listenFds, std::string where)
      : listenFds_(std::move(listenFds)), where_(std::move(where)) {
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0)
      wake_[0] = wake_[1] = -1;
    thread_ = std::thread([this] { loop(); });
  }

  ~TcpStoreServer() {
    stopping_ = true;
    if (wake_[1] >= 0) {
      char c = 0;
      (void)!::write(wake_[1], &c, 1);
    }
    thread_.join();
    for (auto &[fd, c] : clients_)
      ::close(fd);
    for (int fd : listenFds_)
      ::close(fd);
    for (int fd : wake_)
      if (fd >= 0)
        ::close(fd);
  }

private:
  struct Client {
    std::string in, out;
    bool greeted = false;
    Clock::time_point since;
    std::string peer;
  };

  void drop(int fd, const std::string &why) {
    if (drops_ < kReportedDrops)
      std::fprintf(stderr,
                   "ember: rendezvous store %s: closed the connection of %s: "
                   "%s%s\n",
                   where_.c_str(), clients_[fd].peer.c_str(), why.c_str(),
                   drops_ + 1 == kReportedDrops ? " (further ones not reported)"
                                                : "");
    ++drops_;
    ::close(fd);
    clients_.erase(fd);
  }

  static void refuse(Client &c, const std::string &message) {
    c.out += 'E';
    putU32(c.out, static_cast<uint32_t>(message.size()));
    c.out += message;
  }

  /// Handles complete requests at the front of c.in. Returns an error for a
  /// malformed one (the connection is then closed).
  std::string serve(Client &c) {
    for (;;) {
      if (!c.greeted) {
        if (c.in.size() < sizeof(kGreeting))
          return std::memcmp(c.in.data(), kGreeting, c.in.size()) == 0
                     ? ""
                     : "not an Ember store client (bad greeting)";
        if (std::memcmp(c.in.data(), kGreeting, sizeof(kGreeting)) != 0)
          return "not an Ember store client (bad greeting)";
        c.in.erase(0, sizeof(kGreeting));
        c.out.append(kGreeting, sizeof(kGreeting));
        c.greeted = true;
      }
      if (c.in.empty())
        return "";
      const char op = c.in[0];
      if (op == 'S') {
        if (c.in.size() < 13)
          return "";
        uint32_t keyLen = getU32(c.in.data() + 1);
        uint64_t len = getU64(c.in.data() + 5);
        if (keyLen == 0 || keyLen > kMaxKey)
          return "a key of " + std::to_string(keyLen) + " bytes (1 to " +
                 std::to_string(kMaxKey) + ")";
        if (len > kMaxValue)
          return "a value of " + std::to_string(len) + " bytes (at most " +
                 std::to_string(kMaxValue) + ")";
        if (c.in.size() < 13 + keyLen + len)
          return "";
        std::string key = c.in.substr(13, keyLen);
        std::string value = c.in.substr(13 + keyLen, len);
        c.in.erase(0, 13 + keyLen + len);
        if (values_.count(key))
          refuse(c, "key '" + key + "' is set already (keys are set once)");
        else if (values_.size() >= kMaxKeys ||
                 storedBytes_ + key.size() + value.size() > kMaxStoredBytes)
          refuse(c, "the store is full");
        else {
          storedBytes_ += key.size() + value.size();
          values_.emplace(std::move(key), std::move(value));
          c.out += 'K';
        }
      } else if (op == 'C') {
        if (c.in.size() < 5)
          return "";
        uint32_t count = getU32(c.in.data() + 1);
        if (count > kMaxCheckKeys)
          return "a check of " + std::to_string(count) + " keys";
        size_t at = 5;
        std::vector<std::string> keys;
        keys.reserve(count);
        for (uint32_t i = 0; i < count; ++i) {
          if (c.in.size() < at + 4)
            return "";
          uint32_t keyLen = getU32(c.in.data() + at);
          if (keyLen == 0 || keyLen > kMaxKey)
            return "a key of " + std::to_string(keyLen) + " bytes (1 to " +
                   std::to_string(kMaxKey) + ")";
          if (c.in.size() < at + 4 + keyLen)
            return "";
          keys.push_back(c.in.substr(at + 4, keyLen));
          at += 4 + keyLen;
        }
        c.in.erase(0, at);
        std::string reply = "V";
        putU32(reply, count);
        for (const std::string &k : keys) {
          auto it = values_.find(k);
          reply += it == values_.end() ? '\0' : '\1';
          if (it != values_.end()) {
            putU64(reply, it->second.size());
            reply += it->second;
          }
          if (reply.size() > kMaxReply)
            break;
        }
        if (reply.size() > kMaxReply)
          refuse(c, "the reply would be larger than 64 MiB");
        else
          c.out += reply;
      } else {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "0x%02x",
                      static_cast<unsigned char>(op));
        return std::string("an unknown request ") + buf;
      }
    }
  }

  void loop() {
    std::vector<pollfd> fds;
    char buf[1 << 16];
    while (!stopping_) {
      fds.clear();
      if (wake_[0] >= 0)
        fds.push_back({wake_[0], POLLIN, 0});
      for (int fd : listenFds_)
        fds.push_back({fd, POLLIN, 0});
      size_t firstClient = fds.size();
      for (auto &[fd, c] : clients_)
        fds.push_back(
            {fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)),
             0});
      int n = ::poll(fds.data(), fds.size(), 200);
      if (stopping_)
        break;
      if (n < 0)
        continue;
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!fds[i].revents)
          continue;
        int fd = fds[i].fd;
        if (fd == wake_[0])
          continue;
        if (i < firstClient) {
          int client =
              ::accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (client < 0)
            continue;
          Client &c = clients_[client];
          c.since = Clock::now();
          c.peer = peerName(client);
          if (clients_.size() > kMaxConnections)
            drop(client, "too many connections (" +
                             std::to_string(kMaxConnections) + ")");
          continue;
        }
        auto it = clients_.find(fd);
        if (it == clients_.end())
          continue;
        Client &c = it->second;
        if (fds[i].revents & (POLLERR | POLLNVAL)) {
          ::close(fd);
          clients_.erase(it);
          continue;
        }
        if (fds[i].revents & (POLLIN | POLLHUP)) {
          ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
          if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
            // A client that left; a half request it sent is dropped.
            ::close(fd);
            clients_.erase(it);
            continue;
          }
          if (r > 0) {
            c.in.append(buf, static_cast<size_t>(r));
            std::string error = serve(c);
            if (!error.empty()) {
              drop(fd, error);
              continue;
            }
          }
        }
        if (!c.out.empty()) {
          ssize_t w = ::send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
          if (w > 0)
            c.out.erase(0, static_cast<size_t>(w));
          else if (w < 0 && errno != EAGAIN && errno != EINTR) {
            ::close(fd);
            clients_.erase(fd);
            continue;
          }
          if (c.out.size() > 2 * kMaxReply) {
            drop(fd, "does not read its replies");
            continue;
          }
        }
      }
      // Connections that never greet do not keep a slot.
      Clock::time_point now = Clock::now();
      for (auto it = clients_.begin(); it != clients_.end();) {
        int fd = it->first;
        bool stale =
            !it->second.greeted && now - it->second.since > kGreetingTimeout;
        ++it;
        if (stale)
          drop(fd, "no greeting within 10 s");
      }
    }
  }

  std::vector<int> listenFds_;
  std::string where_;
  int wake_[2] = {-1, -1};
  std::atomic<bool> stopping_{false};
  std::map<int, Client> clients_;
  std::map<std::string, std::string> values_;
  uint64_t storedBytes_ = 0;
  int drops_ = 0;
  std::thread thread_;
};

Result<std::vector<int>> listenOn(const std::string &host, int port,
                                  const std::string &bind) {
  std::vector<int> fds;
  std::string lastError = "no address";
  auto listenAt = [&](const sockaddr *addr, socklen_t len, int family) {
    int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      lastError = std::strerror(errno);
      return;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (family == AF_INET6)
      ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (::bind(fd, addr, len) != 0 || ::listen(fd, 1024) != 0) {
      lastError = std::strerror(errno);
      ::close(fd);
      return;
    }
    fds.push_back(fd);
  };
  if (bind == "*") {
    // Every interface: IPv6 any (dual stack) or IPv4 any.
    sockaddr_in6 a6{};
    a6.sin6_family = AF_INET6;
    a6.sin6_addr = in6addr_any;
    a6.sin6_port = htons(static_cast<uint16_t>(port));
    int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd >= 0) {
      int one = 1, zero = 0;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
      if (::bind(fd, reinterpret_cast<sockaddr *>(&a6), sizeof(a6)) == 0 &&
          ::listen(fd, 1024) == 0)
        fds.push_back(fd);
      else {
        lastError = std::strerror(errno);
        ::close(fd);
      }
    }
    if (fds.empty()) {
      sockaddr_in a4{};
      a4.sin_family = AF_INET;
      a4.sin_addr.s_addr = htonl(INADDR_ANY);
      a4.sin_port = htons(static_cast<uint16_t>(port));
      listenAt(reinterpret_cast<sockaddr *>(&a4), sizeof(a4), AF_INET);
    }
  } else {
    const std::string &name = bind.empty() ? host : bind;
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int gai =
        ::getaddrinfo(name.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (gai != 0)
      return unavailable("TCP store: rank 0 cannot resolve '" + name +
                         "' to listen on: " + ::gai_strerror(gai));
    std::vector<std::string> seen;
    for (addrinfo *a = res; a; a = a->ai_next) {
      std::string raw(reinterpret_cast<const char *>(a->ai_addr),
                      a->ai_addrlen);
      bool dup = false;
      for (const std::string &s : seen)
        dup = dup || s == raw;
      if (dup)
        continue;
      seen.push_back(raw);
      listenAt(a->ai_addr, a->ai_addrlen, a->ai_family);
    }
    ::freeaddrinfo(res);
  }
  if (fds.empty())
    return unavailable(
        "TCP store: rank 0 cannot listen on " +
        (bind == "*" ? std::string("every interface")
                     : "'" + (bind.empty() ? host : bind) + "'") +
        " port " + std::to_string(port) + ": " + lastError +
        (bind.empty() ? " (MASTER_ADDR must be an address of rank 0's host; "
                        "EMBER_STORE_BIND=ADDRESS or '*' chooses where the "
                        "store listens)"
                      : " (port in use?)"));
  return fds;
}

// --- client
// ----------------------------------------------------------------------

std::string secondsText(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", s);
  return buf;
}

/// Connects (retrying while refused or unreachable) until the deadline.
Result<int> connectTo(const std::string &host, int port,
                      Clock::time_point deadline, const std::string &who) {
  Clock::time_point start = Clock::now();
  std::string last = "no attempt";
  for (;;) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int gai =
        ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (gai != 0) {
      last = ::gai_strerror(gai);
    } else {
      for (addrinfo *a = res; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family,
                          a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                          a->ai_protocol);
        if (fd < 0)
          continue;
        int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
          // Bounded by the deadline (a dropping link never answers).
          auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
              deadline - Clock::now());
          pollfd p{fd, POLLOUT, 0};
          int waitMs = static_cast<int>(
              std::max<int64_t>(0, std::min<int64_t>(left.count(), 2000)));
          if (::poll(&p, 1, waitMs) == 1) {
            int err = 0;
            socklen_t len = sizeof(err);
            ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            rc = err == 0 ? 0 : -1;
            errno = err;
          } else {
            rc = -1;
            errno = ETIMEDOUT;
          }
        }
        if (rc == 0) {
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
      return unavailable(
          who + " cannot reach the rendezvous store at " + host + ":" +
          std::to_string(port) + " (served by rank 0) within " +
          secondsText(
              std::chrono::duration<double>(Clock::now() - start).count()) +
          " s: " + last +
          " (is rank 0 running, with the same MASTER_ADDR/MASTER_PORT, and "
          "is the network between them up?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

class TcpStore final : public RendezvousStore {
public:
  TcpStore(std::string host, int port, std::unique_ptr<TcpStoreServer> server,
           Clock::time_point deadline)
      : host_(std::move(host)), port_(port), server_(std::move(server)),
        deadline_(deadline) {}
  ~TcpStore() override { close(); }

  Status connect(const std::string &who) {
    EMBER_ASSIGN_OR_RETURN(fd_, connectTo(host_, port_, deadline_, who));
    EMBER_RETURN_IF_ERROR(sendAll(std::string(kGreeting, sizeof(kGreeting))));
    char greeting[sizeof(kGreeting)];
    EMBER_RETURN_IF_ERROR(readAll(greeting, sizeof(greeting)));
    if (std::memcmp(greeting, kGreeting, sizeof(kGreeting)) != 0)
      return unavailable(describe() +
                         " is not an Ember rendezvous store (another service "
                         "on MASTER_PORT, or another version of Ember)");
    return Status::ok();
  }

  Status set(const std::string &key, const std::string &value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string req = "S";
    putU32(req, static_cast<uint32_t>(key.size()));
    putU64(req, value.size());
    req += key;
    req += value;
    EMBER_RETURN_IF_ERROR(sendAll(req));
    char reply = 0;
    EMBER_RETURN_IF_ERROR(readAll(&reply, 1));
    if (reply == 'K')
      return Status::ok();
    if (reply == 'E')
      return readRefusal("setting '" + key + "'");
    return malformed();
  }

  Result<std::vector<std::optional<std::string>>>
  check(const std::vector<std::string> &keys) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string req = "C";
    putU32(req, static_cast<uint32_t>(keys.size()));
    for (const std::string &k : keys) {
      putU32(req, static_cast<uint32_t>(k.size()));
      req += k;
    }
    EMBER_RETURN_IF_ERROR(sendAll(req));
    char head[5];
    EMBER_RETURN_IF_ERROR(readAll(head, 1));
    if (head[0] == 'E')
      return readRefusal("reading keys");
    if (head[0] != 'V')
      return malformed();
    EMBER_RETURN_IF_ERROR(readAll(head + 1, 4));
    if (getU32(head + 1) != keys.size())
      return malformed();
    std::vector<std::optional<std::string>> out(keys.size());
    for (auto &v : out) {
      char present = 0;
      EMBER_RETURN_IF_ERROR(readAll(&present, 1));
      if (present == 0)
        continue;
      if (present != 1)
        return malformed();
      char len[8];
      EMBER_RETURN_IF_ERROR(readAll(len, 8));
      uint64_t n = getU64(len);
      if (n > kMaxValue)
        return malformed();
      std::string value(n, '\0');
      EMBER_RETURN_IF_ERROR(readAll(value.data(), n));
      v = std::move(value);
    }
    return out;
  }

  void close() override {
    if (fd_ >= 0) {
      ::shutdown(fd_, SHUT_RDWR);
      ::close(fd_);
      fd_ = -1;
    }
    server_.reset();
  }

  std::string describe() const override {
    return "the rendezvous store at " + host_ + ":" + std::to_string(port_) +
           " (rank 0)";
  }

  bool servedByThisProcess() const override { return server_ != nullptr; }

private:
  /// I/O waits at most until the deadline, and at least a little: a store
  /// that stops answering is an error, never a hang.
  int waitMs() const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline_ - Clock::now());
    return static_cast<int>(std::max<int64_t>(left.count(), 200));
  }

  Status lost(const std::string &why) {
    close();
    return unavailable("lost the connection to " + describe() + ": " + why);
  }

  Status malformed() {
    close();
    return unavailable(describe() + " sent a malformed reply");
  }

  Status readRefusal(const std::string &what) {
    char len[4];
    EMBER_RETURN_IF_ERROR(readAll(len, 4));
    uint32_t n = getU32(len);
    if (n > 4096)
      return malformed();
    std::string message(n, '\0');
    EMBER_RETURN_IF_ERROR(readAll(message.data(), n));
    return failedPrecondition(describe() + " refused " + what + ": " + message);
  }

  Status sendAll(const std::string &bytes) {
    if (fd_ < 0)
      return unavailable("the connection to " + describe() + " is closed");
    const char *p = bytes.data();
    size_t n = bytes.size();
    while (n) {
      ssize_t w = ::send(fd_, p, n, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0 && errno == EAGAIN) {
        pollfd pfd{fd_, POLLOUT, 0};
        if (::poll(&pfd, 1, waitMs()) != 1)
          return lost("timed out sending");
        continue;
      }
      if (w <= 0)
        return lost(std::strerror(errno));
      p += w;
      n -= static_cast<size_t>(w);
    }
    return Status::ok();
  }

  Status readAll(void *data, size_t n) {
    if (fd_ < 0)
      return unavailable("the connection to " + describe() + " is closed");
    char *p = static_cast<char *>(data);
    while (n) {
      ssize_t r = ::recv(fd_, p, n, 0);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 && errno == EAGAIN) {
        pollfd pfd{fd_, POLLIN, 0};
        if (::poll(&pfd, 1, waitMs()) != 1)
          return lost("no reply (rank 0 hung, or the network is down)");
        continue;
      }
      if (r == 0)
        return lost("rank 0 closed it (it failed or exited)");
      if (r < 0)
        return lost(std::strerror(errno));
      p += r;
      n -= static_cast<size_t>(r);
    }
    return Status::ok();
  }

  std::string host_;
  int port_;
  std::unique_ptr<TcpStoreServer> server_;
  Clock::time_point deadline_;
  int fd_ = -1;
  std::mutex mutex_;
};

} // namespace

Result<std::unique_ptr<RendezvousStore>>
openTcpStore(const std::string &host, int port, bool serve,
             const std::string &bind, StoreClock::time_point deadline) {
  std::unique_ptr<TcpStoreServer> server;
  if (serve) {
    EMBER_ASSIGN_OR_RETURN(std::vector<int> fds, listenOn(host, port, bind));
    std::string where = (bind == "*"    ? std::string("*")
                         : bind.empty() ? host
                                        : bind) +
                        ":" + std::to_string(port);
    server = std::make_unique<TcpStoreServer>(std::move(fds), where);
  }
  auto store =
      std::make_unique<TcpStore>(host, port, std::move(server), deadline);
  EMBER_RETURN_IF_ERROR(store->connect(serve ? "rank 0" : "this rank"));
  return std::unique_ptr<RendezvousStore>(std::move(store));
}

} // namespace ember
