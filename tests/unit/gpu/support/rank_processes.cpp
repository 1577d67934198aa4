//===- rank_processes.cpp - One process per rank for multi-GPU tests ------===//
#include "rank_processes.h"

#include "../../runtime/support/temp_dir.h"
#include "comm/comm_options.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ember::testing {
namespace {

constexpr const char *kRank = "EMBER_RANK_PROCESS_RANK";
constexpr const char *kWorld = "EMBER_RANK_PROCESS_WORLD";
constexpr const char *kStore = "EMBER_RANK_PROCESS_STORE";
constexpr const char *kMode = "EMBER_RANK_PROCESS_MODE";

} // namespace

std::optional<RankProcess> spawnedRank() {
  const char *rank = std::getenv(kRank), *world = std::getenv(kWorld),
             *store = std::getenv(kStore), *mode = std::getenv(kMode);
  if (!rank || !world || !store)
    return std::nullopt;
  RankProcess p;
  p.rank = std::atoi(rank);
  p.world = std::atoi(world);
  p.store = store;
  p.mode = mode ? mode : "";
  return p;
}

int multiGpuWorld(int maxRanks, std::string &whyNot) {
  if (!haveCommunicatorBackend()) {
    whyNot = "no Gloo";
    return 0;
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess)
    gpus = 0;
  if (gpus < 2) {
    whyNot = "needs 2 GPUs, " + std::to_string(gpus) + " visible";
    return 0;
  }
  return gpus < maxRanks ? gpus : maxRanks;
}

void expectEveryRankSucceeded(const std::vector<int> &codes) {
  for (size_t r = 0; r < codes.size(); ++r)
    EXPECT_EQ(codes[r], 0) << "rank " << r << " (-1: hung, killed)";
}

std::vector<int> runRankProcesses(int world, const std::string &workerTest,
                                  const std::string &mode, double deadline) {
  TempDir store;
  const std::string filter = "--gtest_filter=" + workerTest;
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv(kRank, std::to_string(r).c_str(), 1);
      setenv(kWorld, std::to_string(world).c_str(), 1);
      setenv(kStore, store.path().c_str(), 1);
      setenv(kMode, mode.c_str(), 1);
      execl("/proc/self/exe", "ember_rank_process", filter.c_str(),
            static_cast<char *>(nullptr));
      _exit(127);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes(world, -1);
  auto start = std::chrono::steady_clock::now();
  int left = world;
  while (left > 0) {
    for (int r = 0; r < world; ++r) {
      if (codes[r] != -1 || pids[r] <= 0)
        continue;
      int st = 0;
      if (waitpid(pids[r], &st, WNOHANG) == pids[r]) {
        codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        --left;
      }
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count() > deadline) {
      for (int r = 0; r < world; ++r)
        if (codes[r] == -1 && pids[r] > 0) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return codes;
}

} // namespace ember::testing
