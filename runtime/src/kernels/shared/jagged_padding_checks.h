//===- jagged_padding_checks.h - Host checks of jagged<->padded -*- C++ -*-===//
//
// The attribute and input checks (with their messages) that the CPU
// (jagged_padding_kernels.cpp) and CUDA (cuda/jagged/jagged_offsets_kernels.cu)
// jagged_to_padded and padded_to_jagged kernels share. The offsets' values
// are the kernels' own to check (on the host or on the device).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_JAGGED_PADDING_CHECKS_H
#define EMBER_KERNELS_SHARED_JAGGED_PADDING_CHECKS_H

#include "ember/status.h"
#include "ember/tensor.h"
#include "kernels/kernel_context.h"

#include <cstdint>
#include <string>

namespace ember::jagged {

/// The offsets input [B+1] (input 1): an int32/int64 vector, not empty.
Status checkOffsetsInput(const Tensor &offsets, const std::string &where);

/// jagged_to_padded's attributes and values input (input 0, [N, D...]).
struct JaggedToPaddedAttrs {
  int64_t maxLength = 0;
  double paddingValue = 0.0;
};
Result<JaggedToPaddedAttrs> checkJaggedToPaddedInputs(KernelContext &ctx,
                                                      const std::string &where);

/// padded_to_jagged's padded input (input 0, [B, L, D...]).
Status checkPaddedInput(const Tensor &padded, const std::string &where);

/// padded_to_jagged's offsets must have B + 1 entries.
Status checkOffsetsMatchPadded(int64_t numOffsets, int64_t batch,
                               const std::string &where);

} // namespace ember::jagged

#endif // EMBER_KERNELS_SHARED_JAGGED_PADDING_CHECKS_H
