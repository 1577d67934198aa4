//===- store.cpp - Rendezvous stores for the Gloo communicator ------------===//
#include "comm/gloo/store.h"

#include "comm/gloo/tcp_store.h"

#include <gloo/rendezvous/file_store.h>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace ember {

namespace {

/// Gloo's file store with our timeout on the waits that do not pass one.
class TimedFileStore final : public gloo::rendezvous::FileStore {
public:
  TimedFileStore(const std::string &dir, std::chrono::milliseconds timeout)
      : FileStore(dir), timeout_(timeout) {}
  void wait(const std::vector<std::string> &keys) override {
    FileStore::wait(keys, timeout_);
  }
  using FileStore::wait;

private:
  std::chrono::milliseconds timeout_;
};

} // namespace

Result<std::unique_ptr<gloo::rendezvous::Store>>
openStore(const CommOptions &options, std::chrono::milliseconds timeout) {
  const std::string &r = options.rendezvous;
  if (r.rfind("file:", 0) == 0) {
    std::string dir = r.substr(5);
    if (dir.empty())
      return invalidArgument("rendezvous 'file:' needs a directory");
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      return invalidArgument("rendezvous directory '" + dir +
                             "' cannot be created: " + std::strerror(errno));
    try {
      return std::unique_ptr<gloo::rendezvous::Store>(
          new TimedFileStore(dir, timeout));
    } catch (const std::exception &e) {
      return invalidArgument("rendezvous directory '" + dir + "': " + e.what());
    }
  }
  if (r.rfind("tcp:", 0) == 0) {
    std::string hostPort = r.substr(4);
    size_t colon = hostPort.rfind(':');
    if (colon == std::string::npos || colon == 0 ||
        colon + 1 == hostPort.size())
      return invalidArgument("rendezvous '" + r + "' must be tcp:HOST:PORT");
    std::string host = hostPort.substr(0, colon);
    char *end = nullptr;
    long port = std::strtol(hostPort.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || port <= 0 || port > 65535)
      return invalidArgument("rendezvous '" + r + "': bad port");
    return openTcpStore(host, static_cast<int>(port), options.rank == 0,
                        timeout);
  }
  return invalidArgument(
      "rendezvous '" + r +
      "' is neither file:DIR nor tcp:HOST:PORT (set SessionOptions."
      "rendezvous, or MASTER_ADDR and MASTER_PORT, or EMBER_RENDEZVOUS)");
}

} // namespace ember
