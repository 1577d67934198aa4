//===- collective_ranks.h - Collective kernels on threads as ranks -*- C++
//-*-===//
//
// What the collective kernel tests share: a kernel context that knows its
// collective and communicator, the collective of all ranks, and runRanks,
// which runs a body on `world` threads, each with its own Gloo communicator
// (TCP on loopback, rendezvous through a file store in a fresh directory);
// one rank gets no communicator. RankCountTest is the fixture of the tests
// parameterized by the number of ranks.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_SUPPORT_COLLECTIVE_RANKS_H
#define EMBER_TESTS_SUPPORT_COLLECTIVE_RANKS_H

#include "comm/collective_info.h"
#include "comm/comm_options.h"
#include "comm/communicator.h"
#include "temp_dir.h"
#include "test_kernel_context.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ember::testing {

/// A kernel context that knows its collective and communicator.
class CollectiveContext : public TestKernelContext {
public:
  CollectiveContext(CollectiveInfo info, Communicator *comm)
      : info_(std::move(info)), comm_(comm) {}
  const CollectiveInfo *collective() const override { return &info_; }
  Communicator *communicator() const override { return comm_; }

private:
  CollectiveInfo info_;
  Communicator *comm_;
};

/// The collective `kind` over ranks 0..world-1 as rank `rank` takes part in
/// it; `name` is what its errors call it.
inline CollectiveInfo worldCollective(CollectiveInfo::Kind kind, int world,
                                      int rank, const std::string &name) {
  CollectiveInfo info;
  info.kind = kind;
  for (int r = 0; r < world; ++r)
    info.groupRanks.push_back(r);
  info.position = rank;
  info.name = name;
  return info;
}

/// Runs body(rank, comm) on `world` threads; comm is null for one rank.
inline void runRanks(int world, double timeoutSeconds,
                     const std::function<void(int, Communicator *)> &body) {
  if (world == 1) {
    body(0, nullptr);
    return;
  }
  TempDir store;
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      CommOptions o;
      o.rank = r;
      o.worldSize = world;
      o.rendezvous = "file:" + store.path();
      o.timeoutSeconds = timeoutSeconds;
      auto comm = createCommunicator(o);
      ASSERT_TRUE(comm.isOk()) << comm.status().toString();
      body(r, comm->get());
    });
  for (auto &t : threads)
    t.join();
}

/// A test on GetParam() ranks; more than one needs a communicator backend
/// (skipped, saying why, in a build without Gloo).
class RankCountTest : public ::testing::TestWithParam<int> {
protected:
  void SetUp() override {
    if (GetParam() > 1 && !haveCommunicatorBackend())
      GTEST_SKIP() << "this build has no Gloo (EMBER_ENABLE_GLOO=OFF)";
  }
  int world() const { return GetParam(); }
};

/// A RankCountTest case's name: "2ranks".
inline std::string rankCountName(const ::testing::TestParamInfo<int> &info) {
  return std::to_string(info.param) + "ranks";
}

} // namespace ember::testing

#endif // EMBER_TESTS_SUPPORT_COLLECTIVE_RANKS_H
