//===- gloo_communicator.cpp - Communicator over Gloo's TCP transport -----===//
//
// Exchanges are Gloo unbound-buffer sends and receives, one per non-empty
// peer buffer, each on a slot taken from a per-peer sequence number (both
// ends of a pair count the exchanges between them, so their slots agree).
// A channel (openChannel) has sequence numbers of its own in a slot range of
// its own, so that two threads can exchange over the same pairs at once.
// Gloo reports errors by throwing; everything here catches them and turns
// them into Status. After a failure the Gloo context is closed (every pending
// operation aborted, so nothing writes into our buffers later) and the
// communicator is broken for good.
//
//===----------------------------------------------------------------------===//
#include "comm/gloo/gloo_communicator.h"

#include "comm/gloo/rendezvous.h"

#include <gloo/transport/unbound_buffer.h>

#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

namespace ember {

namespace {

using Clock = std::chrono::steady_clock;
using Buffer = std::unique_ptr<gloo::transport::UnboundBuffer>;

constexpr uint64_t kSlotBase = uint64_t{1} << 40;
// Channel c's slots start at kSlotBase + c * kChannelSlots.
constexpr uint64_t kChannelSlots = uint64_t{1} << 48;
constexpr int kChannels = 2;
// A rank that fails tells its other peers why on this slot before it closes
// its connections, so that a rank that then loses it can name the first
// failure (the rank that died, the collective) instead of its messenger.
constexpr uint64_t kNoticeSlot = kSlotBase - 1;
constexpr size_t kNoticeBytes = 512;

std::string rankList(const std::vector<int> &ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

std::string seconds(std::chrono::milliseconds t) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", t.count() / 1000.0);
  return buf;
}

// --- Gloo's network thread -------------------------------------------------------
//
// Gloo handles the bytes its peers send on a thread of its own and, on data
// it cannot make sense of, throws there (GLOO_ENFORCE), which ends the
// process through std::terminate. Only a peer that speaks Gloo's framing but
// is not this job's rank can do that (docs/reliability.md); the handler
// below at least says which rank died and in which collective.
char gCurrentOp[256] = "no collective";
std::atomic<int> gRank{-1};
std::terminate_handler gPreviousTerminate = nullptr;

void noteOperation(const std::string &what) {
  // Sessions of several ranks in one process (tests) write it in turn; only
  // a dying process reads it.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  size_t n = std::min(what.size(), sizeof(gCurrentOp) - 1);
  std::memcpy(gCurrentOp, what.data(), n);
  gCurrentOp[n] = '\0';
}

void onTerminate() {
  std::string what = "an unknown error";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception &x) {
      what = x.what();
    } catch (...) {
    }
  }
  while (!what.empty() && (what.back() == '\n' || what.back() == ' '))
    what.pop_back();
  std::fprintf(stderr,
               "ember: rank %d: fatal: Gloo's network thread failed during "
               "%s: %s (a peer sent data this rank did not expect: is "
               "something other than this job's ranks connecting to their "
               "ports?)\n",
               gRank.load(), gCurrentOp, what.c_str());
  std::fflush(stderr);
  if (gPreviousTerminate)
    gPreviousTerminate();
  std::abort();
}

void installTerminateHandler(int rank) {
  static std::once_flag once;
  gRank = rank;
  std::call_once(once, [] { gPreviousTerminate = std::set_terminate(onTerminate); });
}

class GlooCommunicator final : public Communicator {
public:
  GlooCommunicator(std::shared_ptr<gloo::Context> context,
                   std::chrono::milliseconds timeout,
                   std::vector<std::string> peerHosts)
      : context_(std::move(context)), peerHosts_(std::move(peerHosts)),
        timeout_(timeout) {
    for (std::vector<uint64_t> &sequence : sequence_)
      sequence.assign(context_->size, 0);
  }

