//===- collective_kernels.h - Registration of the collective kernels -*- C++
//-*-===//
//
// The runtime side of the collective contract (docs/plan-format.md,
// "Collectives"): kjt_all_to_all, pooled_all_to_all, sequence_all_to_all,
// reduce_scatter, all_gather, all_reduce. Each instruction names its
// CollectiveDescriptor (Instruction.collective); batch sizes that depend on
// other ranks are exchanged by the kernel itself, and empty peer buffers are
// skipped. In a single-rank session (group of one) they copy their input.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_KERNELS_COLLECTIVE_KERNELS_H
#define EMBER_COMM_KERNELS_COLLECTIVE_KERNELS_H

#include "ember/status.h"

namespace ember {

class KernelRegistry;

Status registerCollectiveKernels(KernelRegistry &registry);

} // namespace ember

#endif // EMBER_COMM_KERNELS_COLLECTIVE_KERNELS_H
