//===- cast.h - Element conversion between every runtime dtype -*- C++ -*-===//
//
// Conversion rules (also the `cast` kernel's contract):
//   float -> integer: truncation toward zero; NaN -> 0; values beyond the
//     target's range saturate (C++ leaves those undefined; ONNX too).
//   integer -> narrower integer: two's-complement wrap (numpy astype).
//   anything -> bool: value != 0 (NaN -> true).
//   -> float16/bfloat16: round to nearest even.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_CPU_CAST_H
#define EMBER_KERNELS_CPU_CAST_H

#include "ember/dtype.h"

#include <cstdint>

namespace ember::cpu {

/// Converts elements [begin, end) of `in` (dtype `from`) into the same
/// positions of `out` (dtype `to`).
void convertElements(const void *in, DType from, void *out, DType to,
                     int64_t begin, int64_t end);

} // namespace ember::cpu

#endif // EMBER_KERNELS_CPU_CAST_H
