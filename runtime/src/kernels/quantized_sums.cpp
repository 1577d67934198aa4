//===- quantized_sums.cpp - The order of quantized sums -------------------===//
#include "kernels/quantized_sums.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ember::embedding {

std::string_view quantizedSumsName(QuantizedSums sums) {
  return sums == QuantizedSums::kFbgemm ? "fbgemm" : "fast";
}

std::optional<QuantizedSums> parseQuantizedSums(std::string_view name) {
  if (name == "fast")
    return QuantizedSums::kFast;
  if (name == "fbgemm")
    return QuantizedSums::kFbgemm;
  return std::nullopt;
}

// -1: no override; otherwise the QuantizedSums value.
static std::atomic<int> quantizedSumsOverride{-1};

QuantizedSums quantizedSums() {
  int forced = quantizedSumsOverride.load(std::memory_order_relaxed);
  if (forced >= 0)
    return static_cast<QuantizedSums>(forced);
  static const QuantizedSums sums = [] {
    const char *env = std::getenv("EMBER_QUANTIZED_SUMS");
    if (!env || !*env)
      return defaultQuantizedSums();
    if (std::optional<QuantizedSums> parsed = parseQuantizedSums(env))
      return *parsed;
    std::fprintf(
        stderr,
        "ember: EMBER_QUANTIZED_SUMS='%s' is not 'fast' or "
        "'fbgemm'; using '%s'\n",
        env, std::string(quantizedSumsName(defaultQuantizedSums())).c_str());
    return defaultQuantizedSums();
  }();
  return sums;
}

void setQuantizedSumsOverride(std::optional<QuantizedSums> sums) {
  quantizedSumsOverride.store(sums ? static_cast<int>(*sums) : -1,
                              std::memory_order_relaxed);
}

} // namespace ember::embedding
