//===- kernel_registry.cpp - Kernels by name ------------------------------===//
#include "kernels/kernel_registry.h"

#include "kernel_contract/kernel_contract.h"
#include "kernels/attribute_contract.h"

namespace ember {

Status KernelRegistry::add(KernelDef def) {
  if (def.name.empty() || !def.run)
    return internalError("kernel definition without a name or a function");
  const contract::KernelContract *c =
      check_ == KernelContractCheck::kEnforced
          ? contract::findKernelContract(def.name)
          : nullptr;
  if (check_ == KernelContractCheck::kEnforced && !c)
    return internalError("kernel '" + def.name +
                         "' is not in the kernel contract "
                         "(runtime/contract/kernel_contract/kernels.def)");
  if (c) {
    // Arity and memory facts come from the contract, never from the site
    // that registers the kernel.
    def.minInputs = c->minInputs;
    def.maxInputs = c->maxInputs;
    def.minOutputs = c->minOutputs;
    def.maxOutputs = c->maxOutputs;
    def.outputsAliasInputs = c->outputsAliasInputs();
    def.elementwiseInPlace = c->elementwiseInPlace();
    def.collectiveKind = static_cast<int>(c->collective);
    def.contract = c;
  }
  std::string name = def.name;
  if (!kernels_.emplace(name, std::move(def)).second)
    return internalError("kernel '" + name + "' is registered twice");
  return Status::ok();
}

const KernelDef *KernelRegistry::find(std::string_view name) const {
  auto it = kernels_.find(name);
  return it == kernels_.end() ? nullptr : &it->second;
}

Status addKernels(KernelRegistry &registry,
                  std::initializer_list<KernelEntry> entries) {
  for (const KernelEntry &e : entries) {
    KernelDef def;
    def.name = e.name;
    def.run = e.run;
    def.validate = e.validate;
    def.summary = e.summary;
    EMBER_RETURN_IF_ERROR(registry.add(std::move(def)));
  }
  return Status::ok();
}

Status prepareKernelAttributes(const KernelDef &def, Attributes &attrs,
                               int numInputs, int numOutputs) {
  if (def.contract)
    EMBER_RETURN_IF_ERROR(applyAttributeContract(*def.contract, attrs));
  if (def.validate)
    return def.validate(attrs, numInputs, numOutputs);
  return Status::ok();
}

std::vector<std::string> KernelRegistry::names() const {
  std::vector<std::string> out;
  for (auto &entry : kernels_)
    out.push_back(entry.first);
  return out;
}

} // namespace ember
