//===- kernel_contract_test.cpp - The registries match the contract -------===//
//
// Every kernel of runtime/contract/kernel_contract/kernels.def is registered
// on the CPU with a summary and exactly the contract's arity and memory
// facts; no kernel exists outside it; the CUDA backend (when built) has
// exactly the kernels the contract marks kCuda; the contract's collective
// numbers are the runtime's. The attribute table (the EMBER_KERNEL_ATTR
// lines) is consistent, its defaults pass the kernels' own checks, and
// applyAttributeContract checks and completes attributes as it says.
//
//===----------------------------------------------------------------------===//
#include "comm/collective_info.h"
#include "ember/session.h"
#include "kernel_contract/kernel_contract.h"
#include "kernels/attribute_contract.h"
#include "kernels/kernel_registry.h"
#include "support/expect_status.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

using namespace ember;
using contract::AttrKind;
using contract::KernelAttr;
using contract::KernelCollective;
using contract::kKernelAttrs;
using contract::kKernelContracts;

static_assert(static_cast<int>(KernelCollective::kPooledAllToAll) ==
              static_cast<int>(CollectiveInfo::Kind::kAllToAll));
static_assert(static_cast<int>(KernelCollective::kKjtAllToAll) ==
              static_cast<int>(CollectiveInfo::Kind::kKjtAllToAll));
static_assert(static_cast<int>(KernelCollective::kReduceScatter) ==
              static_cast<int>(CollectiveInfo::Kind::kReduceScatter));
static_assert(static_cast<int>(KernelCollective::kAllGather) ==
              static_cast<int>(CollectiveInfo::Kind::kAllGather));
static_assert(static_cast<int>(KernelCollective::kAllReduce) ==
              static_cast<int>(CollectiveInfo::Kind::kAllReduce));

namespace {

TEST(KernelContract, NamesAreUniqueAndIdsIndexTheTable) {
  std::set<std::string_view> names;
  for (size_t i = 0; i < contract::kNumKernels; ++i) {
    const contract::KernelContract &c = kKernelContracts[i];
    EXPECT_TRUE(names.insert(c.name).second) << c.name << " is listed twice";
    EXPECT_EQ(static_cast<size_t>(c.id), i) << c.name;
    EXPECT_EQ(&contract::contractOf(c.id), &c) << c.name;
    EXPECT_EQ(contract::findKernelContract(c.name), &c) << c.name;
    EXPECT_LE(c.minInputs, c.maxInputs) << c.name;
    EXPECT_LE(c.minOutputs, c.maxOutputs) << c.name;
    EXPECT_GE(c.minOutputs, 1) << c.name;
  }
  EXPECT_EQ(contract::findKernelContract("no_such_kernel"), nullptr);
  EXPECT_EQ(std::string_view(contract::kernel_names::kEmbeddingBag),
            "embedding_bag");
}

TEST(KernelContract, CpuRegistryIsTheContract) {
  for (const contract::KernelContract &c : kKernelContracts) {
    const KernelDef *def = cpuKernels().find(c.name);
    ASSERT_NE(def, nullptr) << c.name << " has no CPU kernel";
    EXPECT_FALSE(def->summary.empty()) << c.name;
    EXPECT_EQ(def->minInputs, c.minInputs) << c.name;
    EXPECT_EQ(def->maxInputs, c.maxInputs) << c.name;
    EXPECT_EQ(def->minOutputs, c.minOutputs) << c.name;
    EXPECT_EQ(def->maxOutputs, c.maxOutputs) << c.name;
    EXPECT_EQ(def->outputsAliasInputs, c.outputsAliasInputs()) << c.name;
    EXPECT_EQ(def->elementwiseInPlace, c.elementwiseInPlace()) << c.name;
    EXPECT_EQ(def->collectiveKind, static_cast<int>(c.collective)) << c.name;
  }
  for (const std::string &name : cpuKernels().names())
    EXPECT_NE(contract::findKernelContract(name), nullptr)
        << name << " is registered but not in the contract";
}

TEST(KernelContract, CudaRegistryIsTheContractsCudaKernels) {
  if (!haveCudaBackend())
    GTEST_SKIP() << "this build has no CUDA backend";
  std::vector<std::string> onCuda = cudaKernelNames();
  for (const contract::KernelContract &c : kKernelContracts) {
    bool registered = std::find(onCuda.begin(), onCuda.end(),
                                std::string(c.name)) != onCuda.end();
    EXPECT_EQ(registered, c.onCuda())
        << c.name
        << (c.onCuda() ? " is marked kCuda but has no CUDA kernel"
                       : " has a CUDA kernel but is marked kCpuOnly");
  }
}

TEST(KernelContract, RegistryRefusesKernelsOutsideTheContract) {
  KernelRegistry registry;
  KernelDef def;
  def.name = "no_such_kernel";
  def.run = [](KernelContext &) { return Status::ok(); };
  Status s = registry.add(def);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("not in the kernel contract"), std::string::npos)
      << s.message();
  // The contract's facts win over the registering site's.
  def.name = "relu";
  def.minInputs = def.maxInputs = 7;
  ASSERT_TRUE(registry.add(def).isOk());
  EXPECT_EQ(registry.find("relu")->maxInputs, 1);
  EXPECT_TRUE(registry.find("relu")->elementwiseInPlace);
  // A registry of made-up test kernels keeps their own facts.
  KernelRegistry free(KernelContractCheck::kOff);
  def.name = "no_such_kernel";
  ASSERT_TRUE(free.add(def).isOk());
  EXPECT_EQ(free.find("no_such_kernel")->maxInputs, 7);
}

