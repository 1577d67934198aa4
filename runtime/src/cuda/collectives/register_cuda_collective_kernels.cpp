//===- register_cuda_collective_kernels.cpp - CUDA collective kernels -----===//
//
// Each CUDA collective is the CPU kernel's definition (name, arity,
// attribute and group validation, summary) with the CUDA run function.
//
//===----------------------------------------------------------------------===//
#include "cuda/collectives/cuda_collective_defs.h"
#include "cuda/cuda_kernels.h"

namespace ember::cuda {

Status registerCollectiveKernels(KernelRegistry &r) {
  using namespace collectives;
  const struct {
    const char *name;
    KernelFn run;
  } entries[] = {
      {"kjt_all_to_all", runKjtAllToAll},
      {"pooled_all_to_all", runPooledAllToAll},
      {"sequence_all_to_all", runSequenceAllToAll},
      {"reduce_scatter", runReduceScatter},
      {"all_gather", runAllGather},
      {"all_reduce", runAllReduce},
  };
  for (const auto &e : entries) {
    EMBER_ASSIGN_OR_RETURN(const KernelDef *cpu, cpuKernelDef(e.name));
    KernelDef def = *cpu;
    def.run = e.run;
    EMBER_RETURN_IF_ERROR(r.add(std::move(def)));
  }
  return Status::ok();
}

} // namespace ember::cuda
