//===- kernel_contract_test.cpp - The registries match the contract -------===//
//
// Every kernel of runtime/contract/kernel_contract/kernels.def is registered
// on the CPU with a summary and exactly the contract's arity and memory
// facts; no kernel exists outside it; the CUDA backend (when built) has
// exactly the kernels the contract marks kCuda; the contract's collective
// numbers are the runtime's.
//
//===----------------------------------------------------------------------===//
#include "comm/collective_info.h"
#include "ember/session.h"
#include "kernel_contract/kernel_contract.h"
#include "kernels/kernel_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

using namespace ember;
using contract::KernelCollective;
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

} // namespace