  ~GlooCommunicator() override {
    // The pairs go first. Gloo's device thread calls into a buffer with an
    // operation pending on a pair (the failure notice receives always have
    // one) under that pair's lock: on completion, and when the peer closes
    // its end (Pair::signalException). A buffer's destructor only spins
    // until the device thread lets go of it (a relaxed load of a shared_ptr
    // count: no happens-before, which ThreadSanitizer reports as a race on
    // the buffer's mutex and condition variables). Destroying a pair takes
    // its lock and takes it off the device loop (Gloo waits for the loop to
    // tick), so nothing calls into the buffers below once they go. It is the
    // soft close the context's own destruction does (FIN, not RST: a peer
    // still reads what was sent), only before the buffers instead of after.
    for (int p = 0; p < context_->size; ++p)
      context_->getPair(p).reset();
    // Buffers of a failed exchange go before the context that owns them.
    graveyard_.clear();
    noticeRecv_.clear();
    context_.reset();
  }

  int rank() const override { return context_->rank; }
  int worldSize() const override { return context_->size; }

  Status exchange(const std::vector<int> &group,
                  const std::vector<SendBuffer> &sends,
                  const std::vector<RecvBuffer> &recvs,
                  const std::string &what) override {
    return exchangeOn(0, group, {Step{sends, recvs, ""}}, what);
  }
  Status exchangeSteps(const std::vector<int> &group,
                       const std::vector<Step> &steps,
                       const std::string &what) override {
    return exchangeOn(0, group, steps, what);
  }
  /// The steps of an exchange in channel `channel`'s sequence (0: this
  /// communicator's), every step's buffers posted before any is waited for.
  Status exchangeOn(int channel, const std::vector<int> &group,
                    const std::vector<Step> &steps, const std::string &what);

  std::unique_ptr<Communicator> openChannel() override;

  /// Posts the receives of the peers' failure notices (once, after the
  /// rendezvous).
  void armNotices() {
    noticeIn_.assign(static_cast<size_t>(worldSize()) * kNoticeBytes, '\0');
    noticeRecv_.resize(worldSize());
    try {
      for (int p = 0; p < worldSize(); ++p) {
        if (p == rank())
          continue;
        noticeRecv_[p] = context_->createUnboundBuffer(
            noticeIn_.data() + static_cast<size_t>(p) * kNoticeBytes,
            kNoticeBytes);
        noticeRecv_[p]->recv(p, kNoticeSlot);
      }
    } catch (const std::exception &) {
      // Without notices, errors name the nearest failed rank only.
    }
  }

  /// The rendezvous's barrier runs within what is left of its deadline.
  void setTimeout(std::chrono::milliseconds timeout) {
    std::lock_guard<std::mutex> lock(stateMutex_);
    timeout_ = timeout;
  }

private:
  /// A hint when a failed connection was not from the peer's address.
  std::string notFromPeer(int peer, const std::string &error) const;
  /// What `peer` said before its connection closed ("" if nothing).
  std::string noticeFrom(int peer) const;
  /// Tells every peer but `skip` why this rank stops (best effort, bounded).
  void sendNotices(const std::string &text, int skip);

  Status fail(Status s) {
    std::lock_guard<std::mutex> lock(stateMutex_);
    if (broken_.isOk())
      broken_ = s;
    return s;
  }

  std::shared_ptr<gloo::Context> context_;
  std::vector<std::string> peerHosts_; // EMBER_COMM_HOST of each rank
  // Per channel: one exchange at a time, and the exchanges with each peer
  // so far (touched only under that channel's mutex).
  std::mutex channelMutex_[kChannels];
  std::vector<uint64_t> sequence_[kChannels];
  bool channelOpen_ = false; // channel 1 handed out (under stateMutex_)
  // What the channels share: the timeout, the first failure, the buffers
  // of failed exchanges and the notices (taken briefly, never across a
  // wait for a peer).
  std::mutex stateMutex_;
  std::chrono::milliseconds timeout_;
  Status broken_;
  std::vector<Buffer> graveyard_;
  std::string noticeIn_;            // kNoticeBytes per peer
  std::vector<Buffer> noticeRecv_;  // their receives
  std::string noticeOut_;
};

