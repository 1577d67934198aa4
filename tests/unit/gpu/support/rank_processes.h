//===- rank_processes.h - One process per rank (multi-GPU) ------*- C++ -*-===//
//
// A multi-GPU test starts this test binary once per rank (each rank owns one
// GPU and its own CUDA context), restricted to the test's worker, which reads
// its rank from the environment.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_UNIT_GPU_SUPPORT_RANK_PROCESSES_H
#define EMBER_TESTS_UNIT_GPU_SUPPORT_RANK_PROCESSES_H

#include <optional>
#include <string>
#include <vector>

namespace ember::testing {

/// What a rank process is told (runRankProcesses sets it).
struct RankProcess {
  int rank = 0, world = 0;
  std::string store; // a file rendezvous directory shared by the ranks
  std::string mode;  // the test's own switch
};

/// This process's RankProcess; nullopt when runRankProcesses did not start it.
std::optional<RankProcess> spawnedRank();

/// The world of a multi-GPU test: one rank per visible GPU, at most
/// `maxRanks`; 0 when fewer than 2 GPUs are visible or the build has no host
/// communicator backend (Gloo), `whyNot` then saying which.
int multiGpuWorld(int maxRanks, std::string &whyNot);

/// Runs this test binary once per rank with --gtest_filter=`workerTest`,
/// each with its RankProcess (`mode` for all); returns each rank's exit
/// status (-1: killed after `deadline` seconds).
std::vector<int> runRankProcesses(int world, const std::string &workerTest,
                                  const std::string &mode, double deadline);

/// Expects every rank of runRankProcesses to have exited with 0.
void expectEveryRankSucceeded(const std::vector<int> &codes);

} // namespace ember::testing

#endif // EMBER_TESTS_UNIT_GPU_SUPPORT_RANK_PROCESSES_H
