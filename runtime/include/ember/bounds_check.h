//===- bounds_check.h - What to do with out-of-range ids -------*- C++ -*-===//
#ifndef EMBER_BOUNDS_CHECK_H
#define EMBER_BOUNDS_CHECK_H

#include <optional>
#include <string_view>

namespace ember {

/// How lookups treat an id outside [0, rows) of its table (TorchRec's
/// BoundsCheckMode):
///  kFatal   - the run fails with an error naming the feature, position and id;
///  kWarning - the id contributes a zero row, is counted, and the count is
///             reported with the run's results;
///  kIgnore  - no check at all (fastest; an out-of-range id is undefined
///             behaviour, so use it only on trusted, validated inputs).
enum class BoundsCheckMode { kFatal, kWarning, kIgnore };

std::string_view boundsCheckModeName(BoundsCheckMode mode);
std::optional<BoundsCheckMode> parseBoundsCheckMode(std::string_view name);

} // namespace ember

#endif // EMBER_BOUNDS_CHECK_H