/// Channel 1 of a GlooCommunicator (openChannel).
class GlooChannel final : public Communicator {
public:
  explicit GlooChannel(GlooCommunicator &owner) : owner_(owner) {}
  int rank() const override { return owner_.rank(); }
  int worldSize() const override { return owner_.worldSize(); }
  Status exchange(const std::vector<int> &group,
                  const std::vector<SendBuffer> &sends,
                  const std::vector<RecvBuffer> &recvs,
                  const std::string &what) override {
    return owner_.exchangeOn(1, group, {Step{sends, recvs, ""}}, what);
  }
  Status exchangeSteps(const std::vector<int> &group,
                       const std::vector<Step> &steps,
                       const std::string &what) override {
    return owner_.exchangeOn(1, group, steps, what);
  }

private:
  GlooCommunicator &owner_;
};

std::unique_ptr<Communicator> GlooCommunicator::openChannel() {
  std::lock_guard<std::mutex> lock(stateMutex_);
  if (channelOpen_)
    return nullptr;
  channelOpen_ = true;
  return std::make_unique<GlooChannel>(*this);
}

Status GlooCommunicator::exchangeOn(int channel, const std::vector<int> &group,
                                    const std::vector<Step> &steps,
                                    const std::string &whatAll) {
  std::lock_guard<std::mutex> channelLock(channelMutex_[channel]);
  // Errors name the step they happened in (the only one, most often).
  size_t errorStep = 0;
  auto stepName = [&](size_t s) {
    return s < steps.size() ? whatAll + steps[s].step : whatAll;
  };
  std::chrono::milliseconds timeout;
  {
    std::lock_guard<std::mutex> lock(stateMutex_);
    if (!broken_.isOk())
      return failedPrecondition(stepName(0) +
                                ": the communicator failed earlier and cannot "
                                "be used again (" +
                                broken_.message() + ")");
    timeout = timeout_;
  }
  std::vector<uint64_t> &sequence = sequence_[channel];
  const uint64_t slotBase =
      kSlotBase + static_cast<uint64_t>(channel) * kChannelSlots;
  const size_t g = group.size(), n = steps.size();
  auto it = std::find(group.begin(), group.end(), rank());
  if (it == group.end())
    return internalError(stepName(0) + ": rank " + std::to_string(rank()) +
                         " exchanges within a group it is not part of");
  for (const Step &step : steps)
    if (step.sends.size() != g || step.recvs.size() != g)
      return internalError(whatAll + step.step + ": rank " +
                           std::to_string(rank()) +
                           " exchanges within a group it is not part of");
  int position = static_cast<int>(it - group.begin());
  noteOperation(n == 1 ? stepName(0) : whatAll);
  for (int r : group)
    if (r < 0 || r >= worldSize())
      return internalError(stepName(0) + ": group rank " + std::to_string(r) +
                           " is outside the world of " +
                           std::to_string(worldSize()));
  for (size_t s = 0; s < n; ++s) {
    const SendBuffer &self = steps[s].sends[position];
    const RecvBuffer &into = steps[s].recvs[position];
    if (self.bytes != into.bytes)
      return internalError(
          stepName(s) + ": sends " + std::to_string(self.bytes) +
          " bytes to itself but expects " + std::to_string(into.bytes));
  }
  for (size_t s = 0; s < n; ++s) {
    const SendBuffer &self = steps[s].sends[position];
    if (self.bytes && self.data != steps[s].recvs[position].data)
      std::memmove(steps[s].recvs[position].data, self.data, self.bytes);
  }

  // Buffer k = s * g + i: step s, group position i.
  std::vector<Buffer> rb(n * g), sb(n * g);
  std::vector<char> recvDone(n * g, 0), sendDone(n * g, 0);
  Clock::time_point deadline = Clock::now() + timeout;
  auto remaining = [&] {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    return std::max(left, std::chrono::milliseconds(0));
  };
  std::string error;
  int errorPeer = -1;
  try {
    // Every step's receives and sends are posted before any wait: the
    // receivers announce all their buffers at once, one round trip for
    // the lot. Both ends of a pair take slots in the same order (steps,
    // then group positions).
    for (size_t s = 0; s < n; ++s)
      for (size_t i = 0; i < g; ++i) {
        if (static_cast<int>(i) == position)
          continue;
        const size_t k = s * g + i;
        int peer = group[i];
        errorPeer = peer;
        errorStep = s;
        uint64_t slot = slotBase + sequence[peer]++;
        if (steps[s].recvs[i].bytes) {
          rb[k] = context_->createUnboundBuffer(steps[s].recvs[i].data,
                                                steps[s].recvs[i].bytes);
          rb[k]->recv(peer, slot);
        }
        if (steps[s].sends[i].bytes) {
          sb[k] = context_->createUnboundBuffer(
              const_cast<void *>(steps[s].sends[i].data),
              steps[s].sends[i].bytes);
          sb[k]->send(peer, slot);
        }
      }
    for (size_t k = 0; k < n * g; ++k) {
      errorPeer = group[k % g];
      errorStep = k / g;
      if (rb[k])
        rb[k]->waitRecv(nullptr, remaining());
      recvDone[k] = 1;
    }
    for (size_t k = 0; k < n * g; ++k) {
      errorPeer = group[k % g];
      errorStep = k / g;
      if (sb[k])
        sb[k]->waitSend(nullptr, remaining());
      sendDone[k] = 1;
    }
    return Status::ok();
  } catch (const std::exception &e) {
    error = e.what();
  }
  const std::string what = stepName(errorStep);

  // Which peers were not heard from? A zero wait returns at once for a
  // finished operation and otherwise throws, closing every pair of the
  // context: nothing can write into our buffers after this.
  // Gloo's own wait may give up a little before our deadline under load
  // ("Timed out waiting ... for recv operation"): that is the timeout too.
  bool timedOut =
      Clock::now() + std::chrono::milliseconds(200) >= deadline ||
      error.find("Timed out") != std::string::npos ||
      error.find("timed out") != std::string::npos;
  if (!timedOut) {
    // The context is still open (only the failed peer's connection is
    // closed): tell the others what happened first, or what we were told.
    std::string first = noticeFrom(errorPeer);
    std::string trimmedError = error;
    while (!trimmedError.empty() &&
           (trimmedError.back() == '\n' || trimmedError.back() == ' '))
      trimmedError.pop_back();
    sendNotices(first.empty() ? what + ": rank " + std::to_string(rank()) +
                                    " lost rank " + std::to_string(errorPeer) +
                                    ": " + trimmedError
                              : first,
                errorPeer);
  }
  std::vector<int> silent;
  for (size_t i = 0; i < g; ++i) {
    if (static_cast<int>(i) == position)
      continue;
    bool ok = true;
    for (size_t k = i; k < n * g && ok; k += g) {
      try {
        if (rb[k] && !recvDone[k])
          ok = rb[k]->waitRecv(nullptr, std::chrono::milliseconds(0));
      } catch (const std::exception &) {
        ok = false;
      }
      try {
        if (ok && sb[k] && !sendDone[k])
          ok = sb[k]->waitSend(nullptr, std::chrono::milliseconds(0));
      } catch (const std::exception &) {
        ok = false;
      }
    }
    if (!ok)
      silent.push_back(group[i]);
  }
  {
    std::lock_guard<std::mutex> lock(stateMutex_);
    for (Buffer &b : rb)
      if (b)
        graveyard_.push_back(std::move(b));
    for (Buffer &b : sb)
      if (b)
        graveyard_.push_back(std::move(b));
  }
  // Gloo's messages end in a newline now and then.
  while (!error.empty() && (error.back() == '\n' || error.back() == ' '))
    error.pop_back();
  if (timedOut)
    return fail(deadlineExceeded(
        what + ": rank " + std::to_string(rank()) + " timed out after " +
        seconds(timeout) + " s; not heard from " +
        rankList(silent.empty() ? std::vector<int>{errorPeer} : silent) +
        " (dead, hung or not running this collective)"));
  // Closing the context above aborted the other peers' operations too, so
  // only the peer whose operation failed first is named, with what it said
  // (noticeFrom) when it stopped on a failure of its own.
  std::string first = noticeFrom(errorPeer);
  return fail(unavailable(
      what + ": rank " + std::to_string(rank()) + " lost rank " +
      std::to_string(errorPeer) + ": " + error +
      notFromPeer(errorPeer, error) +
      (first.empty() ? ""
                     : "; rank " + std::to_string(errorPeer) +
                           " had stopped first on: " + first)));
}

