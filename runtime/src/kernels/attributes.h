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
/// pooling mode, axis or table dims). The plan loader fills it from the plan
/// and checks it against the kernel contract, which fills in the defaults
/// (kernels/attribute_contract.h); tests build it directly. The getters are
/// strict, with no fallback values: an absent attribute or one of another
/// kind is an error naming it, so a kernel can return that Status unchanged
/// (after the contract check, it reads what the contract declares without
/// failing).
class Attributes {
public:
  using Value = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                             std::vector<double>, std::vector<std::string>>;

  Attributes &set(std::string name, Value value);
  bool has(std::string_view name) const;
  /// Names in insertion order.
  std::vector<std::string_view> names() const;

  Result<int64_t> getInt(std::string_view name) const;
  Result<double> getFloat(std::string_view name) const; // ints convert
  Result<std::string> getString(std::string_view name) const;
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