TEST(KernelContract, AttributeTableIsConsistent) {
  size_t total = 0;
  for (const contract::KernelContract &c : kKernelContracts) {
    contract::KernelAttrs attrs = contract::attributesOf(c.id);
    total += attrs.size();
    std::set<std::string_view> names;
    for (const KernelAttr &a : attrs) {
      EXPECT_EQ(a.kernel, c.id) << c.name << "." << a.name;
      EXPECT_FALSE(a.name.empty()) << c.name;
      EXPECT_TRUE(names.insert(a.name).second)
          << c.name << " declares '" << a.name << "' twice";
      EXPECT_EQ(attrs.find(a.name), &a) << c.name << "." << a.name;
      EXPECT_TRUE(contract::defaultFitsKind(a.kind, a.presence))
          << c.name << "." << a.name << ": a default of another kind";
      if (a.presence.hasDefault()) {
        // The default as a value is of the attribute's kind.
        Attributes::Value v = attributeDefault(a);
        EXPECT_EQ(v.index(), static_cast<size_t>(a.kind))
            << c.name << "." << a.name;
      }
    }
    EXPECT_EQ(attrs.find("no_such_attribute"), nullptr) << c.name;
  }
  // Every attribute line belongs to one kernel's range.
  EXPECT_EQ(total, contract::kNumKernelAttrs);
  EXPECT_TRUE(contract::attributesOf(contract::KernelId::Relu).empty());
}

TEST(KernelContract, AttributesAsListed) {
  auto describe = [](contract::KernelId k, std::string_view name) {
    const KernelAttr *a = contract::attributesOf(k).find(name);
    return a ? describeAttribute(*a) : std::string("(none)");
  };
  using contract::KernelId;
  EXPECT_EQ(describe(KernelId::Softmax, "axis"), "axis: int = -1");
  EXPECT_EQ(describe(KernelId::LayerNorm, "epsilon"),
            "epsilon: float = 1e-05");
  EXPECT_EQ(describe(KernelId::Linear, "activation"),
            "activation: string = \"none\"");
  EXPECT_EQ(describe(KernelId::Cast, "to"), "to: string");
  EXPECT_EQ(describe(KernelId::ReduceSum, "axes"), "axes: ints = []");
  EXPECT_EQ(describe(KernelId::Transpose, "perm"), "perm: ints (optional)");
  EXPECT_EQ(describe(KernelId::GroupedEmbeddingBag, "pooling"),
            "pooling: strings");
}

TEST(KernelContract, RegistriesPointAtTheContract) {
  for (const contract::KernelContract &c : kKernelContracts) {
    const KernelDef *def = cpuKernels().find(c.name);
    ASSERT_NE(def, nullptr) << c.name;
    EXPECT_EQ(def->contract, &c) << c.name;
  }
  KernelRegistry free(KernelContractCheck::kOff);
  KernelDef def;
  def.name = "relu";
  def.run = [](KernelContext &) { return Status::ok(); };
  ASSERT_TRUE(free.add(def).isOk());
  EXPECT_EQ(free.find("relu")->contract, nullptr);
}

/// A value of kind `k` (for required attributes).
Attributes::Value someValue(AttrKind k) {
  switch (k) {
  case AttrKind::kInt:
    return int64_t{1};
  case AttrKind::kFloat:
    return 1.0;
  case AttrKind::kString:
    return std::string("x");
  case AttrKind::kInts:
    return std::vector<int64_t>{1};
  case AttrKind::kFloats:
    return std::vector<double>{1.0};
  case AttrKind::kStrings:
    return std::vector<std::string>{"x"};
  }
  return int64_t{0};
}

