//===- launcher.cpp - ember-run --nproc: N local ranks --------------------===//
#include "launcher.h"

#include "io/atomic_file.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <string>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace ember::tools {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// How long the other ranks may take to report their own errors once one
/// rank failed, before the launcher kills them.
constexpr auto kGrace = std::chrono::seconds(2);

/// The command line of a rank: ours without --nproc (and, but for rank 0,
/// --output-dir), plus --split-batch.
std::vector<std::string> rankArguments(int argc, char **argv, int rank) {
  std::vector<std::string> args = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool drop = a == "--nproc" || (a == "--output-dir" && rank != 0);
    if (drop) {
      ++i; // and its value
      continue;
    }
    if (a.rfind("--nproc=", 0) == 0 ||
        (a.rfind("--output-dir=", 0) == 0 && rank != 0))
      continue;
    args.push_back(a);
  }
  args.push_back("--split-batch");
  return args;
}

std::string describeExit(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") +
           std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended abnormally";
}

/// A launcher killed with SIGKILL cannot remove its rendezvous directory
/// (TMPDIR/ember_run_PID_XXXXXX; outputs never go there): the next one
/// removes those whose launcher no longer exists.
void removeStaleWorkDirectories(const std::string &tmpDir) {
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(tmpDir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("ember_run_", 0) != 0)
      continue;
    char *end = nullptr;
    long pid = std::strtol(name.c_str() + 10, &end, 10);
    if (pid <= 0 || *end != '_' || pid == ::getpid())
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove_all(entry.path(), ignored);
    }
  }
}

} // namespace

