//===- communicator.h - Point-to-point exchange between ranks --*- C++ -*-===//
//
// The one primitive the collective kernels are built on: every member of a
// group sends a (possibly empty) byte buffer to every other member and
// receives one from each. Sizes must agree pairwise (what i sends to j is
// exactly what j expects from i); the kernels exchange counts first
// (exchangeCounts) so that this holds. Empty buffers are skipped: nothing
// goes on the wire for them. A backend (Gloo over TCP) implements it; a
// failure (a peer that died, a timeout) is a Status naming the operation and
// the ranks not heard from, and breaks the communicator: every later call
// fails at once with the first error.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_COMMUNICATOR_H
#define EMBER_COMM_COMMUNICATOR_H

#include "ember/status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember {

struct SendBuffer {
  const void *data = nullptr;
  size_t bytes = 0;
};
struct RecvBuffer {
  void *data = nullptr;
  size_t bytes = 0;
};

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int worldSize() const = 0;

  /// Within `group` (global ranks, ascending, containing this rank): sends[i]
  /// goes to group[i] and recvs[i] comes from group[i]; this rank's own entry
  /// is copied locally (not at all when its receive is its send: a kernel
  /// that reads its own block in place passes the same pointer for both).
  /// Every member must call it, in the same order as its other exchanges
  /// with the same peers. `what` names the operation in errors
  /// ("kjt_all_to_all 'ebc.input_dist'").
  virtual Status exchange(const std::vector<int> &group,
                          const std::vector<SendBuffer> &sends,
                          const std::vector<RecvBuffer> &recvs,
                          const std::string &what) = 0;

  /// Several exchanges within `group`, as if by `exchange` for each step in
  /// order (`what` + the step's `step` names it in errors), except that a
  /// backend may post every step's buffers before waiting for any, so that
  /// they cost one round trip instead of one each (Gloo does: a receiver
  /// announces each buffer before its sender may write it). A step's sizes
  /// must not depend on what an earlier step of the same call receives.
  /// The default runs the steps one after the other.
  struct Step {
    std::vector<SendBuffer> sends;
    std::vector<RecvBuffer> recvs;
    std::string step; // " (lengths)"
  };
  virtual Status exchangeSteps(const std::vector<int> &group,
                               const std::vector<Step> &steps,
                               const std::string &what);

  /// A second communicator over the same connections with a sequence of
  /// exchanges of its own, so that another thread can run collectives
  /// while this one does (a pipelined run's input distribution beside its
  /// output distribution). Each channel's exchanges must be issued in the
  /// same order on every rank; the two channels need no order between
  /// them. A failure breaks both. It must not outlive this communicator.
  /// Null when the backend has no channels (the caller then runs every
  /// collective on one thread).
  virtual std::unique_ptr<Communicator> openChannel() { return nullptr; }
};

/// Copies the own entry and fails when the group needs peers: the exchange
/// of a single-rank session (no communicator) or a group of one.
Status exchangeLocally(int position, const std::vector<SendBuffer> &sends,
                       const std::vector<RecvBuffer> &recvs,
                       const std::string &what);

/// Exchanges `perPeer` fixed-size records of int64: mine[i * n .. i * n + n)
/// goes to position i; the result holds position j's record for me at
/// [j * n, j * n + n). `comm` may be null for a group of one.
Result<std::vector<int64_t>> exchangeCounts(Communicator *comm,
                                            const std::vector<int> &group,
                                            int position,
                                            const std::vector<int64_t> &mine,
                                            size_t n, const std::string &what);

/// Runs the steps (Communicator::exchangeSteps): locally for a group of
/// one, else through `comm` (an error when it is null).
Status runExchangeSteps(Communicator *comm, const std::vector<int> &group,
                        int position,
                        const std::vector<Communicator::Step> &steps,
                        const std::string &what);

/// Runs an exchange: locally for a group of one, else through `comm` (an
/// error when it is null: the plan needs a multi-rank session).
Status runExchange(Communicator *comm, const std::vector<int> &group,
                   int position, const std::vector<SendBuffer> &sends,
                   const std::vector<RecvBuffer> &recvs,
                   const std::string &what);

/// Blocks until every rank of the world has reached it (or fails within the
/// communicator's timeout).
Status barrier(Communicator &comm, const std::string &what);

} // namespace ember

#endif // EMBER_COMM_COMMUNICATOR_H
