//===- communicator_steps_test.cpp - Several exchanges posted at once -----===//
//
// Communicator::exchangeSteps (comm/communicator.h): the steps of one call
// give the bytes of `exchange` step by step, whatever the sizes (empty
// buffers for some peers, an empty step), on both channels; a rank running
// the steps at once pairs with a rank running them one by one (both take
// the same slots, so the ranks need not agree on how); the next exchange
// after a call pairs as usual. A peer that stops halfway fails the call
// naming the step and the rank, and breaks the communicator; a step that
// sends itself another size than it expects is refused before anything is
// posted. The group of one copies locally (runExchangeSteps).
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

/// What rank `from` sends rank `to` in step `step` of call `call`: `words`
/// int64s saying all four and the word's index.
std::vector<int64_t> payload(int from, int to, int call, int step,
                             size_t words) {
  std::vector<int64_t> p(words);
  for (size_t i = 0; i < words; ++i)
    p[i] = ((((int64_t{from} * 16 + to) * 16 + step) * 1000 + call) << 24) +
           static_cast<int64_t>(i);
  return p;
}

/// Words from `from` to `to` in step `step` of call `call`: large, small,
/// nothing (for some pairs, and all of step 2 of odd calls).
size_t wordsOf(int from, int to, int call, int step) {
  if (step == 2 && call % 2)
    return 0;
  if ((from + to + step + call) % 3 == 0)
    return 0;
  return step == 1 ? (size_t{1} << 16) + from : 3 + to + call;
}

/// Call `call` of 3 steps among every rank: at once (exchangeSteps) or one
/// exchange per step; checks what arrived.
void exchangeCall(Communicator &comm, int call, bool atOnce) {
  const int world = comm.worldSize(), me = comm.rank();
  std::vector<int> group;
  for (int r = 0; r < world; ++r)
    group.push_back(r);
  const int nSteps = 3;
  std::vector<std::vector<std::vector<int64_t>>> out(nSteps), in(nSteps);
  std::vector<Communicator::Step> steps(nSteps);
  for (int s = 0; s < nSteps; ++s) {
    out[s].resize(world);
    in[s].resize(world);
    steps[s].step = " (step " + std::to_string(s) + ")";
    for (int r = 0; r < world; ++r) {
      out[s][r] = payload(me, r, call, s, wordsOf(me, r, call, s));
      in[s][r].assign(wordsOf(r, me, call, s), -1);
      steps[s].sends.push_back(
          {out[s][r].data(), out[s][r].size() * sizeof(int64_t)});
      steps[s].recvs.push_back(
          {in[s][r].data(), in[s][r].size() * sizeof(int64_t)});
    }
  }
  if (atOnce) {
    Status st = comm.exchangeSteps(group, steps, "call");
    ASSERT_TRUE(st.isOk()) << st.toString();
  } else {
    for (const Communicator::Step &s : steps) {
      Status st = comm.exchange(group, s.sends, s.recvs, "call" + s.step);
      ASSERT_TRUE(st.isOk()) << st.toString();
    }
  }
  for (int s = 0; s < nSteps; ++s)
    for (int r = 0; r < world; ++r)
      ASSERT_EQ(in[s][r], payload(r, me, call, s, wordsOf(r, me, call, s)))
          << "rank " << me << " call " << call << " step " << s << " from rank "
          << r;
}

TEST(CommunicatorStepsTest, SameBytesAsOneExchangePerStepOnBothChannels) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "this build has no Gloo";
  for (int world : {2, 3}) {
    SCOPED_TRACE("world " + std::to_string(world));
    runRanks(world, 60.0, [&](int rank, Communicator *comm) {
      std::unique_ptr<Communicator> channel = comm->openChannel();
      ASSERT_NE(channel, nullptr);
      // Calls at once on one rank, one by one on the others, alternating:
      // the slots agree either way; plain exchanges in between pair too.
      for (int call = 0; call < 8; ++call) {
        const bool atOnce = (call + rank) % 2 == 0 || call >= 6;
        exchangeCall(*comm, call, atOnce);
        exchangeCall(*channel, 100 + call, !atOnce);
      }
    });
  }
}