TEST(KernelContract, ApplyFillsDefaultsAndKeepsWhatIsGiven) {
  for (const contract::KernelContract &c : kKernelContracts) {
    Attributes attrs;
    for (const KernelAttr &a : contract::attributesOf(c.id))
      if (a.presence.required())
        attrs.set(std::string(a.name), someValue(a.kind));
    ASSERT_OK(applyAttributeContract(c, attrs));
    for (const KernelAttr &a : contract::attributesOf(c.id)) {
      const Attributes::Value *v = attrs.find(a.name);
      if (a.presence.kind == contract::AttrPresence::Kind::kOptional) {
        EXPECT_EQ(v, nullptr) << c.name << "." << a.name;
        continue;
      }
      ASSERT_NE(v, nullptr) << c.name << "." << a.name;
      EXPECT_EQ(v->index(), static_cast<size_t>(a.kind))
          << c.name << "." << a.name;
      if (a.presence.hasDefault()) {
        EXPECT_TRUE(*v == attributeDefault(a)) << c.name << "." << a.name;
      }
    }
    // Nothing but the declared attributes.
    EXPECT_LE(attrs.names().size(), contract::attributesOf(c.id).size());
  }
  // A value given is kept; an integer for a float attribute widens.
  Attributes ln;
  ln.set("axis", int64_t{1}).set("epsilon", int64_t{0});
  ASSERT_OK(applyAttributeContract("layer_norm", ln));
  EXPECT_EQ(*ln.getInt("axis"), 1);
  ASSERT_NE(ln.find("epsilon"), nullptr);
  EXPECT_TRUE(std::holds_alternative<double>(*ln.find("epsilon")));
  EXPECT_EQ(*ln.getFloat("epsilon"), 0.0);
  // Kernels outside the contract (a test registry's) are not checked.
  Attributes anything;
  anything.set("whatever", int64_t{1});
  EXPECT_TRUE(applyAttributeContract("no_such_kernel", anything).isOk());
}

TEST(KernelContract, ApplyRejectsUnknownWrongKindAndMissing) {
  Attributes unknown;
  unknown.set("axsi", int64_t{0});
  EXPECT_EQ(applyAttributeContract("softmax", unknown).message(),
            "kernel 'softmax' has no attribute 'axsi' (it takes axis)");
  Attributes none;
  none.set("alpha", 1.0);
  EXPECT_EQ(applyAttributeContract("relu", none).message(),
            "kernel 'relu' has no attribute 'alpha' (it takes none)");
  Attributes kind;
  kind.set("axis", std::string("1"));
  Status s = applyAttributeContract("softmax", kind);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "attribute 'axis' of kernel 'softmax' must be an "
                         "int, the plan gives a string");
  Attributes floatForInt;
  floatForInt.set("axis", 1.0); // no narrowing
  EXPECT_EQ(applyAttributeContract("softmax", floatForInt).message(),
            "attribute 'axis' of kernel 'softmax' must be an int, the plan "
            "gives a float");
  Attributes missing;
  EXPECT_EQ(applyAttributeContract("cast", missing).message(),
            "kernel 'cast' needs the attribute 'to' (a string)");
  Attributes list;
  list.set("axes", int64_t{0});
  EXPECT_EQ(applyAttributeContract("unsqueeze", list).message(),
            "attribute 'axes' of kernel 'unsqueeze' must be a list of ints, "
            "the plan gives an int");
}

TEST(KernelContract, DefaultsPassTheKernelsOwnChecks) {
  // A kernel whose attributes are all optional takes the contract's
  // defaults alone (at its fewest or most inputs: expand and reshape need
  // a shape input without their attribute).
  for (const contract::KernelContract &c : kKernelContracts) {
    bool anyRequired = false;
    for (const KernelAttr &a : contract::attributesOf(c.id))
      anyRequired |= a.presence.required();
    if (anyRequired)
      continue;
    const KernelDef *def = cpuKernels().find(c.name);
    ASSERT_NE(def, nullptr) << c.name;
    Status atMin, atMax;
    {
      Attributes attrs;
      atMin = prepareKernelAttributes(*def, attrs, c.minInputs, c.minOutputs);
    }
    {
      Attributes attrs;
      atMax = prepareKernelAttributes(*def, attrs, std::min(c.maxInputs, 8),
                                      c.minOutputs);
    }
    EXPECT_TRUE(atMin.isOk() || atMax.isOk())
        << c.name << ": " << atMin.toString() << " / " << atMax.toString();
  }
}

} // namespace
