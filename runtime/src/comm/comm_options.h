//===- comm_options.h - How a rank finds its peers --------------*- C++ -*-===//
#ifndef EMBER_COMM_COMM_OPTIONS_H
#define EMBER_COMM_COMM_OPTIONS_H

#include "comm/communicator.h"
#include "ember/status.h"

#include <memory>
#include <string>

namespace ember {

struct CommOptions {
  int rank = 0;
  int worldSize = 1;
  /// "file:DIR" (a directory every rank can reach; fresh for each job) or
  /// "tcp:HOST:PORT" (rank 0 serves the store on PORT, the others connect to
  /// HOST:PORT).
  std::string rendezvous;
  /// Rendezvous and every collective fail after this long without progress.
  double timeoutSeconds = 60;
  /// The address this rank's transport listens on (default 127.0.0.1:
  /// loopback, one machine).
  std::string host;
  /// Where rank 0's TCP store listens: "" = the addresses HOST of
  /// tcp:HOST:PORT resolves to (only those), "*" = every interface, or an
  /// address.
  std::string storeBind;
  /// XXH64 of the plan file and its name: the rendezvous refuses ranks that
  /// loaded another plan (0 = not checked).
  uint64_t planFingerprint = 0;
  std::string planName;
};

/// Connects every rank of the world to every other one (full mesh) through
/// the rendezvous; fails within the timeout when a rank does not show up.
Result<std::unique_ptr<Communicator>>
createCommunicator(const CommOptions &options);

/// This rank cannot take part (its plan did not load, ...): tells the other
/// ranks through the rendezvous, so that they fail at once naming this rank
/// and `why` instead of waiting for it. Best effort, bounded by the timeout
/// (rank 0, which serves a TCP store, waits until the others have read it).
void announceRendezvousFailure(const CommOptions &options, const Status &why);

/// Whether this build has a multi-rank backend (Gloo).
bool haveCommunicatorBackend();

} // namespace ember

#endif // EMBER_COMM_COMM_OPTIONS_H
