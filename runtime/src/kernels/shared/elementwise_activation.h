//===- elementwise_activation.h - Activations fused into other kernels -*- C++
//-*-===//
//
// The activations `linear` can fuse into its GEMM epilogue, shared with the
// standalone relu/sigmoid/tanh kernels so both compute the same values.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_ELEMENTWISE_ACTIVATION_H
#define EMBER_KERNELS_SHARED_ELEMENTWISE_ACTIVATION_H

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ember::cpu {

enum class Activation { kNone, kRelu, kSigmoid, kTanh };

/// "none", "relu", "sigmoid", "tanh"; nullopt for anything else.
inline std::optional<Activation> parseActivation(std::string_view name) {
  if (name == "none")
    return Activation::kNone;
  if (name == "relu")
    return Activation::kRelu;
  if (name == "sigmoid")
    return Activation::kSigmoid;
  if (name == "tanh")
    return Activation::kTanh;
  return std::nullopt;
}

inline float reluValue(float x) { return x > 0.f ? x : (x != x ? x : 0.f); }
inline float sigmoidValue(float x) { return 1.f / (1.f + std::exp(-x)); }

/// data[i] = act(data[i]) for i < n.
inline void applyActivation(Activation act, float *data, int64_t n) {
  switch (act) {
  case Activation::kNone:
    return;
  case Activation::kRelu:
    for (int64_t i = 0; i < n; ++i)
      data[i] = reluValue(data[i]);
    return;
  case Activation::kSigmoid:
    for (int64_t i = 0; i < n; ++i)
      data[i] = sigmoidValue(data[i]);
    return;
  case Activation::kTanh:
    for (int64_t i = 0; i < n; ++i)
      data[i] = std::tanh(data[i]);
    return;
  }
}

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_ELEMENTWISE_ACTIVATION_H
