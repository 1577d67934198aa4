//===- launcher.cpp - ember-run --nproc: N local ranks --------------------===//
#include "launcher.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <sys/prctl.h>
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

/// The command line of a rank: ours without --nproc / --output-dir, plus
/// --split-batch and, for rank 0, the staging directory.
std::vector<std::string> rankArguments(int argc, char **argv, int rank,
                                       const std::string &staging) {
  std::vector<std::string> args = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--nproc" || a == "--output-dir") {
      ++i; // and its value
      continue;
    }
    if (a.rfind("--nproc=", 0) == 0 || a.rfind("--output-dir=", 0) == 0)
      continue;
    args.push_back(a);
  }
  args.push_back("--split-batch");
  if (rank == 0 && !staging.empty()) {
    args.push_back("--output-dir");
    args.push_back(staging);
  }
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

/// Moves every file of `staging` into `dir`: all or none.
bool publishOutputs(const std::string &staging, const std::string &dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "ember-run: error: cannot create '%s': %s\n",
                 dir.c_str(), ec.message().c_str());
    return false;
  }
  std::vector<fs::path> moved;
  for (const auto &entry : fs::directory_iterator(staging, ec)) {
    fs::path target = fs::path(dir) / entry.path().filename();
    fs::rename(entry.path(), target, ec);
    if (ec) {
      std::fprintf(stderr, "ember-run: error: cannot write '%s': %s\n",
                   target.c_str(), ec.message().c_str());
      for (const fs::path &p : moved)
        fs::remove(p, ec);
      return false;
    }
    moved.push_back(target);
  }
  return true;
}

} // namespace

int launchLocalRanks(int argc, char **argv, const RunOptions &o) {
  const int n = o.nproc;
  if (!o.rendezvous.empty()) {
    std::fprintf(stderr, "ember-run: --rendezvous is for ranks started by an "
                         "outside launcher; --nproc makes its own\n");
    return 2;
  }
  const char *tmpBase = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(tmpBase && *tmpBase ? tmpBase : "/tmp") + "/ember_run_XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    std::fprintf(stderr,
                 "ember-run: error: cannot create a temporary "
                 "directory for the rendezvous: %s\n",
                 std::strerror(errno));
    return 1;
  }
  const std::string work = tmpl;
  std::string staging;
  std::error_code ec;
  if (!o.outputDir.empty()) {
    fs::create_directories(o.outputDir, ec);
    staging = o.outputDir + "/.ember-run-staging-" + std::to_string(::getpid());
    fs::create_directories(staging, ec);
    if (ec) {
      std::fprintf(stderr, "ember-run: error: cannot create '%s': %s\n",
                   staging.c_str(), ec.message().c_str());
      fs::remove_all(work, ec);
      return 1;
    }
  }
  auto cleanup = [&] {
    std::error_code ignored;
    fs::remove_all(work, ignored);
    if (!staging.empty())
      fs::remove_all(staging, ignored);
  };

  char timeout[32];
  std::snprintf(timeout, sizeof(timeout), "%g", o.timeoutSeconds);
  const std::string rendezvous = "file:" + work + "/store";
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids(n, -1);
  const pid_t parent = ::getpid();
  for (int r = 0; r < n; ++r) {
    std::vector<std::string> args = rankArguments(argc, argv, r, staging);
    pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "ember-run: error: fork failed: %s\n",
                   std::strerror(errno));
      for (int q = 0; q < r; ++q)
        ::kill(pids[q], SIGKILL);
      for (int q = 0; q < r; ++q)
        ::waitpid(pids[q], nullptr, 0);
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
  }

  int running = n, failed = -1;
  Clock::time_point failedAt;
  while (running > 0) {
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
      if (!ok) {
        std::fprintf(stderr, "ember-run: rank %d %s\n", r,
                     describeExit(status).c_str());
        if (failed < 0) {
          failed = r;
          failedAt = Clock::now();
        }
      }
      continue;
    }
    if (failed >= 0 && Clock::now() - failedAt > kGrace) {
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
  if (failed >= 0) {
    std::fprintf(stderr,
                 "ember-run: error: %d-rank run failed (rank %d "
                 "first); no outputs written\n",
                 n, failed);
    cleanup();
    return 1;
  }
  bool ok = staging.empty() || publishOutputs(staging, o.outputDir);
  cleanup();
  return ok ? 0 : 1;
}

} // namespace ember::tools
