//===- attributes.cpp - Attributes of a plan instruction ------------------===//
#include "kernels/attributes.h"

namespace ember {

Attributes &Attributes::set(std::string name, Value value) {
  for (auto &entry : entries_) {
    if (entry.first == name) {
      entry.second = std::move(value);
      return *this;
    }
  }
  entries_.emplace_back(std::move(name), std::move(value));
  return *this;
}

const Attributes::Value *Attributes::find(std::string_view name) const {
  for (auto &entry : entries_)
    if (entry.first == name)
      return &entry.second;
  return nullptr;
}

bool Attributes::has(std::string_view name) const { return find(name) != nullptr; }

std::vector<std::string_view> Attributes::names() const {
  std::vector<std::string_view> out;
  for (auto &entry : entries_)
    out.push_back(entry.first);
  return out;
}

static Status missingOrWrongKind(const Attributes::Value *v, std::string_view name,
                                 const char *kind) {
  if (!v)
    return invalidArgument("missing attribute '" + std::string(name) + "'");
  return invalidArgument("attribute '" + std::string(name) + "' must be " + kind);
}

Result<int64_t> Attributes::getInt(std::string_view name) const {
  const Value *v = find(name);
  if (v && std::holds_alternative<int64_t>(*v))
    return std::get<int64_t>(*v);
  return missingOrWrongKind(v, name, "an integer");
}

Result<double> Attributes::getFloat(std::string_view name) const {
  const Value *v = find(name);
  if (v && std::holds_alternative<double>(*v))
    return std::get<double>(*v);
  if (v && std::holds_alternative<int64_t>(*v))
    return static_cast<double>(std::get<int64_t>(*v));
  return missingOrWrongKind(v, name, "a number");
}

Result<std::string> Attributes::getString(std::string_view name) const {
  const Value *v = find(name);
  if (v && std::holds_alternative<std::string>(*v))
    return std::get<std::string>(*v);
  return missingOrWrongKind(v, name, "a string");
}

Result<std::vector<int64_t>> Attributes::getInts(std::string_view name) const {
  const Value *v = find(name);
  if (v && std::holds_alternative<std::vector<int64_t>>(*v))
    return std::get<std::vector<int64_t>>(*v);
  return missingOrWrongKind(v, name, "a list of integers");
}

Result<std::vector<double>> Attributes::getFloats(std::string_view name) const {
  const Value *v = find(name);
  if (v && std::holds_alternative<std::vector<double>>(*v))
    return std::get<std::vector<double>>(*v);
  if (v && std::holds_alternative<std::vector<int64_t>>(*v)) {
    auto &ints = std::get<std::vector<int64_t>>(*v);
    return std::vector<double>(ints.begin(), ints.end());
  }
  return missingOrWrongKind(v, name, "a list of numbers");
}

Result<std::vector<std::string>> Attributes::getStrings(std::string_view name) const {
  const Value *v = find(name);
  if (v && std::holds_alternative<std::vector<std::string>>(*v))
    return std::get<std::vector<std::string>>(*v);
  return missingOrWrongKind(v, name, "a list of strings");
}

} // namespace ember
