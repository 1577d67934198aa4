//===- rendezvous.cpp - How the ranks of a job meet -----------------------===//
#include "comm/gloo/rendezvous.h"

#include <gloo/transport/context.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <unistd.h>

namespace ember {

namespace {

using Clock = StoreClock;

constexpr char kHelloMagic[4] = {'E', 'M', 'B', 'H'};
constexpr char kAddrMagic[4] = {'E', 'M', 'B', 'A'};
constexpr uint32_t kVersion = 1;
const char *const kAbortKey = "ember/abort";

std::string helloKey(int r) { return "ember/hello/" + std::to_string(r); }
std::string addrKey(int r) { return "ember/addr/" + std::to_string(r); }
std::string doneKey(int r) { return "ember/done/" + std::to_string(r); }

// --- encoding
// -------------------------------------------------------------------

void putU32(std::string &s, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void putU64(std::string &s, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void putString(std::string &s, const std::string &v) {
  putU32(s, static_cast<uint32_t>(v.size()));
  s += v;
}

/// Reads what put* wrote; every read is bounds-checked.
class Reader {
public:
  explicit Reader(const std::string &s) : s_(s) {}
  bool u32(uint32_t &v) {
    if (s_.size() - at_ < 4)
      return false;
    v = 0;
    for (int i = 0; i < 4; ++i)
      v |= static_cast<uint32_t>(static_cast<unsigned char>(s_[at_ + i]))
           << (8 * i);
    at_ += 4;
    return true;
  }
  bool u64(uint64_t &v) {
    uint32_t lo, hi;
    if (!u32(lo) || !u32(hi))
      return false;
    v = lo | (static_cast<uint64_t>(hi) << 32);
    return true;
  }
  bool string(std::string &v, size_t max = 1 << 16) {
    uint32_t n;
    if (!u32(n) || n > max || s_.size() - at_ < n)
      return false;
    v = s_.substr(at_, n);
    at_ += n;
    return true;
  }
  bool magic(const char (&m)[4]) {
    if (s_.size() - at_ < 4 || s_.compare(at_, 4, m, 4) != 0)
      return false;
    at_ += 4;
    return true;
  }
  bool atEnd() const { return at_ == s_.size(); }

private:
  const std::string &s_;
  size_t at_ = 0;
};

struct Hello {
  uint32_t rank = 0, world = 0;
  uint64_t fingerprint = 0;
  uint32_t failed = 0;
  std::string plan, hostname, commHost, error;
};

std::string encode(const Hello &h) {
  std::string s(kHelloMagic, 4);
  putU32(s, kVersion);
  putU32(s, h.rank);
  putU32(s, h.world);
  putU64(s, h.fingerprint);
  putU32(s, h.failed);
  putString(s, h.plan);
  putString(s, h.hostname);
  putString(s, h.commHost);
  putString(s, h.error);
  return s;
}

bool decode(const std::string &s, Hello &h) {
  Reader r(s);
  uint32_t version;
  return r.magic(kHelloMagic) && r.u32(version) && version == kVersion &&
         r.u32(h.rank) && r.u32(h.world) && r.u64(h.fingerprint) &&
         r.u32(h.failed) && r.string(h.plan) && r.string(h.hostname) &&
         r.string(h.commHost) && r.string(h.error) && r.atEnd();
}

std::string hostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0)
    return "?";
  return buf;
}

Hello myHello(const CommOptions &o) {
  Hello h;
  h.rank = static_cast<uint32_t>(o.rank);
  h.world = static_cast<uint32_t>(o.worldSize);
  h.fingerprint = o.planFingerprint;
  h.plan = o.planName;
  h.hostname = hostName();
  h.commHost = o.host.empty() ? "127.0.0.1" : o.host;
  return h;
}

std::string seconds(Clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f",
                std::chrono::duration<double>(d).count());
  return buf;
}

std::string rankList(const std::vector<int> &ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i == 8 && ranks.size() > 9) {
      s += " and " + std::to_string(ranks.size() - 8) + " more";
      break;
    }
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  return s;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(v));
  return buf;
}

