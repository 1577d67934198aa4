//===- collective_common.h - Shared pieces of the collective kernels -*- C++
//-*-===//
#ifndef EMBER_COMM_KERNELS_COLLECTIVE_COMMON_H
#define EMBER_COMM_KERNELS_COLLECTIVE_COMMON_H

#include "comm/communicator.h"
#include "kernels/attributes.h"
#include "kernels/kernel_context.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::collective {

/// The group an instruction runs in: its descriptor's, or a group of one.
struct Group {
  std::vector<int> ranks;
  int position = 0;
  Communicator *comm = nullptr;
  std::string what; // "instruction 3 'kjt_all_to_all' (...) [collective 'x']"
  int size() const { return static_cast<int>(ranks.size()); }

  Status exchange(const std::vector<SendBuffer> &sends,
                  const std::vector<RecvBuffer> &recvs,
                  const std::string &step) const {
    return runExchange(comm, ranks, position, sends, recvs, what + step);
  }
  /// Several steps at once (Communicator::exchangeSteps: one round trip).
  Status exchangeSteps(const std::vector<Communicator::Step> &steps) const {
    return runExchangeSteps(comm, ranks, position, steps, what);
  }
  /// Every member's record of n ints, in position order (n * size()).
  Result<std::vector<int64_t>> allGatherInts(const std::vector<int64_t> &mine,
                                             const std::string &step) const;
};

Group groupOf(KernelContext &ctx);

/// attrs[name] as g non-negative ints.
Result<std::vector<int64_t>> perMemberInts(const Attributes &attrs,
                                           const char *name, int groupSize);

/// Prefix sums: out[i] = sum of v[0..i), out[size] = total.
std::vector<int64_t> prefixSums(const std::vector<int64_t> &v);

/// Elements of one row of t (dims 1..): 1 for rank 1.
int64_t rowElements(const Tensor &t);

/// Scratch of at least `bytes` (never a zero-size request).
Result<char *> scratchBytes(KernelContext &ctx, size_t bytes);

/// This rank's local batch from a batch_ref input: its dim 0 divided by the
/// 'batch_ref_divisor' attribute (default 1; the compiler passes a KJT's
/// lengths, K * B entries, with divisor K).
Result<int64_t> localBatch(const KernelContext &ctx, const Tensor &ref,
                           const std::string &where);
/// Checks 'batch_ref_divisor' (>= 1).
Status validateBatchRefDivisor(const Attributes &attrs);

/// The 'reduce' attribute: "sum" or "max".
Result<bool> reduceIsMax(const Attributes &attrs);

} // namespace ember::collective

#endif // EMBER_COMM_KERNELS_COLLECTIVE_COMMON_H
