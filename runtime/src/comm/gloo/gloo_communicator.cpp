//===- gloo_communicator.cpp - Communicator over Gloo's TCP transport -----===//
//
// Exchanges are Gloo unbound-buffer sends and receives, one per non-empty
// peer buffer, each on a slot taken from a per-peer sequence number (both
// ends of a pair count the exchanges between them, so their slots agree).
// Gloo reports errors by throwing; everything here catches them and turns
// them into Status. After a failure the Gloo context is closed (every pending
// operation aborted, so nothing writes into our buffers later) and the
// communicator is broken for good.
//
//===----------------------------------------------------------------------===//
#include "comm/gloo/gloo_communicator.h"

#include "comm/gloo/store.h"

#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace ember {

namespace {

using Clock = std::chrono::steady_clock;
using Buffer = std::unique_ptr<gloo::transport::UnboundBuffer>;

constexpr uint64_t kSlotBase = uint64_t{1} << 40;

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

class GlooCommunicator final : public Communicator {
public:
  GlooCommunicator(std::unique_ptr<gloo::rendezvous::Store> store,
                   std::shared_ptr<gloo::rendezvous::Context> context,
                   std::chrono::milliseconds timeout)
      : store_(std::move(store)), context_(std::move(context)),
        timeout_(timeout), sequence_(context_->size, 0) {}

  ~GlooCommunicator() override {
    // Buffers of a failed exchange go before the context that owns them.
    graveyard_.clear();
    context_.reset();
  }

  int rank() const override { return context_->rank; }
  int worldSize() const override { return context_->size; }

  Status exchange(const std::vector<int> &group,
                  const std::vector<SendBuffer> &sends,
                  const std::vector<RecvBuffer> &recvs,
                  const std::string &what) override;

private:
  Status fail(Status s) {
    if (broken_.isOk())
      broken_ = s;
    return s;
  }