int launchLocalRanks(int argc, char **argv, const RunOptions &o) {
  const int n = o.nproc;
  if (!o.rendezvous.empty()) {
    std::fprintf(stderr, "ember-run: --rendezvous is for ranks started by an "
                         "outside launcher; --nproc makes its own\n");
    return 2;
  }
  // SIGINT/SIGTERM: stop the ranks, clean up, exit 128 + signal (below).
  setCooperativeTermination(true);
  const char *tmpBase = std::getenv("TMPDIR");
  const std::string tmpDir = tmpBase && *tmpBase ? tmpBase : "/tmp";
  removeStaleWorkDirectories(tmpDir);
  std::string tmpl =
      tmpDir + "/ember_run_" + std::to_string(::getpid()) + "_XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    std::fprintf(stderr,
                 "ember-run: error: cannot create a temporary "
                 "directory for the rendezvous: %s\n",
                 std::strerror(errno));
    return 1;
  }
  const std::string work = tmpl;
  auto cleanup = [&] {
    std::error_code ignored;
    fs::remove_all(work, ignored);
  };
  // Rank 0 writes the outputs (and the report); it publishes them only when
  // told over this socket that every other rank succeeded.
  const bool writes = !o.outputDir.empty() || !o.reportJson.empty();
  int commit[2] = {-1, -1};
  if (writes &&
      ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, commit) != 0) {
    std::fprintf(stderr, "ember-run: error: socketpair: %s\n",
                 std::strerror(errno));
    cleanup();
    return 1;
  }
  auto closeCommit = [&] {
    if (commit[0] >= 0)
      ::close(commit[0]);
    commit[0] = -1;
  };

  char timeout[32];
  std::snprintf(timeout, sizeof(timeout), "%g", o.timeoutSeconds);
  const std::string rendezvous = "file:" + work + "/store";
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids(n, -1);
  const pid_t parent = ::getpid();
  for (int r = 0; r < n; ++r) {
    std::vector<std::string> args = rankArguments(argc, argv, r);
    pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "ember-run: error: fork failed: %s\n",
                   std::strerror(errno));
      for (int q = 0; q < r; ++q)
        ::kill(pids[q], SIGKILL);
      for (int q = 0; q < r; ++q)
        ::waitpid(pids[q], nullptr, 0);
      closeCommit();
      cleanup();
      return 1;
    }
    if (pid == 0) {
      // A rank never outlives its launcher.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent)
        ::_exit(1);
      std::string rank = std::to_string(r), world = std::to_string(n);
      ::setenv("RANK", rank.c_str(), 1);
      ::setenv("LOCAL_RANK", rank.c_str(), 1);
      ::setenv("WORLD_SIZE", world.c_str(), 1);
      ::setenv("EMBER_RENDEZVOUS", rendezvous.c_str(), 1);
      ::setenv("EMBER_COMM_TIMEOUT", timeout, 1);
      ::unsetenv("MASTER_ADDR");
      ::unsetenv("MASTER_PORT");
      ::unsetenv("EMBER_RUN_COMMIT_FD");
      if (r == 0 && writes) {
        ::fcntl(commit[1], F_SETFD, 0); // kept across exec
        ::setenv("EMBER_RUN_COMMIT_FD", std::to_string(commit[1]).c_str(), 1);
      }
      std::vector<char *> cargs;
      for (std::string &a : args)
        cargs.push_back(a.data());
      cargs.push_back(nullptr);
      ::execv("/proc/self/exe", cargs.data());
      std::fprintf(stderr, "ember-run: rank %d: cannot start: %s\n", r,
                   std::strerror(errno));
      ::_exit(1);
    }
    pids[r] = pid;
    if (r == 0 && writes) {
      ::close(commit[1]);
      commit[1] = -1;
    }
  }

  int running = n, failed = -1, interrupted = 0;
  bool rank0Ready = false, committed = false;
  std::vector<char> succeeded(n, 0);
  Clock::time_point failedAt, interruptedAt;
  while (running > 0) {
    // Before reaping: ranks stopped by the same ^C are not failures.
    if (int sig = terminationSignal(); sig && !interrupted) {
      interrupted = sig;
      interruptedAt = Clock::now();
      closeCommit();
      for (int r = 0; r < n; ++r)
        if (pids[r] > 0)
          ::kill(pids[r], SIGTERM);
    }
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno != EINTR)
      break;
    if (pid > 0) {
      int r = 0;
      while (r < n && pids[r] != pid)
        ++r;
      if (r == n)
        continue;
      pids[r] = -1;
      --running;
      bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      succeeded[r] = ok;
      if (!ok && !interrupted) {
        std::fprintf(stderr, "ember-run: rank %d %s\n", r,
                     describeExit(status).c_str());
        if (failed < 0) {
          failed = r;
          failedAt = Clock::now();
          closeCommit(); // rank 0 publishes nothing
        }
      }
      continue;
    }
    if (interrupted && Clock::now() - interruptedAt > kGrace) {
      for (int r = 0; r < n; ++r)
        if (pids[r] > 0)
          ::kill(pids[r], SIGKILL);
      interruptedAt = Clock::now() + std::chrono::hours(24); // once
    }
    if (commit[0] >= 0 && !rank0Ready) {
      pollfd p{commit[0], POLLIN, 0};
      char c = 0;
      if (::poll(&p, 1, 0) == 1 && ::read(commit[0], &c, 1) == 1 && c == 'R')
        rank0Ready = true;
    }
    if (rank0Ready && !committed && failed < 0 && !interrupted) {
      bool othersDone = true;
      for (int r = 1; r < n; ++r)
        othersDone = othersDone && succeeded[r];
      if (othersDone) {
        char c = 'C';
        committed = ::write(commit[0], &c, 1) == 1;
        closeCommit();
      }
    }
    if (failed >= 0 && !interrupted && Clock::now() - failedAt > kGrace) {
      for (int r = 0; r < n; ++r)
        if (pids[r] > 0) {
          std::fprintf(stderr,
                       "ember-run: rank %d still running %lld s after rank %d "
                       "failed: stopping it\n",
                       r, static_cast<long long>(kGrace.count()), failed);
          ::kill(pids[r], SIGKILL);
        }
      failedAt = Clock::now() + std::chrono::hours(24); // report once
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  closeCommit();
  cleanup();
  if (interrupted) {
    std::fprintf(stderr,
                 "ember-run: interrupted by %s; stopped the %d ranks, no "
                 "output file written\n",
                 interrupted == SIGINT    ? "SIGINT"
                 : interrupted == SIGTERM ? "SIGTERM"
                                          : "SIGHUP",
                 n);
    return 128 + interrupted;
  }
  if (failed >= 0) {
    std::fprintf(stderr,
                 "ember-run: error: %d-rank run failed (rank %d "
                 "first); no outputs written\n",
                 n, failed);
    return 1;
  }
  return 0;
}

} // namespace ember::tools
