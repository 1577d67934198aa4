//===- register_embedding_kernels.cpp - CUDA embedding kernels ------------===//
//
// Each CUDA lookup kernel is the CPU kernel's definition (name, arity,
// attribute validation) with the CUDA run function and a summary of its own.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_kernels.h"
#include "cuda/embedding/embedding_kernels.h"

namespace ember::cuda {

Status registerEmbeddingKernels(KernelRegistry &r) {
  const struct {
    const char *name;
    KernelFn run;
    const char *summary;
  } entries[] = {
      {"embedding_bag", embedding::runEmbeddingBag,
       "pooled lookup of bags of ids in one table (CUDA: a sub-warp per bag)"},
      {"grouped_embedding_bag", embedding::runGroupedEmbeddingBag,
       "table-batched pooled lookup of every feature of a KJT in one CUDA "
       "launch"},
      {"embedding_sequence", embedding::runEmbeddingSequence,
       "unpooled lookup: one float32 row per id (CUDA)"},
  };
  for (const auto &e : entries) {
    EMBER_ASSIGN_OR_RETURN(const KernelDef *cpu, cpuKernelDef(e.name));
    KernelDef def = *cpu;
    def.run = e.run;
    def.summary = e.summary;
    EMBER_RETURN_IF_ERROR(r.add(std::move(def)));
  }
  return Status::ok();
}

} // namespace ember::cuda
