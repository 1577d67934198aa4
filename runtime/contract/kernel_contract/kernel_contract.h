//===- kernel_contract.h - The kernel contract as C++ ---------*- C++ -*-===//
//
// kernels.def (the kernels and their attributes) as constants: the
// runtime's registries and plan loader, the compiler's plan emitter and
// memory planner, and ember-run --list-kernels read them. Header only, no
// dependencies: the compiler (which never links the runtime) and the
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
#define EMBER_KERNEL_ATTR(...)
#include "kernel_contract/kernels.def"
#undef EMBER_KERNEL_ATTR
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
#define EMBER_KERNEL_ATTR(...)
#include "kernel_contract/kernels.def"
#undef EMBER_KERNEL_ATTR
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

/// The kind of a kernel attribute's value (plan.proto's Attribute oneof).
enum class AttrKind : uint8_t {
  kInt,
  kFloat,
  kString,
  kInts,
  kFloats,
  kStrings,
};

constexpr std::string_view attrKindName(AttrKind k) {
  switch (k) {
  case AttrKind::kInt:
    return "int";
  case AttrKind::kFloat:
    return "float";
  case AttrKind::kString:
    return "string";
  case AttrKind::kInts:
    return "ints";
  case AttrKind::kFloats:
    return "floats";
  case AttrKind::kStrings:
    return "strings";
  }
  return "?";
}

constexpr bool isListKind(AttrKind k) {
  return k == AttrKind::kInts || k == AttrKind::kFloats ||
         k == AttrKind::kStrings;
}

/// Whether a plan must give an attribute, and what it is when it does not
/// (the last column of kernels.def's EMBER_KERNEL_ATTR lines).
struct AttrPresence {
  enum class Kind : uint8_t {
    kRequired,  // the plan must give it
    kOptional,  // may be left out; no default (the kernel asks has())
    kInt,       // defaults: the value's kind
    kFloat,
    kString,
    kEmptyList, // an empty list of the attribute's kind
  };
  Kind kind;
  int64_t i = 0;
  double f = 0;
  std::string_view s;

  constexpr bool required() const { return kind == Kind::kRequired; }
  constexpr bool hasDefault() const {
    return kind != Kind::kRequired && kind != Kind::kOptional;
  }
};

inline constexpr AttrPresence kRequired{AttrPresence::Kind::kRequired, 0, 0,
                                        {}};
inline constexpr AttrPresence kOptional{AttrPresence::Kind::kOptional, 0, 0,
                                        {}};
struct EmptyList {};
inline constexpr EmptyList kEmptyList{};
constexpr AttrPresence Default(int v) {
  return {AttrPresence::Kind::kInt, v, 0, {}};
}
constexpr AttrPresence Default(int64_t v) {
  return {AttrPresence::Kind::kInt, v, 0, {}};
}
constexpr AttrPresence Default(double v) {
  return {AttrPresence::Kind::kFloat, 0, v, {}};
}
constexpr AttrPresence Default(const char *v) {
  return {AttrPresence::Kind::kString, 0, 0, v};
}
constexpr AttrPresence Default(EmptyList) {
  return {AttrPresence::Kind::kEmptyList, 0, 0, {}};
}

/// True when `p`'s default (if any) is a value of kind `k`.
constexpr bool defaultFitsKind(AttrKind k, const AttrPresence &p) {
  switch (p.kind) {
  case AttrPresence::Kind::kRequired:
  case AttrPresence::Kind::kOptional:
    return true;
  case AttrPresence::Kind::kInt:
    return k == AttrKind::kInt;
  case AttrPresence::Kind::kFloat:
    return k == AttrKind::kFloat;
  case AttrPresence::Kind::kString:
    return k == AttrKind::kString;
  case AttrPresence::Kind::kEmptyList:
    return isListKind(k);
  }
  return false;
}

/// One EMBER_KERNEL_ATTR line of kernels.def.
struct KernelAttr {
  KernelId kernel;
  std::string_view name;
  AttrKind kind;
  AttrPresence presence;
};

inline constexpr KernelAttr kKernelAttrs[] = {
#define EMBER_KERNEL(...)
#define EMBER_KERNEL_ATTR(kernel, name, kind, presence)                        \
  {KernelId::kernel, name, AttrKind::kind, presence},
#include "kernel_contract/kernels.def"
#undef EMBER_KERNEL_ATTR
#undef EMBER_KERNEL
};

inline constexpr size_t kNumKernelAttrs =
    sizeof(kKernelAttrs) / sizeof(kKernelAttrs[0]);

/// The attributes of one kernel: consecutive entries of kKernelAttrs.
struct KernelAttrs {
  const KernelAttr *first = nullptr;
  size_t count = 0;
  constexpr const KernelAttr *begin() const { return first; }
  constexpr const KernelAttr *end() const { return first + count; }
  constexpr size_t size() const { return count; }
  constexpr bool empty() const { return count == 0; }
  /// The attribute named `name`, or nullptr.
  constexpr const KernelAttr *find(std::string_view name) const {
    for (const KernelAttr &a : *this)
      if (a.name == name)
        return &a;
    return nullptr;
  }
};

constexpr KernelAttrs attributesOf(KernelId id) {
  KernelAttrs out;
  for (size_t i = 0; i < kNumKernelAttrs; ++i) {
    if (kKernelAttrs[i].kernel != id)
      continue;
    if (!out.first)
      out.first = &kKernelAttrs[i];
    ++out.count;
  }
  return out;
}

namespace detail {
/// The rules of kernels.def's attribute lines that the compiler can check:
/// each kernel's attributes consecutive and in the kernels' order, every
/// default of its attribute's kind, no name twice within a kernel.
constexpr bool kernelAttrsAreWellFormed() {
  for (size_t i = 0; i < kNumKernelAttrs; ++i) {
    const KernelAttr &a = kKernelAttrs[i];
    if (!defaultFitsKind(a.kind, a.presence) || a.name.empty())
      return false;
    if (i > 0 && kKernelAttrs[i - 1].kernel > a.kernel)
      return false;
    for (size_t j = i + 1; j < kNumKernelAttrs; ++j)
      if (kKernelAttrs[j].kernel == a.kernel && kKernelAttrs[j].name == a.name)
        return false;
  }
  return true;
}
} // namespace detail
static_assert(detail::kernelAttrsAreWellFormed(),
              "kernels.def: an attribute line away from its kernel, a "
              "default of another kind than its attribute's, or an "
              "attribute name given twice for one kernel");

/// The kernels' names, for code that names a kernel: kernel_names::kRelu
/// (character arrays: they convert to std::string, std::string_view and
/// llvm::StringRef alike).
namespace kernel_names {
#define EMBER_KERNEL(id, name, ...) inline constexpr char k##id[] = name;
#define EMBER_KERNEL_ATTR(...)
#include "kernel_contract/kernels.def"
#undef EMBER_KERNEL_ATTR
#undef EMBER_KERNEL
} // namespace kernel_names

} // namespace ember::contract

#endif // EMBER_KERNEL_CONTRACT_KERNEL_CONTRACT_H
