//===- json_string.h - JSON string literals ---------------------*- C++ -*-===//
//
// One escaping rule for every JSON the runtime and its tools write (traces,
// ember-run's report).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_RUNTIME_CORE_JSON_STRING_H
#define EMBER_RUNTIME_CORE_JSON_STRING_H

#include <string>

namespace ember {

/// `s` as a JSON string literal, quotes included: '"' and '\' escaped,
/// newline and tab as \n and \t, other control characters as \u00XX;
/// other bytes (UTF-8 included) as they are.
std::string jsonString(const std::string &s);

} // namespace ember

#endif // EMBER_RUNTIME_CORE_JSON_STRING_H
