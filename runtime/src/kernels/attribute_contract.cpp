//===- attribute_contract.cpp - Attributes against the kernel contract ----===//
#include "kernels/attribute_contract.h"

#include "kernel_contract/kernel_contract.h"

#include <cstdio>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace ember {

using contract::AttrKind;
using contract::AttrPresence;
using contract::KernelAttr;

namespace {

// Attributes::Value's alternatives are in AttrKind's order.
template <AttrKind K, typename T>
constexpr bool kAlternative = std::is_same_v<
    std::variant_alternative_t<static_cast<size_t>(K), Attributes::Value>, T>;
static_assert(kAlternative<AttrKind::kInt, int64_t> &&
              kAlternative<AttrKind::kFloat, double> &&
              kAlternative<AttrKind::kString, std::string> &&
              kAlternative<AttrKind::kInts, std::vector<int64_t>> &&
              kAlternative<AttrKind::kFloats, std::vector<double>> &&
              kAlternative<AttrKind::kStrings, std::vector<std::string>>);

AttrKind kindOf(const Attributes::Value &v) {
  return static_cast<AttrKind>(v.index());
}

/// "an int", "a list of strings", ...
std::string kindPhrase(AttrKind k) {
  switch (k) {
  case AttrKind::kInt:
    return "an int";
  case AttrKind::kFloat:
    return "a float";
  case AttrKind::kString:
    return "a string";
  case AttrKind::kInts:
    return "a list of ints";
  case AttrKind::kFloats:
    return "a list of floats";
  case AttrKind::kStrings:
    return "a list of strings";
  }
  return "?";
}

std::string kernelNamed(const contract::KernelContract &k) {
  return "kernel '" + std::string(k.name) + "'";
}

} // namespace

Attributes::Value attributeDefault(const KernelAttr &attr) {
  const AttrPresence &p = attr.presence;
  switch (p.kind) {
  case AttrPresence::Kind::kInt:
    return p.i;
  case AttrPresence::Kind::kFloat:
    return p.f;
  case AttrPresence::Kind::kString:
    return std::string(p.s);
  case AttrPresence::Kind::kEmptyList:
    if (attr.kind == AttrKind::kFloats)
      return std::vector<double>();
    if (attr.kind == AttrKind::kStrings)
      return std::vector<std::string>();
    return std::vector<int64_t>();
  case AttrPresence::Kind::kRequired:
  case AttrPresence::Kind::kOptional:
    break;
  }
  return int64_t{0}; // no default: callers ask hasDefault() first
}

std::string describeAttribute(const KernelAttr &attr) {
  std::string out = std::string(attr.name) + ": " +
                    std::string(contract::attrKindName(attr.kind));
  const AttrPresence &p = attr.presence;
  switch (p.kind) {
  case AttrPresence::Kind::kRequired:
    break;
  case AttrPresence::Kind::kOptional:
    out += " (optional)";
    break;
  case AttrPresence::Kind::kInt:
    out += " = " + std::to_string(p.i);
    break;
  case AttrPresence::Kind::kFloat: {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", p.f);
    out += " = " + std::string(buf);
    break;
  }
  case AttrPresence::Kind::kString:
    out += " = \"" + std::string(p.s) + "\"";
    break;
  case AttrPresence::Kind::kEmptyList:
    out += " = []";
    break;
  }
  return out;
}

Status applyAttributeContract(const contract::KernelContract &kernel,
                              Attributes &attrs) {
  const contract::KernelAttrs declared = contract::attributesOf(kernel.id);
  for (std::string_view name : attrs.names()) {
    const KernelAttr *attr = declared.find(name);
    if (!attr) {
      std::string takes;
      for (const KernelAttr &a : declared)
        takes += (takes.empty() ? "" : ", ") + std::string(a.name);
      return invalidArgument(
          kernelNamed(kernel) + " has no attribute '" + std::string(name) +
          "' (it takes " + (takes.empty() ? std::string("none") : takes) + ")");
    }
  }
  for (const KernelAttr &attr : declared) {
    const Attributes::Value *v = attrs.find(attr.name);
    if (!v) {
      if (attr.presence.required())
        return invalidArgument(kernelNamed(kernel) + " needs the attribute '" +
                               std::string(attr.name) + "' (" +
                               kindPhrase(attr.kind) + ")");
      if (attr.presence.hasDefault())
        attrs.set(std::string(attr.name), attributeDefault(attr));
      continue;
    }
    AttrKind given = kindOf(*v);
    if (given == attr.kind)
      continue;
    // Numbers widen: an integer where a float is declared.
    if (attr.kind == AttrKind::kFloat && given == AttrKind::kInt) {
      attrs.set(std::string(attr.name),
                static_cast<double>(std::get<int64_t>(*v)));
      continue;
    }
    if (attr.kind == AttrKind::kFloats && given == AttrKind::kInts) {
      const auto &ints = std::get<std::vector<int64_t>>(*v);
      attrs.set(std::string(attr.name),
                std::vector<double>(ints.begin(), ints.end()));
      continue;
    }
    return invalidArgument("attribute '" + std::string(attr.name) + "' of " +
                           kernelNamed(kernel) + " must be " +
                           kindPhrase(attr.kind) + ", the plan gives " +
                           kindPhrase(given));
  }
  return Status::ok();
}

Status applyAttributeContract(std::string_view kernelName, Attributes &attrs) {
  const contract::KernelContract *c = contract::findKernelContract(kernelName);
  return c ? applyAttributeContract(*c, attrs) : Status::ok();
}

} // namespace ember
