//===- store.cpp - Rendezvous stores for the Gloo communicator ------------===//
#include "comm/gloo/store.h"

#include "comm/gloo/tcp_store.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ember {

namespace {

constexpr size_t kMaxFileValue = size_t{16} << 20;

/// Keys as files of one directory: written to a temporary, then linked
/// under the key's name (link fails if it exists: keys are set once).
class FileStore final : public RendezvousStore {
public:
  explicit FileStore(std::string dir) : dir_(std::move(dir)) {}

  Status set(const std::string &key, const std::string &value) override {
    std::string final = pathOf(key);
    std::string temp = dir_ + "/.tmp-XXXXXX";
    int fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (fd < 0)
      return unavailable("rendezvous directory '" + dir_ +
                         "': cannot write: " + std::strerror(errno));
    bool ok = true;
    for (size_t at = 0; ok && at < value.size();) {
      ssize_t w = ::write(fd, value.data() + at, value.size() - at);
      if (w < 0 && errno == EINTR)
        continue;
      ok = w > 0;
      at += ok ? static_cast<size_t>(w) : 0;
    }
    int err = errno;
    ok = ::close(fd) == 0 && ok;
    if (!ok) {
      ::unlink(temp.c_str());
      return unavailable("rendezvous directory '" + dir_ +
                         "': cannot write: " + std::strerror(err));
    }
    int rc = ::link(temp.c_str(), final.c_str());
    err = errno;
    ::unlink(temp.c_str());
    if (rc != 0 && err == EEXIST)
      return failedPrecondition("rendezvous directory '" + dir_ + "': key '" +
                                key +
                                "' is set already (a directory left by an "
                                "earlier job? use a fresh one per job)");
    if (rc != 0)
      return unavailable("rendezvous directory '" + dir_ +
                         "': cannot write: " + std::strerror(err));
    return Status::ok();
  }

  Result<std::vector<std::optional<std::string>>>
  check(const std::vector<std::string> &keys) override {
    std::vector<std::optional<std::string>> out(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      int fd = ::open(pathOf(keys[i]).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        if (errno == ENOENT)
          continue;
        return unavailable("rendezvous directory '" + dir_ +
                           "': cannot read: " + std::strerror(errno));
      }
      std::string value;
      char buf[1 << 14];
      ssize_t r;
      while ((r = ::read(fd, buf, sizeof(buf))) > 0 &&
             value.size() <= kMaxFileValue)
        value.append(buf, static_cast<size_t>(r));
      ::close(fd);
      if (value.size() > kMaxFileValue)
        return failedPrecondition("rendezvous directory '" + dir_ + "': key '" +
                                  keys[i] + "' is too large");
      out[i] = std::move(value);
    }
    return out;
  }

  std::string describe() const override {
    return "the rendezvous directory '" + dir_ + "'";
  }

private:
  std::string pathOf(const std::string &key) const {
    std::string name;
    for (unsigned char c : key) {
      if (std::isalnum(c) || c == '-' || c == '_' || c == '.')
        name += static_cast<char>(c);
      else {
        char hex[4];
        std::snprintf(hex, sizeof(hex), "%%%02x", c);
        name += hex;
      }
    }
    return dir_ + "/" + name;
  }

  std::string dir_;
};

} // namespace

Result<std::unique_ptr<RendezvousStore>>
openStore(const CommOptions &options, StoreClock::time_point deadline) {
  const std::string &r = options.rendezvous;
  if (r.rfind("file:", 0) == 0) {
    std::string dir = r.substr(5);
    if (dir.empty())
      return invalidArgument("rendezvous 'file:' needs a directory");
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      return invalidArgument("rendezvous directory '" + dir +
                             "' cannot be created: " + std::strerror(errno));
    return std::unique_ptr<RendezvousStore>(new FileStore(dir));
  }
  if (r.rfind("tcp:", 0) == 0) {
    std::string hostPort = r.substr(4);
    size_t colon = hostPort.rfind(':');
    if (colon == std::string::npos || colon == 0 ||
        colon + 1 == hostPort.size())
      return invalidArgument("rendezvous '" + r + "' must be tcp:HOST:PORT");
    std::string host = hostPort.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2); // [::1]
    char *end = nullptr;
    long port = std::strtol(hostPort.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || port <= 0 || port > 65535)
      return invalidArgument("rendezvous '" + r + "': bad port");
    return openTcpStore(host, static_cast<int>(port), options.rank == 0,
                        options.storeBind, deadline);
  }
  return invalidArgument(
      "rendezvous '" + r +
      "' is neither file:DIR nor tcp:HOST:PORT (set SessionOptions."
      "rendezvous, or MASTER_ADDR and MASTER_PORT, or EMBER_RENDEZVOUS)");
}

} // namespace ember
