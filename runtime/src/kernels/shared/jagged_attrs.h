//===- jagged_attrs.h - Optional attributes with kind checks ---*- C++ -*-===//
//
// Attribute getters for the embedding and jagged kernels: an absent optional
// attribute takes its default, a present one of the wrong kind is an error
// (Attributes' fallback getters would silently ignore it).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_JAGGED_ATTRS_H
#define EMBER_KERNELS_SHARED_JAGGED_ATTRS_H

#include "kernels/attributes.h"

#include <string>
#include <string_view>
#include <vector>

namespace ember::jagged {

inline Result<int64_t> optionalInt(const Attributes &attrs,
                                   std::string_view name, int64_t fallback) {
  if (!attrs.has(name))
    return fallback;
  return attrs.getInt(name);
}

inline Result<double> optionalFloat(const Attributes &attrs,
                                    std::string_view name, double fallback) {
  if (!attrs.has(name))
    return fallback;
  return attrs.getFloat(name);
}

inline Result<std::string> optionalString(const Attributes &attrs,
                                          std::string_view name,
                                          std::string fallback) {
  if (!attrs.has(name))
    return fallback;
  return attrs.getString(name);
}

inline Result<std::vector<std::string>> optionalStrings(const Attributes &attrs,
                                                        std::string_view name) {
  if (!attrs.has(name))
    return std::vector<std::string>();
  return attrs.getStrings(name);
}

/// A 0/1 flag.
inline Result<bool> optionalFlag(const Attributes &attrs, std::string_view name,
                                 bool fallback) {
  EMBER_ASSIGN_OR_RETURN(int64_t v, optionalInt(attrs, name, fallback ? 1 : 0));
  if (v != 0 && v != 1)
    return invalidArgument("attribute '" + std::string(name) +
                           "' must be 0 or 1, got " + std::to_string(v));
  return v == 1;
}

} // namespace ember::jagged

#endif // EMBER_KERNELS_SHARED_JAGGED_ATTRS_H
