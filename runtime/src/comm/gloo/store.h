//===- store.h - Rendezvous stores for the Gloo communicator ----*- C++ -*-===//
//
// The ranks of a job meet through a small key-value store (rendezvous.h says
// what they write into it). Two kinds:
//   file:DIR       files in a directory every rank can reach (one machine, or
//                  a shared file system); fresh per job.
//   tcp:HOST:PORT  Ember's TCP store (tcp_store.h): rank 0 serves it on
//                  HOST:PORT (only on the addresses HOST resolves to, unless
//                  CommOptions::storeBind says otherwise) for the length of
//                  the rendezvous; every rank, rank 0 too, is a client.
// Keys are set once: a second set() of a key is refused, so a late or
// foreign writer cannot replace what a rank published. Nothing here waits:
// rendezvous.cpp polls check() until its deadline.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_GLOO_STORE_H
#define EMBER_COMM_GLOO_STORE_H

#include "comm/comm_options.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ember {

class RendezvousStore {
public:
  virtual ~RendezvousStore() = default;
  /// Sets `key` once; an existing key is an error (AlreadyExists-like
  /// FailedPrecondition).
  virtual Status set(const std::string &key, const std::string &value) = 0;
  /// The values of the keys that exist now, nullopt for the others.
  virtual Result<std::vector<std::optional<std::string>>>
  check(const std::vector<std::string> &keys) = 0;
  /// Stops serving (rank 0 of a TCP store) and disconnects.
  virtual void close() {}
  /// What the store is, for messages ("the store at 10.0.0.1:29500 (rank 0)").
  virtual std::string describe() const = 0;
  /// Whether this process serves the store (rank 0 of a TCP store): what it
  /// set is gone when it exits. A file store outlives every rank.
  virtual bool servedByThisProcess() const { return false; }
};

using StoreClock = std::chrono::steady_clock;

/// Opens options.rendezvous; a TCP client retries until `deadline`.
Result<std::unique_ptr<RendezvousStore>>
openStore(const CommOptions &options, StoreClock::time_point deadline);

} // namespace ember

#endif // EMBER_COMM_GLOO_STORE_H