std::string GlooCommunicator::noticeFrom(int peer) const {
  if (peer < 0 || peer >= worldSize() || noticeIn_.empty())
    return "";
  // Written by Gloo's thread before it saw the connection close (a TCP
  // stream is in order), which is how this rank learnt of the failure.
  const char *p = noticeIn_.data() + static_cast<size_t>(peer) * kNoticeBytes;
  return std::string(p, strnlen(p, kNoticeBytes));
}

void GlooCommunicator::sendNotices(const std::string &text, int skip) {
  if (noticeRecv_.empty())
    return;
  // Both channels may fail at once: one sends the notices at a time.
  std::lock_guard<std::mutex> lock(stateMutex_);
  noticeOut_.assign(kNoticeBytes, '\0');
  std::memcpy(noticeOut_.data(), text.data(),
              std::min(text.size(), kNoticeBytes - 1));
  std::vector<Buffer> sent;
  try {
    for (int p = 0; p < worldSize(); ++p) {
      if (p == rank() || p == skip)
        continue;
      Buffer b = context_->createUnboundBuffer(noticeOut_.data(), kNoticeBytes);
      b->send(p, kNoticeSlot);
      sent.push_back(std::move(b));
    }
  } catch (const std::exception &) {
  }
  // A peer that is alive takes it at once; one that is not cannot hold this
  // rank for long (a wait that times out closes every connection: fine now).
  Clock::time_point until = Clock::now() + std::chrono::milliseconds(300);
  for (Buffer &b : sent) {
    try {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          until - Clock::now());
      b->waitSend(nullptr, std::max(left, std::chrono::milliseconds(1)));
    } catch (const std::exception &) {
    }
  }
  for (Buffer &b : sent)
    graveyard_.push_back(std::move(b));
  // Let the notices be read before the connections close behind them.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
}

