//===- rendezvous.h - How the ranks of a job meet ---------------*- C++ -*-===//
//
// Every rank, through the store (store.h), within one deadline:
//
//   1. hello   sets ember/hello/<rank>: its rank, world size, the XXH64 and
//              name of its plan file, its host, and whether it can take part
//              (a rank whose plan did not load says so and why). It reads the
//              others' hellos as they arrive: a rank that cannot take part,
//              another world size or another plan is an error naming that
//              rank, at once; ranks not heard from by the deadline are named
//              in a DeadlineExceeded. A rank that fails sets ember/abort
//              ("rank R: why") so that the others stop waiting.
//   2. mesh    creates one Gloo TCP pair per peer (listening on
//              CommOptions::host), sets ember/addr/<rank> with their
//              addresses, reads the others' and connects every pair, in
//              Gloo's order; a pair that does not connect names its peer.
//
// The communicator then runs a barrier over the new mesh and closes the
// store: a TCP store listens only while the ranks meet. The pairs listen
// only between step 2's set and their connect, when every rank is known
// to be present.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_GLOO_RENDEZVOUS_H
#define EMBER_COMM_GLOO_RENDEZVOUS_H

#include "comm/gloo/store.h"

#include <gloo/context.h>

namespace ember {

struct Mesh {
  std::unique_ptr<RendezvousStore> store;
  std::shared_ptr<gloo::Context> context;
  std::vector<std::string> peerHosts; // each rank's EMBER_COMM_HOST
};

/// "rendezvous of rank R of W through 'SPEC'": the prefix of its errors.
std::string rendezvousName(const CommOptions &options);

Result<Mesh> meetPeers(const CommOptions &options,
                       StoreClock::time_point deadline);

/// Step 1 for a rank that cannot take part (announceRendezvousFailure).
void announceFailure(const CommOptions &options, const Status &why);

} // namespace ember

#endif // EMBER_COMM_GLOO_RENDEZVOUS_H
