//===- communicator_channel_test.cpp - Two threads exchanging at once -----===//
//
// Communicator::openChannel (comm/communicator.h): a second sequence of
// exchanges over the same Gloo connections, used by a pipelined run's
// collective thread beside the communication thread. Each channel's
// exchanges pair up by their own order, whatever the two threads do
// between them; a failure on one breaks both.
//
//===----------------------------------------------------------------------===//
#include "support/collective_ranks.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace ember {
namespace {

using ember::testing::runRanks;

/// What rank `from` sends rank `to` in exchange `seq` of channel `channel`:
/// `words` int64s that say all four (and the word's index).
std::vector<int64_t> payload(int from, int to, int channel, int seq,
                             size_t words) {
  std::vector<int64_t> p(words);
  for (size_t i = 0; i < words; ++i)
    p[i] = ((((int64_t{from} * 16 + to) * 4 + channel) * 1000 + seq) << 20) +
           static_cast<int64_t>(i);
  return p;
}

/// `count` exchanges among all ranks on `comm` (channel `channel`), each
/// checked against payload(); sizes alternate between small and 1 MiB so
/// that both threads have data on the wire at once. Sleeps `pause` between
/// exchanges, so that the two channels' exchanges interleave differently
/// on each rank.
void exchangeMany(Communicator &comm, int channel, int count,
                  std::chrono::microseconds pause) {
  const int world = comm.worldSize(), me = comm.rank();
  std::vector<int> group;
  for (int r = 0; r < world; ++r)
    group.push_back(r);
  for (int seq = 0; seq < count; ++seq) {
    const size_t words = seq % 2 ? 16 : (size_t{1} << 17);
    std::vector<std::vector<int64_t>> out(world), in(world);
    std::vector<SendBuffer> sends(world);
    std::vector<RecvBuffer> recvs(world);
    for (int r = 0; r < world; ++r) {
      out[r] = payload(me, r, channel, seq, words);
      in[r].assign(words, -1);
      sends[r] = {out[r].data(), words * sizeof(int64_t)};
      recvs[r] = {in[r].data(), words * sizeof(int64_t)};
    }
    Status s = comm.exchange(group, sends, recvs,
                             "channel " + std::to_string(channel));
    ASSERT_TRUE(s.isOk()) << s.toString();
    for (int r = 0; r < world; ++r)
      ASSERT_EQ(in[r], payload(r, me, channel, seq, words))
          << "rank " << me << " channel " << channel << " exchange " << seq
          << " from rank " << r;
    std::this_thread::sleep_for(pause);
  }
}

TEST(CommunicatorChannelTest, TwoThreadsExchangeAtOnceEachInItsOwnOrder) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "this build has no Gloo";
  for (int world : {2, 3}) {
    SCOPED_TRACE("world " + std::to_string(world));
    runRanks(world, 60.0, [&](int rank, Communicator *comm) {
      std::unique_ptr<Communicator> channel = comm->openChannel();
      ASSERT_NE(channel, nullptr);
      EXPECT_EQ(channel->rank(), rank);
      EXPECT_EQ(channel->worldSize(), world);
      // One channel per communicator.
      EXPECT_EQ(comm->openChannel(), nullptr);
      // Rank parity decides which thread dawdles: the ranks' two
      // sequences interleave differently.
      auto slow = std::chrono::microseconds(rank % 2 ? 300 : 0);
      auto fast = std::chrono::microseconds(rank % 2 ? 0 : 300);
      std::thread second([&] { exchangeMany(*channel, 1, 40, fast); });
      exchangeMany(*comm, 0, 40, slow);
      second.join();
      // Both still work afterwards.
      exchangeMany(*comm, 0, 2, std::chrono::microseconds(0));
      exchangeMany(*channel, 1, 2, std::chrono::microseconds(0));
    });
  }
}

TEST(CommunicatorChannelTest, AFailureOnOneChannelBreaksBoth) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "this build has no Gloo";
  runRanks(2, 1.0, [&](int rank, Communicator *comm) {
    std::unique_ptr<Communicator> channel = comm->openChannel();
    ASSERT_NE(channel, nullptr);
    if (rank == 1) {
      // Never takes part on the channel (well past rank 0's timeout).
      std::this_thread::sleep_for(std::chrono::milliseconds(3000));
      return;
    }
    int64_t word = 7, got = 0;
    std::vector<int> group = {0, 1};
    std::vector<SendBuffer> sends = {{&word, 8}, {&word, 8}};
    std::vector<RecvBuffer> recvs = {{&got, 8}, {&got, 8}};
    Status s = channel->exchange(group, sends, recvs, "kjt_all_to_all 'f'");
    EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.toString();
    EXPECT_NE(s.message().find("kjt_all_to_all 'f'"), std::string::npos)
        << s.toString();
    EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.toString();
    // The other channel fails at once, naming the first failure.
    auto start = std::chrono::steady_clock::now();
    Status again = comm->exchange(group, sends, recvs, "pooled_all_to_all");
    EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition)
        << again.toString();
    EXPECT_NE(again.message().find("kjt_all_to_all 'f'"), std::string::npos)
        << again.toString();
    EXPECT_LT(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count(),
        0.5);
  });
}

} // namespace
} // namespace ember
