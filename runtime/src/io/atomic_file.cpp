//===- atomic_file.cpp - Files that appear whole or not at all ------------===//
#include "io/atomic_file.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace ember {

namespace {

// --- temporaries the signal handler removes ---------------------------------

constexpr int kSlots = 256;
constexpr size_t kMaxPath = 4096;
struct Slot {
  std::atomic<int> state{0}; // 0 free, 1 being filled, 2 a path to remove
  char path[kMaxPath];
};
Slot gSlots[kSlots];

int registerTemporary(const std::string &path) {
  if (path.size() >= kMaxPath)
    return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (gSlots[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(gSlots[i].path, path.c_str(), path.size() + 1);
      gSlots[i].state.store(2);
      return i;
    }
  }
  return -1; // full: still correct, but a signal leaves this temporary
}

void unregisterTemporary(int slot) {
  if (slot >= 0)
    gSlots[slot].state.store(0);
}

void removeTemporaries() {
  for (Slot &s : gSlots)
    if (s.state.load() == 2)
      ::unlink(s.path);
}

// --- termination
// ---------------------------------------------------------------

std::atomic<int> gCritical{0}; // commits renaming files right now
std::atomic<int> gPending{0};  // a signal waiting for them
std::atomic<int> gCooperativeSignal{0};
std::atomic<bool> gCooperative{false};
std::atomic<bool> gExiting{false};
std::atomic<int> gCommitted{0}; // files published by this process
std::atomic<void (*)()> gHook{nullptr};
char gPrefix[256] = "ember";

void writeStderr(const char *s) {
  size_t n = std::strlen(s);
  while (n) {
    ssize_t w = ::write(2, s, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

const char *signalName(int sig) {
  switch (sig) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  case SIGHUP:
    return "SIGHUP";
  default:
    return "a signal";
  }
}

[[noreturn]] void terminateNow(int sig) {
  if (gExiting.exchange(true))
    for (;;) // another thread is exiting already
      ::pause();
  if (void (*hook)() = gHook.load())
    hook();
  removeTemporaries();
  writeStderr(gPrefix);
  writeStderr(": interrupted by ");
  writeStderr(signalName(sig));
  writeStderr(gCommitted.load() == 0
                  ? "; stopped, no output file written\n"
                  : "; stopped (the files written before it are complete)\n");
  ::_exit(128 + sig);
}

void onSignal(int sig) {
  int savedErrno = errno;
  if (gCooperative.load()) {
    int expected = 0;
    if (gCooperativeSignal.compare_exchange_strong(expected, sig)) {
      errno = savedErrno;
      return;
    }
    // A second signal: stop at once.
  }
  gPending.store(sig);
  if (gCritical.load() > 0) {
    errno = savedErrno; // the commit exits when it is done
    return;
  }
  terminateNow(sig);
}

/// Signals wait while files are renamed.
struct CriticalSection {
  CriticalSection() { gCritical.fetch_add(1); }
  ~CriticalSection() {
    if (gCritical.fetch_sub(1) == 1)
      if (int sig = gPending.load())
        terminateNow(sig);
  }
};

// --- test hooks
// -------------------------------------------------------------------

/// EMBER_TEST_PAUSE=POINT[:SUBSTRING] stops the process at POINT (write:
/// half-way through the first write of a file; staged: every file of a
/// commit written, none renamed; renaming: between the renames of a
/// transaction) for a file whose path contains SUBSTRING, once, after
/// printing "EMBER_TEST_PAUSE POINT PATH" to stderr. Tests kill it there.
bool testPauseWanted(const char *point, const std::string &path) {
  static std::atomic<bool> done{false};
  const char *v = std::getenv("EMBER_TEST_PAUSE");
  if (!v || done.load())
    return false;
  std::string spec = v, want = spec, sub;
  size_t colon = spec.find(':');
  if (colon != std::string::npos) {
    want = spec.substr(0, colon);
    sub = spec.substr(colon + 1);
  }
  if (want != point || path.find(sub) == std::string::npos)
    return false;
  return !done.exchange(true);
}

void testPause(const char *point, const std::string &path) {
  std::fprintf(stderr, "EMBER_TEST_PAUSE %s %s\n", point, path.c_str());
  std::fflush(stderr);
  for (;;)
    ::pause();
}

// --- files
// ------------------------------------------------------------------------

std::string errorText(const std::string &what, const std::string &path,
                      int err) {
  return what + " '" + path + "': " + std::strerror(err);
}

std::string dirName(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

std::string baseName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// ".NAME.tmp-" : the prefix of NAME's temporaries.
std::string temporaryPrefix(const std::string &path) {
  return "." + baseName(path) + ".tmp-";
}

std::string newTemporaryPath(const std::string &path, const std::string &dir) {
  static std::atomic<unsigned> counter{0};
  return dir + "/" + temporaryPrefix(path) + std::to_string(::getpid()) + "-" +
         std::to_string(counter.fetch_add(1));
}

/// Removes temporaries of `path` left by processes that no longer exist.
void removeStaleTemporaries(const std::string &path, const std::string &dir) {
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return;
  const std::string prefix = temporaryPrefix(path);
  const pid_t self = ::getpid();
  while (dirent *e = ::readdir(d)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) != 0)
      continue;
    char *end = nullptr;
    long pid = std::strtol(e->d_name + prefix.size(), &end, 10);
    if (pid <= 0 || *end != '-' || pid == self)
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      ::unlinkat(::dirfd(d), e->d_name, 0);
  }
  ::closedir(d);
}

bool useUnnamedFiles() {
  const char *v = std::getenv("EMBER_ATOMIC_FILE_NAMED"); // tests: fallback
  return !(v && *v && std::strcmp(v, "0") != 0);
}

void syncDirectory(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  // Best effort: some file systems refuse fsync on directories (EINVAL);
  // the rename itself has happened.
  (void)::fsync(fd);
  ::close(fd);
}

bool copyFd(int from, int to, uint64_t size) {
  char buf[1 << 16];
  uint64_t at = 0;
  while (at < size) {
    ssize_t r = ::pread(from, buf, sizeof(buf), static_cast<off_t>(at));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    for (ssize_t done = 0; done < r;) {
      ssize_t w = ::write(to, buf + done, static_cast<size_t>(r - done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return false;
      done += w;
    }
    at += static_cast<uint64_t>(r);
  }
  return true;
}

} // namespace

// --- AtomicFile
// -------------------------------------------------------------------

AtomicFile::~AtomicFile() { discard(); }

AtomicFile::AtomicFile(AtomicFile &&o) noexcept { *this = std::move(o); }

AtomicFile &AtomicFile::operator=(AtomicFile &&o) noexcept {
  if (this != &o) {
    discard();
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    dir_ = std::move(o.dir_);
    tempPath_ = std::move(o.tempPath_);
    slot_ = o.slot_;
    anonymous_ = o.anonymous_;
    finished_ = o.finished_;
    errno_ = o.errno_;
    size_ = o.size_;
    o.fd_ = -1;
    o.tempPath_.clear();
    o.slot_ = -1;
    o.finished_ = false;
  }
  return *this;
}

bool AtomicFile::open(const std::string &path, std::string *error) {
  discard();
  path_ = path;
  dir_ = dirName(path);
  errno_ = 0;
  size_ = 0;
  finished_ = false;
  anonymous_ = false;
  if (path.empty() || path.back() == '/') {
    *error = "cannot write '" + path + "': not a file name";
    return false;
  }
  removeStaleTemporaries(path_, dir_);
  if (useUnnamedFiles()) {
    fd_ = ::open(dir_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
    if (fd_ >= 0) {
      anonymous_ = true;
      return true;
    }
    if (errno == ENOENT || errno == ENOTDIR || errno == EACCES ||
        errno == EROFS || errno == ENOSPC || errno == EDQUOT) {
      *error = errorText("cannot create a file in", dir_, errno);
      return false;
    }
    // EOPNOTSUPP / EISDIR / EINVAL: no O_TMPFILE here; use a named file.
  }
  tempPath_ = newTemporaryPath(path_, dir_);
  slot_ = registerTemporary(tempPath_);
  fd_ =
      ::open(tempPath_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    *error = errorText("cannot create", tempPath_, errno);
    forgetTemporary(false);
    return false;
  }
  return true;
}

void AtomicFile::write(const void *data, size_t nbytes) {
  if (fd_ < 0 || errno_ != 0 || nbytes == 0)
    return;
  const char *p = static_cast<const char *>(data);
  if (nbytes >= 2 && size_ == 0 && testPauseWanted("write", path_)) {
    size_t half = nbytes / 2;
    while (half) {
      ssize_t w = ::write(fd_, p, half);
      if (w <= 0)
        break;
      p += w;
      half -= static_cast<size_t>(w);
    }
    testPause("write", path_);
  }
  while (nbytes) {
    ssize_t w = ::write(fd_, p, nbytes);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0) {
      errno_ = errno;
      return;
    }
    if (w == 0) {
      errno_ = EIO;
      return;
    }
    p += w;
    nbytes -= static_cast<size_t>(w);
    size_ += static_cast<uint64_t>(w);
  }
}

void AtomicFile::writeHole(uint64_t nbytes) {
  if (fd_ < 0 || errno_ != 0 || nbytes == 0)
    return;
  // The file grows by nbytes of zeros (a hole), and the next write follows.
  off_t end = static_cast<off_t>(size_ + nbytes);
  if (::ftruncate(fd_, end) != 0 || ::lseek(fd_, end, SEEK_SET) != end) {
    errno_ = errno ? errno : EIO;
    return;
  }
  size_ += nbytes;
}

bool AtomicFile::finish(std::string *error) {
  if (!isOpen()) {
    *error = "cannot write '" + path_ + "': the file was not opened";
    return false;
  }
  if (finished_)
    return true;
  if (errno_ != 0) {
    *error = errorText("cannot write", path_, errno_);
    discard();
    return false;
  }
  if (::fsync(fd_) != 0) {
    *error = errorText("cannot write (fsync)", path_, errno);
    discard();
    return false;
  }
  if (!anonymous_) {
    if (::close(fd_) != 0) {
      fd_ = -1;
      *error = errorText("cannot write", path_, errno);
      discard();
      return false;
    }
    fd_ = -1;
  }
  finished_ = true;
  return true;
}

bool AtomicFile::nameTemporary(std::string *error) {
  if (!anonymous_ || !tempPath_.empty())
    return true;
  tempPath_ = newTemporaryPath(path_, dir_);
  slot_ = registerTemporary(tempPath_);
  std::string self = "/proc/self/fd/" + std::to_string(fd_);
  bool linked =
      ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tempPath_.c_str(),
               AT_SYMLINK_FOLLOW) == 0 ||
      ::linkat(fd_, "", AT_FDCWD, tempPath_.c_str(), AT_EMPTY_PATH) == 0;
  if (!linked) {
    // No /proc and no CAP_DAC_READ_SEARCH: copy into a named file.
    int to = ::open(tempPath_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                    0666);
    bool ok = to >= 0 && copyFd(fd_, to, size_) && ::fsync(to) == 0;
    int err = errno;
    if (to >= 0)
      ok = ::close(to) == 0 && ok;
    if (!ok) {
      *error = errorText("cannot write", tempPath_, err ? err : EIO);
      discard();
      return false;
    }
  }
  ::close(fd_);
  fd_ = -1;
  anonymous_ = false;
  return true;
}

bool AtomicFile::publish(std::string *error) {
  if (::rename(tempPath_.c_str(), path_.c_str()) != 0) {
    *error = errorText("cannot write", path_, errno);
    discard();
    return false;
  }
  forgetTemporary(false);
  gCommitted.fetch_add(1);
  return true;
}

void AtomicFile::forgetTemporary(bool remove) {
  if (tempPath_.empty())
    return;
  if (remove)
    ::unlink(tempPath_.c_str());
  unregisterTemporary(slot_);
  slot_ = -1;
  tempPath_.clear();
}

bool AtomicFile::commit(std::string *error) {
  if (!finish(error))
    return false;
  if (testPauseWanted("staged", path_))
    testPause("staged", path_);
  CriticalSection critical;
  if (!nameTemporary(error) || !publish(error))
    return false;
  syncDirectory(dir_);
  return true;
}

void AtomicFile::discard() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  forgetTemporary(true);
  anonymous_ = false;
  finished_ = false;
}

// --- FileTransaction
// ----------------------------------------------------------------

FileTransaction::~FileTransaction() { discard(); }

void FileTransaction::add(AtomicFile file) {
  files_.push_back(std::move(file));
  // Unnamed files hold a descriptor each until the commit; past a few
  // hundred, name them now (complete temporaries, removed on a signal).
  if (files_.size() > 200) {
    AtomicFile &f = files_.back();
    std::string ignored;
    if (f.finish(&ignored))
      (void)f.nameTemporary(&ignored);
  }
}

bool FileTransaction::commit(std::string *error) {
  for (AtomicFile &f : files_)
    if (!f.finish(error)) {
      discard();
      return false;
    }
  if (!files_.empty() && testPauseWanted("staged", files_.front().path()))
    testPause("staged", files_.front().path());
  CriticalSection critical;
  for (AtomicFile &f : files_)
    if (!f.nameTemporary(error)) {
      discard();
      return false;
    }
  std::set<std::string> dirs;
  for (size_t i = 0; i < files_.size(); ++i) {
    if (i == 1 && testPauseWanted("renaming", files_[i].path()))
      testPause("renaming", files_[i].path());
    if (!files_[i].publish(error)) {
      for (size_t j = 0; j < i; ++j)
        ::unlink(files_[j].path().c_str());
      discard();
      return false;
    }
    dirs.insert(files_[i].dir_);
  }
  for (const std::string &dir : dirs)
    syncDirectory(dir);
  files_.clear();
  return true;
}

void FileTransaction::discard() { files_.clear(); }

bool writeFileAtomically(const std::string &path, const std::string &bytes,
                         std::string *error) {
  AtomicFile f;
  if (!f.open(path, error))
    return false;
  f.write(bytes.data(), bytes.size());
  return f.commit(error);
}

// --- termination
// ----------------------------------------------------------------------

void installTerminationHandler(const std::string &prefix) {
  setTerminationPrefix(prefix);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    // A signal ignored by whoever started us (nohup, a background job of a
    // script) stays ignored.
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(sig, &sa, nullptr);
  }
}

void setTerminationPrefix(const std::string &prefix) {
  size_t n = std::min(prefix.size(), sizeof(gPrefix) - 1);
  std::memcpy(gPrefix, prefix.data(), n);
  gPrefix[n] = '\0';
}

void setTerminationHook(void (*hook)()) { gHook.store(hook); }

void setCooperativeTermination(bool cooperative) {
  gCooperative.store(cooperative);
}

int terminationSignal() { return gCooperativeSignal.load(); }

} // namespace ember
