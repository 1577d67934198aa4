//===- device_collective.h - Host code of the CUDA collectives -*- C++ -*-===//
//
// The CUDA collective kernels follow the CPU ones (comm/kernels/) step by
// step: the same attribute checks and host count exchanges (through the
// session's host communicator, KernelContext::communicator()), then the
// payload on the device: through the session's NcclCommunicator
// (KernelEnv::nccl) for a group of several ranks, or as device copies for a
// group of one, like the CPU's exchangeLocally.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_COLLECTIVES_DEVICE_COLLECTIVE_H
#define EMBER_CUDA_COLLECTIVES_DEVICE_COLLECTIVE_H

#include "comm/kernels/collective_common.h"
#include "comm/nccl/nccl_communicator.h"
#include "cuda/kernel_env.h"

#include <string>
#include <vector>

namespace ember::cuda::collectives {

/// The NCCL communicator for `group`, or nullptr when the group runs
/// locally (a group of one, or a session without NCCL: then any exchange
/// with a peer fails as on the CPU).
NcclCommunicator *ncclFor(KernelContext &ctx, const collective::Group &group);

/// The all-to-all-v of device buffers (sends[i] to position i, recvs[i]
/// from it; sizes agree pairwise; empty entries skipped).
Status deviceExchange(KernelContext &ctx, const collective::Group &group,
                      const std::vector<SendBuffer> &sends,
                      const std::vector<RecvBuffer> &recvs,
                      const std::string &step);

/// Copies a small host array into device scratch (enqueued on the stream;
/// the host copy may go away when this returns).
Result<int64_t *> uploadInts(KernelContext &ctx, const std::vector<int64_t> &v);

/// Waits for the kernel's stream: through the NCCL communicator when there
/// is one (a hung peer becomes a Status), else cudaStreamSynchronize.
Status synchronizeStream(KernelContext &ctx, const std::string &what);

/// The sums of the int32/int64 device `lengths` over the g ranges
/// [lenOff[p], lenOff[p + 1]), computed on the device and read back through
/// env's host staging buffer (one synchronization); a negative length is
/// negativeLength's error, as on the CPU. kjt_all_to_all's and
/// sequence_all_to_all's step 1.
Result<std::vector<uint64_t>>
sumLengthsOnDevice(KernelContext &ctx, KernelEnv &env,
                   const collective::Group &group, const Tensor &lengths,
                   const std::vector<int64_t> &lenOff);

/// Every CUDA collective needs KernelContext::gpu().
Result<KernelEnv *> envOf(KernelContext &ctx, const std::string &where);

} // namespace ember::cuda::collectives

#endif // EMBER_CUDA_COLLECTIVES_DEVICE_COLLECTIVE_H
