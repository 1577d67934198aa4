//===- quantized_sums.h - The order of quantized sums -----------*- C++ -*-===//
//
// How sum and mean pooling add up quantized (int8/int4 row-wise) rows. A
// session chooses the order (SessionOptions::quantizedSums) and every lookup
// kernel of its runs reads it from KernelContext::quantizedSums(); "auto"
// sessions, and callers without a session, take the process default below.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_QUANTIZED_SUMS_H
#define EMBER_KERNELS_QUANTIZED_SUMS_H

#include <optional>
#include <string_view>

namespace ember::embedding {

/// kFast: each column accumulates code * (weight * scale) with one fused
/// multiply-add per row, and the rows' weight * bias are summed once per bag
/// and added at the end: one rounding per row and column, and an
/// accumulator chain of one FMA per row (on a Zen 3 int8 lookups are
/// 1.03-1.21x faster than in FBGEMM's order; docs/performance.md). kFbgemm:
/// FBGEMM's order, code * scale + (acc + bias) per row with the
/// multiply-add fused: bit-identical to FBGEMM's CPU kernels (and torch's
/// quantized embedding_bag ops built on them), two roundings per row. Every
/// row routine set (portable, AVX2, AVX-512) gives the same bits for a given
/// order. Max pooling and unpooled lookups are the same either way.
enum class QuantizedSums { kFast, kFbgemm };

/// "fast" / "fbgemm".
std::string_view quantizedSumsName(QuantizedSums sums);
/// Parses "fast" / "fbgemm"; nullopt for anything else.
std::optional<QuantizedSums> parseQuantizedSums(std::string_view name);

/// The process default: defaultQuantizedSums() (kFast) unless the
/// environment variable EMBER_QUANTIZED_SUMS ("fast" or "fbgemm"; read once,
/// another value is reported on stderr and ignored) or
/// setQuantizedSumsOverride says otherwise.
QuantizedSums quantizedSums();
constexpr QuantizedSums defaultQuantizedSums() { return QuantizedSums::kFast; }
/// Forces the process default (tests compare the orders); nullopt restores
/// it. Not meant to be changed while lookups run.
void setQuantizedSumsOverride(std::optional<QuantizedSums> sums);

} // namespace ember::embedding

#endif // EMBER_KERNELS_QUANTIZED_SUMS_H