  // Kept for the communicator's lifetime: peers may still read it.
  std::unique_ptr<gloo::rendezvous::Store> store_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::chrono::milliseconds timeout_;
  std::vector<uint64_t> sequence_; // exchanges with each peer so far
  std::mutex mutex_;               // one exchange at a time
  Status broken_;
  std::vector<Buffer> graveyard_;
};

Status GlooCommunicator::exchange(const std::vector<int> &group,
                                  const std::vector<SendBuffer> &sends,
                                  const std::vector<RecvBuffer> &recvs,
                                  const std::string &what) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!broken_.isOk())
    return failedPrecondition(what +
                              ": the communicator failed earlier and cannot "
                              "be used again (" +
                              broken_.message() + ")");
  size_t g = group.size();
  auto it = std::find(group.begin(), group.end(), rank());
  if (sends.size() != g || recvs.size() != g || it == group.end())
    return internalError(what + ": rank " + std::to_string(rank()) +
                         " exchanges within a group it is not part of");
  int position = static_cast<int>(it - group.begin());
  for (int r : group)
    if (r < 0 || r >= worldSize())
      return internalError(what + ": group rank " + std::to_string(r) +
                           " is outside the world of " +
                           std::to_string(worldSize()));
  const SendBuffer &self = sends[position];
  if (self.bytes != recvs[position].bytes)
    return internalError(what + ": sends " + std::to_string(self.bytes) +
                         " bytes to itself but expects " +
                         std::to_string(recvs[position].bytes));
  if (self.bytes && self.data != recvs[position].data)
    std::memmove(recvs[position].data, self.data, self.bytes);

  std::vector<Buffer> rb(g), sb(g);
  std::vector<char> recvDone(g, 0), sendDone(g, 0);
  Clock::time_point deadline = Clock::now() + timeout_;
  auto remaining = [&] {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    return std::max(left, std::chrono::milliseconds(0));
  };
  std::string error;
  int errorPeer = -1;
  try {
    for (size_t i = 0; i < g; ++i) {
      if (static_cast<int>(i) == position)
        continue;
      int peer = group[i];
      errorPeer = peer;
      uint64_t slot = kSlotBase + sequence_[peer]++;
      if (recvs[i].bytes) {
        rb[i] = context_->createUnboundBuffer(recvs[i].data, recvs[i].bytes);
        rb[i]->recv(peer, slot);
      }
      if (sends[i].bytes) {
        sb[i] = context_->createUnboundBuffer(const_cast<void *>(sends[i].data),
                                              sends[i].bytes);
        sb[i]->send(peer, slot);
      }
    }
    for (size_t i = 0; i < g; ++i) {
      errorPeer = group[i];
      if (rb[i])
        rb[i]->waitRecv(nullptr, remaining());
      recvDone[i] = 1;
    }
    for (size_t i = 0; i < g; ++i) {
      errorPeer = group[i];
      if (sb[i])
        sb[i]->waitSend(nullptr, remaining());
      sendDone[i] = 1;
    }
    return Status::ok();
  } catch (const std::exception &e) {
    error = e.what();
  }

  // Which peers were not heard from? A zero wait returns at once for a
  // finished operation and otherwise throws, closing every pair of the
  // context: nothing can write into our buffers after this.
  // Gloo's own wait may give up a little before our deadline under load
  // ("Timed out waiting ... for recv operation"): that is the timeout too.
  bool timedOut =
      Clock::now() + std::chrono::milliseconds(200) >= deadline ||
      error.find("Timed out") != std::string::npos ||
      error.find("timed out") != std::string::npos;
  std::vector<int> silent;
  for (size_t i = 0; i < g; ++i) {
    if (static_cast<int>(i) == position)
      continue;
    bool ok = true;
    try {
      if (rb[i] && !recvDone[i])
        ok = rb[i]->waitRecv(nullptr, std::chrono::milliseconds(0));
    } catch (const std::exception &) {
      ok = false;
    }
    try {
      if (ok && sb[i] && !sendDone[i])
        ok = sb[i]->waitSend(nullptr, std::chrono::milliseconds(0));
    } catch (const std::exception &) {
      ok = false;
    }
    if (!ok)
      silent.push_back(group[i]);
  }
  for (Buffer &b : rb)
    if (b)
      graveyard_.push_back(std::move(b));
  for (Buffer &b : sb)
    if (b)
      graveyard_.push_back(std::move(b));
  // Gloo's messages end in a newline now and then.
  while (!error.empty() && (error.back() == '\n' || error.back() == ' '))
    error.pop_back();
  if (timedOut)
    return fail(deadlineExceeded(
        what + ": rank " + std::to_string(rank()) + " timed out after " +
        seconds(timeout_) + " s; not heard from " +
        rankList(silent.empty() ? std::vector<int>{errorPeer} : silent) +
        " (dead, hung or not running this collective)"));
  // Closing the context above aborted the other peers' operations too, so
  // only the peer whose operation failed first is named.
  return fail(unavailable(what + ": rank " + std::to_string(rank()) +
                          " lost rank " + std::to_string(errorPeer) + ": " +
                          error));
}

} // namespace

Result<std::unique_ptr<Communicator>>
createGlooCommunicator(const CommOptions &options) {
  auto timeout = std::chrono::milliseconds(
      static_cast<int64_t>(options.timeoutSeconds * 1000.0));
  std::string who = "rank " + std::to_string(options.rank) + " of " +
                    std::to_string(options.worldSize);
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<gloo::rendezvous::Store> store,
                         openStore(options, timeout));
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = options.host.empty() ? "127.0.0.1" : options.host;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(
        options.rank, options.worldSize);
    context->setTimeout(timeout);
    context->connectFullMesh(*store, device);
    std::unique_ptr<Communicator> comm(
        new GlooCommunicator(std::move(store), std::move(context), timeout));
    // connectFullMesh can return on one rank while a peer still finishes its
    // side; a rank that then closed at once (a plan with no collective)
    // would break the peer's rendezvous. Every rank leaves together.
    EMBER_RETURN_IF_ERROR(barrier(*comm, "rendezvous of " + who));
    return comm;
  } catch (const std::exception &e) {
    std::string msg = e.what();
    while (!msg.empty() && msg.back() == '\n')
      msg.pop_back();
    if (msg.find("Wait timeout for key") != std::string::npos)
      msg += " (the keys are the ranks that did not show up)";
    char timeoutText[32];
    std::snprintf(timeoutText, sizeof(timeoutText), "%g",
                  options.timeoutSeconds);
    return deadlineExceeded("rendezvous of " + who + " through '" +
                            options.rendezvous + "' failed (timeout " +
                            timeoutText +
                            " s; did every rank start, with the same "
                            "WORLD_SIZE and rendezvous?): " +
                            msg);
  }
}

} // namespace ember
