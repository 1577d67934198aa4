//===- atomic_file.h - Files that appear whole or not at all ----*- C++ -*-===//
//
// Every file Ember's tools write (plans, weights, ember-run's outputs and
// reports, ember-compile's MLIR and sharding files) goes through AtomicFile:
//
//   AtomicFile f;
//   if (!f.open("out/model.plan", &error)) ...
//   f.write(bytes.data(), bytes.size());
//   if (!f.commit(&error)) ...        // fsync, rename into place, fsync dir
//
// The data go to an unnamed file in the target's directory (O_TMPFILE), so
// a process killed while writing (SIGKILL included) leaves nothing: the
// kernel frees the inode. commit() fsyncs it, links it under a temporary
// name and renames that over the target, then fsyncs the directory: the
// name shows the old file, no file, or the whole new one, also after a
// power loss. Where O_TMPFILE is not supported (some network and FUSE file
// systems, or /proc not mounted) the data go to a named temporary
// `.NAME.tmp-PID-N` in the same directory; such a file left by a process
// that was killed is removed the next time the same target is written.
//
// FileTransaction publishes several files together (a plan and its weights
// files, ember-run's outputs): each is written and fsynced in full first,
// then they are renamed one after the other, so the window in which some
// are new and others old is a few renames long and moves no data.
//
// Termination: installTerminationHandler() makes SIGINT, SIGTERM and SIGHUP
// remove named temporaries, print "<prefix>: interrupted by SIGINT ..." and
// exit with 128 + the signal (130, 143, 129). A signal that arrives while a
// commit renames files waits until the commit is done, so an interrupted
// commit never leaves half of a transaction. Async-signal-safe throughout.
//
// Depends on nothing but libc, so the plan writer (ember_plan_proto, linked
// by the compiler alone) and ember_npy both use it.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_IO_ATOMIC_FILE_H
#define EMBER_IO_ATOMIC_FILE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember {

class AtomicFile {
public:
  AtomicFile() = default;
  /// Discards whatever was not committed.
  ~AtomicFile();
  AtomicFile(AtomicFile &&other) noexcept;
  AtomicFile &operator=(AtomicFile &&other) noexcept;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;

  /// Starts a new version of `path` (its directory must exist).
  bool open(const std::string &path, std::string *error);
  /// Appends bytes; a failure is reported by finish() or commit().
  void write(const void *data, size_t nbytes);
  /// Appends nbytes of zeros without writing them: a hole where the file
  /// system has them (no disk space, read back as zeros).
  void writeHole(uint64_t nbytes);
  /// Flushes the data to disk: complete, but not visible yet.
  bool finish(std::string *error);
  /// finish(), then replaces `path` by the new file and syncs the directory.
  bool commit(std::string *error);
  /// Drops the new version; `path` is left as it was.
  void discard();

  const std::string &path() const { return path_; }
  bool isOpen() const { return fd_ >= 0 || !tempPath_.empty(); }
  uint64_t size() const { return size_; }

private:
  friend class FileTransaction;
  /// Gives an unnamed file its temporary name (and closes it).
  bool nameTemporary(std::string *error);
  /// Renames the temporary over `path`.
  bool publish(std::string *error);
  void forgetTemporary(bool remove);

  int fd_ = -1;
  std::string path_, dir_, tempPath_;
  int slot_ = -1;          // the temporary's entry for the signal handler
  bool anonymous_ = false; // O_TMPFILE: no name until commit
  bool finished_ = false;
  int errno_ = 0; // first write error
  uint64_t size_ = 0;
};

/// Several files published together: commit() finishes every one, then
/// renames them in the order they were added and syncs their directories.
/// A failed commit removes the files it already renamed (the targets are
/// then missing, never half-written); the destructor discards what was not
/// committed.
class FileTransaction {
public:
  FileTransaction() = default;
  ~FileTransaction();
  FileTransaction(const FileTransaction &) = delete;
  FileTransaction &operator=(const FileTransaction &) = delete;

  void add(AtomicFile file);
  bool commit(std::string *error);
  void discard();
  size_t size() const { return files_.size(); }

private:
  std::vector<AtomicFile> files_;
};

/// The whole of `bytes` as `path`, through an AtomicFile.
bool writeFileAtomically(const std::string &path, const std::string &bytes,
                         std::string *error);

/// SIGINT / SIGTERM / SIGHUP: remove the temporaries, print "<prefix>:
/// interrupted by SIG..." and _exit(128 + signal). Call early in main.
void installTerminationHandler(const std::string &prefix);
/// Changes the prefix of the message ("ember-run: rank 2").
void setTerminationPrefix(const std::string &prefix);
/// Run first by the handler (e.g. LLVM's interrupt handlers, which remove
/// LLVM's own temporary files). Must be async-signal-safe enough.
void setTerminationHook(void (*hook)());
/// Cooperative mode (ember-run's launcher): the handler only records the
/// signal, the program polls terminationSignal() and exits by itself; a
/// second signal exits at once.
void setCooperativeTermination(bool cooperative);
/// The signal received in cooperative mode, 0 if none.
int terminationSignal();

} // namespace ember

#endif // EMBER_IO_ATOMIC_FILE_H
