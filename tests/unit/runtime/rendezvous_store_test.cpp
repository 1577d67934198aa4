//===- rendezvous_store_test.cpp - The rendezvous stores under abuse ------===//
//
// Ember's TCP store (runtime/src/comm/gloo/tcp_store.h) listens only where
// it is told, refuses malformed requests by closing that connection, keeps
// serving everyone else, and sets each key once; the file store sets keys
// once too. The network-namespace fault tests do the same across hosts
// (tests/e2e/faults, label netns); these run anywhere, on loopback.
//
//===----------------------------------------------------------------------===//
#include "comm/gloo/tcp_store.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

using namespace ember;

namespace {

using namespace std::chrono_literals;

/// A port nothing listens on right now.
int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
  int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

/// A raw connection to addr:port (-1 if refused).
int rawConnect(const char *addr, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, addr, &a.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void sendRaw(int fd, const std::string &bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
}

/// Whether the server closed the connection within a second.
bool closedByServer(int fd) {
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char buf[256];
  for (;;) {
    ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
    if (r == 0 || (r < 0 && errno == ECONNRESET))
      return true;
    if (r < 0)
      return false; // timed out: still open
  }
}

std::string le32(uint32_t v) { return std::string(reinterpret_cast<char *>(&v), 4); }
std::string le64(uint64_t v) { return std::string(reinterpret_cast<char *>(&v), 8); }

const std::string kGreeting = "EMBRSTO1";

class TcpStoreTest : public ::testing::Test {
protected:
  void SetUp() override {
    port_ = freePort();
    auto server = openTcpStore("127.0.0.1", port_, /*serve=*/true, "",
                               StoreClock::now() + 10s);
    ASSERT_TRUE(server.isOk()) << server.status().toString();
    server_ = std::move(*server);
  }

  std::unique_ptr<RendezvousStore> client() {
    auto c = openTcpStore("127.0.0.1", port_, false, "", StoreClock::now() + 10s);
    EXPECT_TRUE(c.isOk()) << c.status().toString();
    return c.isOk() ? std::move(*c) : nullptr;
  }

  int port_ = 0;
  std::unique_ptr<RendezvousStore> server_;
};

TEST_F(TcpStoreTest, SetsKeysOnceAndReadsThem) {
  auto c = client();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->set("a", "one").isOk());
  Status again = server_->set("a", "two");
  EXPECT_FALSE(again.isOk());
  EXPECT_NE(again.message().find("key 'a' is set already"), std::string::npos)
      << again.message();
  auto values = c->check({"a", "missing"});
  ASSERT_TRUE(values.isOk()) << values.status().toString();
  ASSERT_TRUE((*values)[0].has_value());
  EXPECT_EQ(*(*values)[0], "one");
  EXPECT_FALSE((*values)[1].has_value());
}

TEST_F(TcpStoreTest, ListensOnlyWhereItIsTold) {
  // 127.0.0.2 reaches this host too, but the store listens on 127.0.0.1.
  int fd = rawConnect("127.0.0.2", port_);
  EXPECT_EQ(fd, -1) << "the store accepted a connection on 127.0.0.2";
  if (fd >= 0)
    ::close(fd);
  fd = rawConnect("127.0.0.1", port_);
  EXPECT_GE(fd, 0);
  ::close(fd);
}

TEST_F(TcpStoreTest, MalformedConnectionsAreClosedAndOthersServed) {
  auto c = client();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->set("before", "x").isOk());
  std::mt19937 rng(16);
  std::string noise(4096, '\0');
  for (char &ch : noise)
    ch = static_cast<char>(rng());
  const std::vector<std::pair<const char *, std::string>> bad = {
      {"noise", noise},
      {"http", "GET / HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"huge key", kGreeting + "S" + le32(0xffffffffu) + le64(8)},
      {"empty key", kGreeting + "S" + le32(0) + le64(8)},
      {"huge value", kGreeting + "S" + le32(5) + le64(uint64_t{1} << 40) + "hello"},
      {"huge check", kGreeting + "C" + le32(1u << 30)},
      {"unknown request", kGreeting + "Z"},
  };
  for (const auto &[what, bytes] : bad) {
    int fd = rawConnect("127.0.0.1", port_);
    ASSERT_GE(fd, 0) << what;
    sendRaw(fd, bytes);
    EXPECT_TRUE(closedByServer(fd)) << what << ": the connection stayed open";
    ::close(fd);
  }
  // Half a request, and connections that never greet, are left hanging;
  // the store serves the others meanwhile.
  std::vector<int> idle;
  for (int i = 0; i < 200; ++i)
    if (int fd = rawConnect("127.0.0.1", port_); fd >= 0)
      idle.push_back(fd);
  int half = rawConnect("127.0.0.1", port_);
  ASSERT_GE(half, 0);
  sendRaw(half, kGreeting + "S" + le32(3) + le64(1000) + "key" + "partial");
  ASSERT_TRUE(c->set("after", "y").isOk());
  auto values = c->check({"before", "after", "key"});
  ASSERT_TRUE(values.isOk()) << values.status().toString();
  EXPECT_EQ(*(*values)[0], "x");
  EXPECT_EQ(*(*values)[1], "y");
  EXPECT_FALSE((*values)[2].has_value()) << "a half request was stored";
  for (int fd : idle)
    ::close(fd);
  ::close(half);
  // A new client after all that.
  auto d = client();
  ASSERT_TRUE(d);
  auto again = d->check({"after"});
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(*(*again)[0], "y");
}

TEST_F(TcpStoreTest, ClosedStoreIsAnErrorNamingRankZero) {
  auto c = client();
  ASSERT_TRUE(c);
  server_->close(); // rank 0 leaves
  server_.reset();
  Status s = c->set("late", "x");
  if (s.isOk()) // the request may have raced the close; the next cannot
    s = c->check({"late"}).status();
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("(rank 0)"), std::string::npos) << s.message();
}

