//===- create_communicator.cpp - The backend this build has ---------------===//
#include "comm/comm_options.h"

#ifdef EMBER_HAVE_GLOO
#include "comm/gloo/gloo_communicator.h"
#endif

namespace ember {

bool haveCommunicatorBackend() {
#ifdef EMBER_HAVE_GLOO
  return true;
#else
  return false;
#endif
}

Result<std::unique_ptr<Communicator>>
createCommunicator(const CommOptions &options) {
  if (options.worldSize < 1 || options.rank < 0 ||
      options.rank >= options.worldSize)
    return invalidArgument("rank " + std::to_string(options.rank) +
                           " is not in a world of " +
                           std::to_string(options.worldSize));
  if (!(options.timeoutSeconds > 0) || options.timeoutSeconds > 86400)
    return invalidArgument("the collective timeout " +
                           std::to_string(options.timeoutSeconds) +
                           " s is out of range (0, 86400]");
#ifdef EMBER_HAVE_GLOO
  return createGlooCommunicator(options);
#else
  return unimplemented("this Ember runtime was built without Gloo "
                       "(EMBER_ENABLE_GLOO=OFF): multi-rank plans cannot run");
#endif
}

void announceRendezvousFailure(const CommOptions &options, const Status &why) {
#ifdef EMBER_HAVE_GLOO
  announceGlooRendezvousFailure(options, why);
#else
  (void)options;
  (void)why;
#endif
}

} // namespace ember