/// Waits for keyOf(r) of every other rank, handing each value to onValue as
/// it arrives; stops at the first error, at ember/abort, or at the deadline.
Status gather(RendezvousStore &store, const CommOptions &o,
              Clock::time_point start, Clock::time_point deadline,
              const std::function<std::string(int)> &keyOf,
              const std::function<Status(int, const std::string &)> &onValue,
              const std::string &notHeardHint) {
  std::vector<int> missing;
  for (int r = 0; r < o.worldSize; ++r)
    if (r != o.rank)
      missing.push_back(r);
  auto pause = std::chrono::milliseconds(2);
  for (;;) {
    std::vector<std::string> keys;
    for (int r : missing)
      keys.push_back(keyOf(r));
    keys.push_back(kAbortKey);
    EMBER_ASSIGN_OR_RETURN(auto values, store.check(keys));
    // What the ranks published says most (their rank, their plan); then
    // whether one of them gave up.
    std::vector<int> still;
    for (size_t i = 0; i < missing.size(); ++i) {
      if (!values[i]) {
        still.push_back(missing[i]);
        continue;
      }
      EMBER_RETURN_IF_ERROR(onValue(missing[i], *values[i]));
    }
    if (values.back())
      return failedPrecondition(rendezvousName(o) + " failed: " +
                                values.back()->substr(0, 4096));
    missing = std::move(still);
    if (missing.empty())
      return Status::ok();
    if (Clock::now() >= deadline)
      return deadlineExceeded(rendezvousName(o) + " timed out after " +
                              seconds(Clock::now() - start) +
                              " s: not heard from " + rankList(missing) + " (" +
                              notHeardHint + ")");
    std::this_thread::sleep_for(
        std::min<Clock::duration>(pause, deadline - Clock::now()));
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

/// A Gloo context over pairs this file connected itself (so that a pair
/// that fails names its peer); gloo::rendezvous::Context::connectFullMesh
/// does the same with less to say.
class MeshContext final : public gloo::Context {
public:
  using gloo::Context::Context;
  void attach(std::shared_ptr<gloo::transport::Device> device,
              std::shared_ptr<gloo::transport::Context> context) {
    device_ = std::move(device);
    transportContext_ = std::move(context);
  }
};

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

/// Test-only: EMBER_TEST_RENDEZVOUS_DELAY=R:SECONDS makes rank R wait that
/// long between publishing its pairs' addresses and connecting them (the
/// fault tests send garbage to the ports it leaves listening meanwhile).
void testDelay(int rank) {
  const char *v = std::getenv("EMBER_TEST_RENDEZVOUS_DELAY");
  if (!v || std::atoi(v) != rank)
    return;
  const char *colon = std::strchr(v, ':');
  if (!colon)
    return;
  std::this_thread::sleep_for(
      std::chrono::duration<double>(std::atof(colon + 1)));
}

/// Best effort: tells the others why this rank stops, and marks it done.
void giveUp(RendezvousStore &store, const CommOptions &o, const Status &why) {
  std::string message = why.message();
  for (const char *tail : {" failed: ", ": "}) {
    std::string prefix = rendezvousName(o) + tail;
    if (message.rfind(prefix, 0) == 0) {
      message.erase(0, prefix.size());
      break;
    }
  }
  (void)store.set(kAbortKey,
                  "rank " + std::to_string(o.rank) + " gave up: " + message);
  (void)store.set(doneKey(o.rank), "");
}

/// Rank 0 serves a TCP store: after a failure it keeps serving until every
/// rank has read what happened (their done keys), or for a few seconds. A
/// file store keeps what was set after this process exits: no wait.
void lingerForOthers(RendezvousStore &store, const CommOptions &o,
                     Clock::time_point deadline,
                     Clock::duration most = std::chrono::seconds(3)) {
  if (o.rank != 0 || !store.servedByThisProcess())
    return;
  deadline = std::min(deadline, Clock::now() + most);
  std::vector<std::string> keys;
  for (int r = 1; r < o.worldSize; ++r)
    keys.push_back(doneKey(r));
  while (Clock::now() < deadline) {
    auto values = store.check(keys);
    if (!values)
      return;
    bool all = true;
    for (auto &v : *values)
      all = all && v.has_value();
    if (all)
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/// Step 1. An error names the rank at fault.
Status exchangeHellos(RendezvousStore &store, const CommOptions &o,
                      Clock::time_point start, Clock::time_point deadline,
                      std::vector<Hello> &hellos) {
  const Hello mine = myHello(o);
  hellos.assign(o.worldSize, Hello());
  hellos[o.rank] = mine;
  Status s = store.set(helloKey(o.rank), encode(mine));
  if (!s.isOk())
    return s.withContext(rendezvousName(o));
  return gather(
      store, o, start, deadline, helloKey,
      [&](int r, const std::string &value) -> Status {
        Hello h;
        std::string name =
            rendezvousName(o) + " failed: rank " + std::to_string(r);
        if (!decode(value, h) || h.rank != static_cast<uint32_t>(r))
          return dataLoss(name + " published malformed rendezvous data "
                                 "(another version of Ember, or something "
                                 "else writing to the store?)");
        if (h.failed)
          return failedPrecondition(name + " (on " + h.hostname +
                                    ") cannot take part: " + h.error);
        if (h.world != mine.world)
          return failedPrecondition(
              name + " (on " + h.hostname + ") was started for a world of " +
              std::to_string(h.world) + " ranks, this rank for " +
              std::to_string(mine.world) + " (WORLD_SIZE differs)");
        if (h.fingerprint != mine.fingerprint)
          return failedPrecondition(
              name + " (on " + h.hostname + ") loaded another plan: '" +
              h.plan + "' (XXH64 " + hex(h.fingerprint) + "), this rank '" +
              mine.plan + "' (XXH64 " + hex(mine.fingerprint) +
              "); every rank must load the same plan file");
        hellos[r] = std::move(h);
        return Status::ok();
      },
      "not started, failed before the rendezvous, started with another "
      "rendezvous, or cannot reach it");
}

} // namespace

std::string rendezvousName(const CommOptions &o) {
  return "rendezvous of rank " + std::to_string(o.rank) + " of " +
         std::to_string(o.worldSize) + " through '" + o.rendezvous + "'";
}

void announceFailure(const CommOptions &o, const Status &why) {
  if (o.worldSize <= 1 || o.rank < 0 || o.rank >= o.worldSize ||
      o.rendezvous.empty() || !(o.timeoutSeconds > 0))
    return;
  const auto timeout = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::min(o.timeoutSeconds, 86400.0)));
  // Rank 0 serves a TCP store: it waits for the others to read why (up to
  // the timeout, at most 10 s, and no longer than until every other rank has
  // read it: ranks that come later time out naming rank 0); a file store
  // keeps it without waiting; another rank only needs to reach the store.
  const Clock::time_point deadline =
      Clock::now() +
      std::min<Clock::duration>(timeout, o.rank == 0
                                             ? std::chrono::seconds(10)
                                             : std::chrono::seconds(5));
  auto store = openStore(o, deadline);
  if (!store)
    return;
  Hello h = myHello(o);
  h.failed = 1;
  h.error = why.toString().substr(0, 4096);
  (void)(*store)->set(helloKey(o.rank), encode(h));
  giveUp(**store, o, why);
  lingerForOthers(**store, o, deadline, timeout);
}

Result<Mesh> meetPeers(const CommOptions &o, Clock::time_point deadline) {
  const Clock::time_point start = Clock::now();
  Mesh mesh;
  {
    auto store = openStore(o, deadline);
    if (!store)
      return store.status().withContext(rendezvousName(o));
    mesh.store = std::move(*store);
  }
  RendezvousStore &store = *mesh.store;
  std::vector<Hello> hellos;
  Status s = exchangeHellos(store, o, start, deadline, hellos);
  if (!s.isOk()) {
    if (s.code() != StatusCode::kDeadlineExceeded &&
        s.message().find("lost the connection") == std::string::npos) {
      giveUp(store, o, s);
      lingerForOthers(store, o, deadline);
    }
    return s;
  }
  (void)store.set(doneKey(o.rank), "");

  // Step 2: the pairs, their addresses, the connections.
  int localRank = 0;
  for (int r = 0; r < o.rank; ++r)
    localRank += hellos[r].hostname == hellos[o.rank].hostname;
  auto timeLeft = [&] {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - Clock::now()),
                    std::chrono::milliseconds(1));
  };
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::transport::Context> transport;
  std::string addresses(kAddrMagic, 4);
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = o.host.empty() ? "127.0.0.1" : o.host;
    device = gloo::transport::tcp::CreateDevice(attr);
    transport = device->createContext(o.rank, o.worldSize);
    // A pair takes its context's timeout when it is made, and Gloo waits
    // five times that long for its first connection (tcp/pair.h,
    // waitUntil): a fifth of what is left keeps the connect within the
    // deadline.
    transport->setTimeout(std::max(timeLeft() / 5, std::chrono::milliseconds(1)));
    putU32(addresses, kVersion);
    for (int r = 0; r < o.worldSize; ++r) {
      if (r == o.rank)
        continue;
      auto &pair = transport->createPair(r);
      pair->setLocalRank(localRank);
      std::vector<char> bytes = pair->address().bytes();
      putU32(addresses, static_cast<uint32_t>(r));
      putString(addresses, std::string(bytes.begin(), bytes.end()));
    }
  } catch (const std::exception &e) {
    Status error =
        unavailable(rendezvousName(o) + ": rank " + std::to_string(o.rank) +
                    " cannot listen for its peers on '" +
                    (o.host.empty() ? "127.0.0.1" : o.host) +
                    "' (EMBER_COMM_HOST): " + trimmed(e.what()));
    giveUp(store, o, error);
    lingerForOthers(store, o, deadline);
    return error;
  }
  if (!(s = store.set(addrKey(o.rank), addresses)).isOk())
    return s.withContext(rendezvousName(o));
  std::vector<std::string> peerAddress(o.worldSize);
  s = gather(
      store, o, start, deadline, addrKey,
      [&](int r, const std::string &value) -> Status {
        Reader reader(value);
        uint32_t version = 0;
        bool ok = reader.magic(kAddrMagic) && reader.u32(version) &&
                  version == kVersion;
        for (int i = 0; ok && i + 1 < o.worldSize; ++i) {
          uint32_t peer;
          std::string bytes;
          ok = reader.u32(peer) && reader.string(bytes, 4096);
          if (ok && peer == static_cast<uint32_t>(o.rank))
            peerAddress[r] = std::move(bytes);
        }
        if (!ok || !reader.atEnd() || peerAddress[r].empty())
          return dataLoss(rendezvousName(o) + " failed: rank " +
                          std::to_string(r) +
                          " published malformed addresses (another version "
                          "of Ember, or something else writing to the "
                          "store?)");
        return Status::ok();
      },
      "failed or cut off after saying hello");
  if (!s.isOk()) {
    if (s.code() != StatusCode::kDeadlineExceeded)
      giveUp(store, o, s);
    return s;
  }
  testDelay(o.rank);
  for (int r = 0; r < o.worldSize; ++r) {
    if (r == o.rank)
      continue;
    std::string where = "?";
    try {
      const std::string &a = peerAddress[r];
      where =
          gloo::transport::tcp::Address(std::vector<char>(a.begin(), a.end()))
              .str();
      transport->getPair(r)->connect(std::vector<char>(a.begin(), a.end()));
    } catch (const std::exception &e) {
      Status error = unavailable(
          rendezvousName(o) + " failed: rank " + std::to_string(o.rank) +
          " cannot connect to rank " + std::to_string(r) + " (" + where +
          ", on " + hellos[r].hostname + ") after " +
          seconds(Clock::now() - start) + " s: " + trimmed(e.what()) +
          " (is the network between them up? is something else connecting "
          "to this job's ports?)");
      giveUp(store, o, error);
      return error;
    }
  }
  auto context = std::make_shared<MeshContext>(o.rank, o.worldSize);
  context->setTimeout(timeLeft());
  context->attach(std::move(device), std::move(transport));
  mesh.context = std::move(context);
  for (const Hello &h : hellos)
    mesh.peerHosts.push_back(h.commHost);
  return mesh;
}

} // namespace ember
