//===- attribute_contract.h - Attributes vs the kernel contract -*- C++ -*-===//
//
// Checks an instruction's attributes against the attributes the kernel
// contract declares for its kernel (the EMBER_KERNEL_ATTR lines of
// runtime/contract/kernel_contract/kernels.def) and fills in the defaults
// of the optional ones left out, so that a kernel reads every attribute it
// declares with the strict getters. The plan loader applies it to every
// instruction (prepareKernelAttributes in kernel_registry.h); tests and
// benchmarks that run a kernel without a plan apply it the same way.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_ATTRIBUTE_CONTRACT_H
#define EMBER_KERNELS_ATTRIBUTE_CONTRACT_H

#include "ember/status.h"
#include "kernels/attributes.h"

#include <string>
#include <string_view>

namespace ember {

namespace contract {
struct KernelContract;
struct KernelAttr;
} // namespace contract

/// Fails (InvalidArgument) on an attribute the kernel does not declare
/// ("kernel 'softmax' has no attribute 'axsi' (it takes axis)"), one of
/// another kind ("attribute 'axis' of kernel 'softmax' must be an int, the
/// plan gives a string") or a required one left out ("kernel 'cast' needs
/// the attribute 'to' (a string)"). An integer given for a float attribute
/// (integers for floats) is converted. Then sets each optional attribute
/// left out that has a default to it.
Status applyAttributeContract(const contract::KernelContract &kernel,
                              Attributes &attrs);

/// The same by kernel name; a kernel outside the contract (the made-up
/// kernels of a test registry) has nothing checked.
Status applyAttributeContract(std::string_view kernelName, Attributes &attrs);

/// The default of an attribute that has one, as an attribute value.
Attributes::Value attributeDefault(const contract::KernelAttr &attr);

/// "axis: int = -1", "to: string", "perm: ints (optional)": how
/// `ember-run --list-kernels` shows an attribute.
std::string describeAttribute(const contract::KernelAttr &attr);

} // namespace ember

#endif // EMBER_KERNELS_ATTRIBUTE_CONTRACT_H
