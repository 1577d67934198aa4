//===- bounds_check.cpp - Bounds-check modes ------------------------------===//
#include "ember/bounds_check.h"

namespace ember {

std::string_view boundsCheckModeName(BoundsCheckMode mode) {
  switch (mode) {
  case BoundsCheckMode::kFatal: return "fatal";
  case BoundsCheckMode::kWarning: return "warning";
  case BoundsCheckMode::kIgnore: return "ignore";
  }
  return "unknown";
}

std::optional<BoundsCheckMode> parseBoundsCheckMode(std::string_view name) {
  if (name == "fatal") return BoundsCheckMode::kFatal;
  if (name == "warning") return BoundsCheckMode::kWarning;
  if (name == "ignore") return BoundsCheckMode::kIgnore;
  return std::nullopt;
}

} // namespace ember
