//===- sequence_all_to_all_layout.h - its checks and layout ---*- C++ -*-===//
//
// What the CPU and the CUDA sequence_all_to_all kernels share on the host:
// the key_splits attribute (kjt_all_to_all's), the checks of rows and
// lengths, the exchange of (rows expected, row elements, dtype) with every
// group position, and the layout of the row blocks sent and received.
// Summing the lengths per position is the kernels' own (the CUDA kernel sums
// them on the device).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_KERNELS_SEQUENCE_ALL_TO_ALL_LAYOUT_H
#define EMBER_COMM_KERNELS_SEQUENCE_ALL_TO_ALL_LAYOUT_H

#include "comm/kernels/collective_common.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::collective {

/// This rank's inputs, checked.
struct SequenceAllToAllInput {
  std::vector<int64_t> splits; // key_splits
  std::vector<int64_t> keyOff; // prefix sums of splits (keyOff[g] = K)
  std::vector<int64_t> lenOff; // keyOff * B_me: each position's lengths
  int64_t localBatch = 0;      // B_me = lengths.dim(0) / K
  int64_t rowElements = 0;     // elements of one row of rows
};

/// Checks key_splits, input 0 (rows: rank >= 1, float32/float16/bfloat16)
/// and input 1 (lengths: int32/int64 of rank 1, K * B_me entries).
Result<SequenceAllToAllInput> checkSequenceAllToAllInput(KernelContext &ctx,
                                                         const Group &group);

/// More rows than this from one position are refused (the sums of lengths
/// cannot overflow).
inline constexpr int64_t kMaxSequenceRows = int64_t{1} << 48;

/// The row counts of both directions and the blocks they make.
struct SequenceAllToAllLayout {
  std::vector<int64_t> expect;  // rows position p sends here
  std::vector<int64_t> send;    // rows this rank sends to position p
  std::vector<int64_t> sendOff; // prefix sums of send: rows' blocks
  std::vector<int64_t> recvOff; // prefix sums of expect: output's blocks
  Shape outputShape;            // [sum expect, rows' trailing dims...]
  size_t rowBytes = 0;          // bytes of one row
};

/// `expect[p]`: the sum of this rank's lengths over position p's keys (the
/// rows p sends back here). Exchanges (expect[p], row elements, dtype) with
/// every position, checks what comes back against rows (sum of send == N,
/// the same rows and dtype everywhere; every error names group.what) and
/// lays out the blocks.
Result<SequenceAllToAllLayout>
exchangeSequenceCounts(const Group &group, const SequenceAllToAllInput &in,
                       const Tensor &rows, std::vector<int64_t> expect);

/// The exchange's buffers: sends[p] = rows' block for position p,
/// recvs[p] = the output's block from position p.
void sequenceBlocks(const SequenceAllToAllLayout &layout, const Tensor &rows,
                    Tensor &out, std::vector<SendBuffer> &sends,
                    std::vector<RecvBuffer> &recvs);

} // namespace ember::collective

#endif // EMBER_COMM_KERNELS_SEQUENCE_ALL_TO_ALL_LAYOUT_H
