//===- register_jagged_kernels.cpp - CUDA jagged kernels ------------------===//
//
// Each CUDA jagged/KJT kernel is the CPU kernel's definition (name, arity,
// attribute validation, summary) with the CUDA run function.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_kernels.h"
#include "cuda/jagged/jagged_kernels.h"

namespace ember::cuda {

Status registerJaggedKernels(KernelRegistry &r) {
  struct Entry {
    const char *name;
    KernelFn run;
    /// Reads output sizes back from the device (in some or all cases): never
    /// captured into a CUDA graph (KernelDef::syncsHost).
    bool syncsHost;
  };
  const Entry entries[] = {
      {"lengths_to_offsets", jagged::runLengthsToOffsets, false},
      {"jagged_to_padded", jagged::runJaggedToPadded, false},
      {"padded_to_jagged", jagged::runPaddedToJagged, true},
      {"kjt_permute", jagged::runKjtPermute, true},
      {"kjt_split", jagged::runKjtSplit, true},
      {"kjt_concat", jagged::runKjtConcat, false},
      {"kjt_bucketize", jagged::runKjtBucketize, false},
      {"kjt_from_bags", jagged::runKjtFromBags, true},
  };
  for (const Entry &e : entries) {
    EMBER_ASSIGN_OR_RETURN(const KernelDef *cpu, cpuKernelDef(e.name));
    KernelDef def = *cpu;
    def.run = e.run;
    def.syncsHost = e.syncsHost;
    EMBER_RETURN_IF_ERROR(r.add(std::move(def)));
  }
  return Status::ok();
}

} // namespace ember::cuda