TEST(TcpStore, UnreachableStoreTimesOutNamingIt) {
  int port = freePort();
  auto start = StoreClock::now();
  auto c = openTcpStore("127.0.0.1", port, false, "", start + 500ms);
  ASSERT_FALSE(c.isOk());
  EXPECT_NE(c.status().message().find(
                "cannot reach the rendezvous store at 127.0.0.1:" +
                std::to_string(port) + " (served by rank 0)"),
            std::string::npos)
      << c.status().message();
  EXPECT_LT(StoreClock::now() - start, 3s);
}

TEST(TcpStore, MasterAddrNotOnThisHostIsAClearError) {
  // 192.0.2.1 (TEST-NET-1) is nobody's address here.
  auto s = openTcpStore("192.0.2.1", freePort(), true, "", StoreClock::now() + 1s);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.status().message().find("MASTER_ADDR must be an address of rank "
                                      "0's host"),
            std::string::npos)
      << s.status().message();
}

TEST(FileStore, SetsKeysOnce) {
  char dir[] = "/tmp/ember_store_test_XXXXXX";
  ASSERT_TRUE(::mkdtemp(dir));
  CommOptions o;
  o.rendezvous = std::string("file:") + dir;
  auto store = openStore(o, StoreClock::now() + 1s);
  ASSERT_TRUE(store.isOk()) << store.status().toString();
  ASSERT_TRUE((*store)->set("ember/hello/0", "x").isOk());
  Status again = (*store)->set("ember/hello/0", "y");
  EXPECT_FALSE(again.isOk());
  auto values = (*store)->check({"ember/hello/0", "ember/hello/1"});
  ASSERT_TRUE(values.isOk());
  EXPECT_EQ(*(*values)[0], "x");
  EXPECT_FALSE((*values)[1].has_value());
  std::string cmd = std::string("rm -rf ") + dir;
  (void)std::system(cmd.c_str());
}

} // namespace
