//===- comm_codec.h - 16-bit wire formats of the collectives ---*- C++ -*-===//
//
// The optional attribute `comm_dtype` of pooled_all_to_all, reduce_scatter
// and all_reduce: "float32" (the default: the payload travels as it is),
// "float16" or "bfloat16". With a 16-bit codec every float32 element that
// goes through the collective (this rank's own block included, so that the
// result does not depend on which rank owns what) is rounded to the wire
// type (round to nearest even) before it is sent and widened back to float32
// after; reductions add (or max) the widened values in float32, over the
// group positions in order 0, 1, ... all_reduce rounds the reduced chunks
// again for its gather step, so every rank gets the same bits. The CUDA
// kernels implement the same rule bit for bit (cuda/collectives/).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_KERNELS_COMM_CODEC_H
#define EMBER_COMM_KERNELS_COMM_CODEC_H

#include "ember/status.h"
#include "kernels/attributes.h"

#include <cstdint>

namespace ember::collective {

/// Values are the wire codes exchanged between ranks (they must agree).
enum class CommCodec : int { kNone = 0, kFloat16 = 1, kBFloat16 = 2 };

/// The 'comm_dtype' attribute: "float32" | "float16" | "bfloat16".
Result<CommCodec> commCodec(const Attributes &attrs);
/// "float32", "float16", "bfloat16".
const char *commCodecName(CommCodec codec);

/// Rounds n floats to 16-bit wire values (codec != kNone).
void encodeWire(CommCodec codec, const float *in, uint16_t *out, int64_t n);
/// Widens one wire value back to float32.
float decodeWire(CommCodec codec, uint16_t v);

} // namespace ember::collective

#endif // EMBER_COMM_KERNELS_COMM_CODEC_H
