//===- kjt_all_to_all_layout.h - kjt_all_to_all checks, layout -*- C++ -*-===//
//
// What the CPU and the CUDA kjt_all_to_all kernels share on the host: the
// key_splits attribute, the checks of the local KJT, the exchange of (B,
// number of values, dtypes, weights) with every group position, and the
// block exchange (lengths, values, weights: one exchange of three steps,
// posted together) into source-major buffers. Counting the values per
// destination is the kernels' own (the CUDA kernel sums the lengths on the
// device).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_KERNELS_KJT_ALL_TO_ALL_LAYOUT_H
#define EMBER_COMM_KERNELS_KJT_ALL_TO_ALL_LAYOUT_H

#include "comm/kernels/collective_common.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ember::collective {

/// The 'key_splits' attribute: one key count per group position (groupSize
/// of them; -1: any number), at least one key in all.
Result<std::vector<int64_t>> keySplits(const Attributes &attrs, int groupSize);

/// The key_splits attribute as a KernelDef checks it: any group size
/// (validate), then the group's (validateGroup). kjt_all_to_all and
/// sequence_all_to_all take it alike.
Status validateKeySplits(const Attributes &attrs, int, int);
Status validateKeySplitsForGroup(const Attributes &attrs, int groupSize);

/// Entry i of int32 or int64 lengths data.
inline int64_t loadLength(const void *p, DType t, int64_t i) {
  return t == DType::kInt32 ? static_cast<const int32_t *>(p)[i]
                            : static_cast<const int64_t *>(p)[i];
}

/// "<where>: lengths[i] is negative (len)" (kjt_all_to_all and
/// sequence_all_to_all).
Status negativeLength(const std::string &where, int64_t i, int64_t len);

/// This rank's KJT, checked.
struct KjtAllToAllInput {
  std::vector<int64_t> splits; // key_splits
  std::vector<int64_t> keyOff; // prefix sums of splits (keyOff[g] = K)
  int64_t localBatch = 0;      // B_me = lengths.dim(0) / K
  DType lengthsType = DType::kInt64, valuesType = DType::kInt64;
  bool hasWeights = false; // weights travel (input has them, 3 outputs)
};

/// Checks key_splits and inputs 0 (lengths), 1 (values), 2 (weights or
/// absent) against the outputs the plan asks for.
Result<KjtAllToAllInput> checkKjtAllToAllInput(KernelContext &ctx,
                                               const Group &group);

/// "lengths sum to ... but there are ... values" unless they match.
Status checkLengthsMatchValues(const std::string &where, int64_t lengthsSum,
                               const Tensor &values);

/// Sizes of what every position sends to this rank.
struct KjtAllToAllLayout {
  std::vector<int64_t> batches;  // B of every source position
  std::vector<int64_t> counts;   // values every source sends here
  std::vector<int64_t> batchOff; // prefix sums of batches
  std::vector<int64_t> countOff; // prefix sums of counts
  int64_t localKeys = 0;         // K_me = key_splits[my position]
  int64_t totalBatch = 0;        // B_total
  int64_t numValuesOut = 0;      // values received in all
};

/// Exchanges the header with the group; valueOff (g + 1 prefix sums) gives
/// the values this rank sends to each position.
Result<KjtAllToAllLayout>
exchangeKjtSizes(const Group &group, const KjtAllToAllInput &in,
                 const std::vector<int64_t> &valueOff);

/// The outputs (lengths [K_me * B_total], values, weights when
/// in.hasWeights) and the source-major receive buffers of the same sizes.
struct KjtAllToAllBuffers {
  Tensor *outLengths = nullptr, *outValues = nullptr, *outWeights = nullptr;
  char *rl = nullptr, *rv = nullptr, *rw = nullptr;
};
Result<KjtAllToAllBuffers>
allocateKjtAllToAllBuffers(KernelContext &ctx, const KjtAllToAllInput &in,
                           const KjtAllToAllLayout &layout);

/// The steps of one exchange of the group (host or device buffers), as
/// Communicator::exchangeSteps runs them.
using BlockExchange =
    std::function<Status(const std::vector<Communicator::Step> &)>;

/// Sends each position its lengths, values and weights (weights: when
/// in.hasWeights) and receives every source's blocks, in source order, into
/// rl [K_me * B_total lengths], rv and rw [numValuesOut]: the blocks are
/// one call of `exchange` with a step each (on Gloo, one round trip for
/// the lengths and the ids instead of one each).
Status exchangeKjtBlocks(const BlockExchange &exchange, int groupSize,
                         const KjtAllToAllInput &in,
                         const KjtAllToAllLayout &layout,
                         const std::vector<int64_t> &valueOff,
                         const Tensor &lengths, const Tensor &values,
                         const Tensor &weights, char *rl, char *rv, char *rw);

} // namespace ember::collective

#endif // EMBER_COMM_KERNELS_KJT_ALL_TO_ALL_LAYOUT_H
