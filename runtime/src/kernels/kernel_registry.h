//===- kernel_registry.h - Kernels by name ---------------------*- C++ -*-===//
#ifndef EMBER_KERNELS_KERNEL_REGISTRY_H
#define EMBER_KERNELS_KERNEL_REGISTRY_H

#include "ember/status.h"
#include "kernels/attributes.h"

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ember {

namespace contract {
struct KernelContract;
} // namespace contract

class KernelContext;

/// Runs the kernel.
using KernelFn = Status (*)(KernelContext &ctx);
/// Checks the attributes and arity when a plan is loaded, so that a bad plan
/// fails at load time with a clear message rather than on its first run.
using KernelValidateFn = Status (*)(const Attributes &attrs, int numInputs,
                                    int numOutputs);

/// For collective kernels: checks the attributes against the size of the
/// collective's group (e.g. one split per member) at load time.
using KernelValidateGroupFn = Status (*)(const Attributes &attrs,
                                         int groupSize);

/// A kernel as a backend registers it. The registry fills in the arity,
/// outputsAliasInputs, elementwiseInPlace and collectiveKind from the kernel
/// contract (runtime/contract/kernel_contract/kernels.def) and refuses a
/// kernel that is not there: registration sites set the name, the
/// functions, the summary and the backend's own facts (syncsHost).
struct KernelDef {
  std::string name; // the plan's instruction kind, e.g. "embedding_bag"
  KernelFn run = nullptr;
  KernelValidateFn validate = nullptr;
  int minInputs = 0, maxInputs = 0; // arity, checked before validate
  int minOutputs = 1, maxOutputs = 1;
  std::string summary; // one line for `ember-run --list-kernels`
  /// The kernel may make an output a view of an input (setOutput) instead of
  /// writing new memory. The memory plan extends the input's lifetime over
  /// the view's, and the executor refuses such views from other kernels.
  bool outputsAliasInputs = false;
  /// Collective kernels: the plan::CollectiveDescriptor::Kind their
  /// instruction's descriptor must have (0: not a collective).
  int collectiveKind = 0;
  KernelValidateGroupFn validateGroup = nullptr;
  /// Output 0 may occupy the same memory as an input of the same dtype and
  /// shape that dies at this instruction (the memory plan's in-place reuse):
  /// every element of it is read before the same element of the output is
  /// written, and no other element is read after that.
  bool elementwiseInPlace = false;
  /// CUDA kernels: the kernel synchronizes its stream to read device values
  /// on the host (an output shape that depends on device data). A program
  /// with such a kernel is never captured into a CUDA graph.
  bool syncsHost = false;
  /// The kernel's entry in the kernel contract (set by the registry; nullptr
  /// for the made-up kernels of a kOff registry): its attributes are checked
  /// against the contract's before `validate` runs.
  const contract::KernelContract *contract = nullptr;
};

/// The kernels of one backend. Registration is explicit (no static
/// initializers, which static linking drops): cpuKernels() calls every
/// register*Kernels function of the CPU backend once.
/// Whether a registry holds the product's kernels (every one in the kernel
/// contract, which supplies its arity and memory facts) or kernels a test
/// makes up for itself (kOff: the definition's own facts are kept).
enum class KernelContractCheck { kEnforced, kOff };

class KernelRegistry {
public:
  explicit KernelRegistry(
      KernelContractCheck check = KernelContractCheck::kEnforced)
      : check_(check) {}

  /// Fails if a kernel of that name exists already or (kEnforced) is not in
  /// the kernel contract; takes its arity and memory facts from the contract.
  Status add(KernelDef def);
  const KernelDef *find(std::string_view name) const;
  std::vector<std::string> names() const;

private:
  KernelContractCheck check_;
  std::map<std::string, KernelDef, std::less<>> kernels_;
};

/// What a registration site gives for one kernel (the registry takes the
/// rest from the kernel contract).
struct KernelEntry {
  const char *name;
  KernelFn run;
  KernelValidateFn validate; // nullptr: nothing to check at load time
  const char *summary;
};
/// Adds a KernelDef made of each entry, in order; stops at the first that
/// KernelRegistry::add refuses.
Status addKernels(KernelRegistry &registry,
                  std::initializer_list<KernelEntry> entries);

/// What the plan loader does with an instruction's attributes before it
/// accepts the instruction: checks them against the kernel contract and
/// fills in the defaults of the optional ones left out
/// (applyAttributeContract, kernels/attribute_contract.h), then runs the
/// kernel's validate hook. Tests and benchmarks that run a kernel without a
/// plan call it too, so the kernel sees what it would see from a plan.
Status prepareKernelAttributes(const KernelDef &def, Attributes &attrs,
                               int numInputs, int numOutputs);

/// Every CPU kernel, registered on first use (thread-safe).
const KernelRegistry &cpuKernels();

} // namespace ember

#endif // EMBER_KERNELS_KERNEL_REGISTRY_H
