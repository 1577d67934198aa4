//===- launch_environment.cpp - Session options from launcher variables ---===//
#include "ember/session.h"

#include <cerrno>
#include <cstdlib>

namespace ember {

namespace {

/// The variable's value, or nullptr when unset or empty.
const char *env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

Status parseInt(const char *name, int64_t lo, int64_t hi, int &out) {
  const char *v = env(name);
  if (!v)
    return Status::ok();
  char *end = nullptr;
  errno = 0;
  long long x = std::strtoll(v, &end, 10);
  if (errno || *end != '\0' || x < lo || x > hi)
    return invalidArgument(std::string("environment variable ") + name + "='" +
                           v + "' is not an integer in [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "]");
  out = static_cast<int>(x);
  return Status::ok();
}

} // namespace

Status applyLaunchEnvironment(SessionOptions &options) {
  EMBER_RETURN_IF_ERROR(parseInt("WORLD_SIZE", 1, 65536, options.worldSize));
  EMBER_RETURN_IF_ERROR(parseInt("RANK", 0, 65535, options.rank));
  EMBER_RETURN_IF_ERROR(parseInt("LOCAL_RANK", 0, 65535, options.localRank));
  if (options.rank >= options.worldSize)
    return invalidArgument("RANK " + std::to_string(options.rank) +
                           " is not below WORLD_SIZE " +
                           std::to_string(options.worldSize));
  const char *addr = env("MASTER_ADDR"), *port = env("MASTER_PORT");
  if (addr && port) {
    int p = 0;
    EMBER_RETURN_IF_ERROR(parseInt("MASTER_PORT", 1, 65535, p));
    options.rendezvous = std::string("tcp:") + addr + ":" + std::to_string(p);
  } else if (addr || port) {
    return invalidArgument(std::string("environment variable ") +
                           (addr ? "MASTER_PORT" : "MASTER_ADDR") +
                           " is not set (MASTER_ADDR and MASTER_PORT go "
                           "together)");
  }
  if (const char *r = env("EMBER_RENDEZVOUS"))
    options.rendezvous = r;
  if (const char *t = env("EMBER_COMM_TIMEOUT")) {
    char *end = nullptr;
    double s = std::strtod(t, &end);
    if (*end != '\0' || !(s > 0) || s > 86400)
      return invalidArgument(std::string("environment variable "
                                         "EMBER_COMM_TIMEOUT='") +
                             t + "' is not a number of seconds in (0, 86400]");
    options.collectiveTimeoutSeconds = s;
  }
  if (const char *h = env("EMBER_COMM_HOST"))
    options.commHost = h;
  if (const char *b = env("EMBER_STORE_BIND"))
    options.storeBind = b;
  return Status::ok();
}

} // namespace ember
