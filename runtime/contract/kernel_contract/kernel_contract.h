//===- kernel_contract.h - The kernel contract as C++ ---------*- C++ -*-===//
//
// kernels.def as constants: the runtime's registries, the compiler's plan
// emitter and memory planner, and ember-run --list-kernels read it. Header
// only, no dependencies: the compiler (which never links the runtime) and the
// runtime both include it (target ember_kernel_contract).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNEL_CONTRACT_KERNEL_CONTRACT_H
#define EMBER_KERNEL_CONTRACT_KERNEL_CONTRACT_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ember::contract {

/// What a kernel's outputs may share with its inputs (the memory plans).
enum class KernelMemory : uint8_t {
  kPlain,   // outputs are new memory
  kView,    // an output may be a view of an input
  kInPlace, // output 0 may take the memory of a dying input of its type
};

/// The plan's CollectiveDescriptor kind a collective kernel needs (the
/// numbers are the plan format's, ember_plan.proto).
enum class KernelCollective : uint8_t {
  kNone = 0,
  kPooledAllToAll = 1, // ALL_TO_ALL: pooled_all_to_all, sequence_all_to_all
  kKjtAllToAll = 2,
  kReduceScatter = 3,
  kAllGather = 4,
  kAllReduce = 5,
};

enum class KernelBackends : uint8_t { kCpuOnly, kCuda };

enum class KernelId : uint16_t {
#define EMBER_KERNEL(id, ...) id,
#include "kernel_contract/kernels.def"
#undef EMBER_KERNEL
};

struct KernelContract {
  KernelId id;
  std::string_view name;
  int minInputs, maxInputs, minOutputs, maxOutputs;
  KernelMemory memory;
  KernelCollective collective;
  KernelBackends backends;

  constexpr bool outputsAliasInputs() const {
    return memory == KernelMemory::kView;
  }
  constexpr bool elementwiseInPlace() const {
    return memory == KernelMemory::kInPlace;
  }
  constexpr bool onCuda() const { return backends == KernelBackends::kCuda; }
};

inline constexpr KernelContract kKernelContracts[] = {
#define EMBER_KERNEL(id, name, minIn, maxIn, minOut, maxOut, memory,           \
                     collective, backends)                                     \
  {KernelId::id,                                                               \
   name,                                                                       \
   minIn,                                                                      \
   maxIn,                                                                      \
   minOut,                                                                     \
   maxOut,                                                                     \
   KernelMemory::memory,                                                       \
   KernelCollective::collective,                                               \
   KernelBackends::backends},
#include "kernel_contract/kernels.def"
#undef EMBER_KERNEL
};

inline constexpr size_t kNumKernels =
    sizeof(kKernelContracts) / sizeof(kKernelContracts[0]);

constexpr const KernelContract &contractOf(KernelId id) {
  return kKernelContracts[static_cast<size_t>(id)];
}

/// The contract of the kernel named `name`, or nullptr.
constexpr const KernelContract *findKernelContract(std::string_view name) {
  for (const KernelContract &c : kKernelContracts)
    if (c.name == name)
      return &c;
  return nullptr;
}

/// The kernels' names, for code that names a kernel: kernel_names::kRelu
/// (character arrays: they convert to std::string, std::string_view and
/// llvm::StringRef alike).
namespace kernel_names {
#define EMBER_KERNEL(id, name, ...) inline constexpr char k##id[] = name;
#include "kernel_contract/kernels.def"
#undef EMBER_KERNEL
} // namespace kernel_names

} // namespace ember::contract

#endif // EMBER_KERNEL_CONTRACT_KERNEL_CONTRACT_H
