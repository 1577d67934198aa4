//===- gloo_communicator.h - Communicator over Gloo's TCP transport -*- C++
//-*-===//
#ifndef EMBER_COMM_GLOO_GLOO_COMMUNICATOR_H
#define EMBER_COMM_GLOO_GLOO_COMMUNICATOR_H

#include "comm/comm_options.h"

namespace ember {

/// A full-mesh Gloo context over TCP (loopback unless options.host says
/// otherwise), rendezvous through a file store or Ember's TCP store
/// (rendezvous.h), all within options.timeoutSeconds.
Result<std::unique_ptr<Communicator>>
createGlooCommunicator(const CommOptions &options);

/// announceRendezvousFailure over Gloo's rendezvous (rendezvous.h).
void announceGlooRendezvousFailure(const CommOptions &options,
                                   const Status &why);

} // namespace ember

#endif // EMBER_COMM_GLOO_GLOO_COMMUNICATOR_H