TEST(CommunicatorStepsTest, GroupOfOneCopiesEachStepLocally) {
  std::vector<int64_t> a = {1, 2, 3}, b = {4}, ra(3, 0), rb(1, 0);
  std::vector<Communicator::Step> steps(2);
  steps[0].sends = {{a.data(), 24}};
  steps[0].recvs = {{ra.data(), 24}};
  steps[1].sends = {{b.data(), 8}};
  steps[1].recvs = {{rb.data(), 8}};
  ASSERT_TRUE(runExchangeSteps(nullptr, {0}, 0, steps, "solo").isOk());
  EXPECT_EQ(ra, a);
  EXPECT_EQ(rb, b);
  // A step that would need peers: refused, naming it.
  steps[1].sends = {{b.data(), 8}, {b.data(), 8}};
  steps[1].recvs = {{rb.data(), 8}, {rb.data(), 8}};
  steps[1].step = " (values)";
  Status s = runExchangeSteps(nullptr, {0, 1}, 0, steps, "kjt");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.toString();
  EXPECT_NE(s.message().find("kjt (values)"), std::string::npos)
      << s.toString();
}

TEST(CommunicatorStepsTest, APeerStoppingHalfwayFailsNamingStepAndRank) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "this build has no Gloo";
  runRanks(2, 2.0, [&](int rank, Communicator *comm) {
    int64_t word = 7 + rank, got[2] = {0, 0};
    std::vector<int> group = {0, 1};
    const int peer = 1 - rank;
    std::vector<SendBuffer> sends(2);
    std::vector<RecvBuffer> recvs(2);
    sends[rank] = {&word, 8};
    recvs[rank] = {&got[rank], 8};
    sends[peer] = {&word, 8};
    recvs[peer] = {&got[peer], 8};
    if (rank == 1) {
      // Takes part in the first step only, then leaves (past rank 0's
      // timeout): rank 0's second step is never answered.
      Status s = comm->exchange(group, sends, recvs, "kjt (lengths)");
      EXPECT_TRUE(s.isOk()) << s.toString();
      std::this_thread::sleep_for(std::chrono::milliseconds(4000));
      return;
    }
    std::vector<Communicator::Step> steps = {{sends, recvs, " (lengths)"},
                                             {sends, recvs, " (values)"}};
    Status s = comm->exchangeSteps(group, steps, "kjt_all_to_all 'f'");
    EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.toString();
    EXPECT_NE(s.message().find("kjt_all_to_all 'f' (values)"),
              std::string::npos)
        << s.toString();
    EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.toString();
    EXPECT_EQ(got[1], 8); // the first step arrived
    // Broken for good: the next call fails at once, naming the failure.
    Status again = comm->exchangeSteps(group, steps, "pooled_all_to_all");
    EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition)
        << again.toString();
    EXPECT_NE(again.message().find("kjt_all_to_all 'f' (values)"),
              std::string::npos)
        << again.toString();
  });
}

TEST(CommunicatorStepsTest, AStepSendingItselfAnotherSizeIsRefusedFirst) {
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "this build has no Gloo";
  runRanks(2, 10.0, [&](int rank, Communicator *comm) {
    int64_t words[2] = {1, 2}, got[2] = {0, 0};
    std::vector<int> group = {0, 1};
    std::vector<Communicator::Step> steps(2);
    for (Communicator::Step &s : steps) {
      s.sends = {{words, 8}, {words, 8}};
      s.recvs = {{got, 8}, {got + 1, 8}};
    }
    steps[1].step = " (values)";
    steps[1].recvs[rank].bytes = 16; // expects more from itself
    Status s = comm->exchangeSteps(group, steps, "kjt");
    EXPECT_EQ(s.code(), StatusCode::kInternal) << s.toString();
    EXPECT_NE(s.message().find("kjt (values)"), std::string::npos)
        << s.toString();
    // Nothing was posted: the communicator still works, in step.
    steps[1].recvs[rank].bytes = 8;
    Status ok = comm->exchangeSteps(group, steps, "kjt");
    EXPECT_TRUE(ok.isOk()) << ok.toString();
    EXPECT_EQ(got[1 - rank], 1);
  });
}

} // namespace
} // namespace ember
