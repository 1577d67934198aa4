//===- kernel_registry.cpp - Kernels by name ------------------------------===//
#include "kernels/kernel_registry.h"

namespace ember {

Status KernelRegistry::add(KernelDef def) {
  if (def.name.empty() || !def.run)
    return internalError("kernel definition without a name or a function");
  std::string name = def.name;
  if (!kernels_.emplace(name, std::move(def)).second)
    return internalError("kernel '" + name + "' is registered twice");
  return Status::ok();
}

const KernelDef *KernelRegistry::find(std::string_view name) const {
  auto it = kernels_.find(name);
  return it == kernels_.end() ? nullptr : &it->second;
}

std::vector<std::string> KernelRegistry::names() const {
  std::vector<std::string> out;
  for (auto &entry : kernels_)
    out.push_back(entry.first);
  return out;
}

} // namespace ember