std::string GlooCommunicator::notFromPeer(int peer,
                                          const std::string &error) const {
  // Gloo names the address of the connection: "[10.0.0.9]:41234".
  size_t close = error.rfind("]:");
  size_t open = close == std::string::npos ? close : error.rfind('[', close);
  if (open == std::string::npos || close == std::string::npos ||
      peer < 0 || static_cast<size_t>(peer) >= peerHosts_.size())
    return "";
  std::string seen = error.substr(open + 1, close - open - 1);
  const std::string &expected = peerHosts_[peer];
  in6_addr a6;
  in_addr a4;
  bool numeric = ::inet_pton(AF_INET, expected.c_str(), &a4) == 1 ||
                 ::inet_pton(AF_INET6, expected.c_str(), &a6) == 1;
  if (!numeric || seen == expected || seen == "::ffff:" + expected)
    return "";
  return " (that connection came from " + seen + ", not from rank " +
         std::to_string(peer) + "'s address " + expected +
         ": something else connected to this job's port during the "
         "rendezvous)";
}

} // namespace

Result<std::unique_ptr<Communicator>>
createGlooCommunicator(const CommOptions &options) {
  auto timeout = std::chrono::milliseconds(
      static_cast<int64_t>(options.timeoutSeconds * 1000.0));
  const StoreClock::time_point deadline = StoreClock::now() + timeout;
  installTerminateHandler(options.rank);
  noteOperation(rendezvousName(options));
  EMBER_ASSIGN_OR_RETURN(Mesh mesh, meetPeers(options, deadline));
  auto comm = std::make_unique<GlooCommunicator>(
      std::move(mesh.context), timeout, std::move(mesh.peerHosts));
  // Every rank leaves the rendezvous together, within its deadline: a pair
  // that connected but carries nothing (a peer that died just now, or a
  // connection that was not the peer's) is found here, naming the rank.
  comm->setTimeout(std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                                deadline - StoreClock::now()),
                            std::chrono::milliseconds(1)));
  Status s = barrier(*comm, rendezvousName(options));
  // Every rank read everything before the barrier: the store closes (a TCP
  // store stops listening).
  mesh.store->close();
  if (!s.isOk())
    return s;
  comm->setTimeout(timeout);
  comm->armNotices();
  return std::unique_ptr<Communicator>(std::move(comm));
}

void announceGlooRendezvousFailure(const CommOptions &options,
                                   const Status &why) {
  announceFailure(options, why);
}

} // namespace ember
