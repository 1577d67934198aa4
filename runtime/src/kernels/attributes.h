//===- attributes.h - Attributes of a plan instruction ---------*- C++ -*-===//
#ifndef EMBER_KERNELS_ATTRIBUTES_H
#define EMBER_KERNELS_ATTRIBUTES_H

#include "ember/status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ember {

/// Named attribute values of one instruction (kernel parameters such as
/// pooling mode, axis or table dims). The plan loader fills it from the plan;
/// tests build it directly. Getters fail with a message naming the attribute
/// and the expected kind, so kernels can return that Status unchanged.
class Attributes {
public:
  using Value = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                             std::vector<double>, std::vector<std::string>>;

  Attributes &set(std::string name, Value value);
  bool has(std::string_view name) const;
  /// Names in insertion order.
  std::vector<std::string_view> names() const;

  Result<int64_t> getInt(std::string_view name) const;
  int64_t getInt(std::string_view name, int64_t fallback) const;
  Result<double> getFloat(std::string_view name) const; // ints convert
  double getFloat(std::string_view name, double fallback) const;
  Result<std::string> getString(std::string_view name) const;
  std::string getString(std::string_view name, std::string_view fallback) const;
  Result<std::vector<int64_t>> getInts(std::string_view name) const;
  Result<std::vector<double>> getFloats(std::string_view name) const;
  Result<std::vector<std::string>> getStrings(std::string_view name) const;

  /// The raw value, or nullptr.
  const Value *find(std::string_view name) const;

private:
  std::vector<std::pair<std::string, Value>> entries_;
};

} // namespace ember

#endif // EMBER_KERNELS_ATTRIBUTES_H
