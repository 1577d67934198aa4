//===- nccl_communicator.h - NCCL collectives of a CUDA session -*- C++ -*-===//
//
// The device-data twin of Communicator (communicator.h): the CUDA collective
// kernels (cuda/collectives/) move their payload through it, on their
// stream, while small host values (counts, batch sizes) still go through the
// session's host (Gloo) communicator.
//
// Creation (createNcclCommunicator): rank 0 makes the ncclUniqueId and sends
// it to every rank through the host communicator's exchange, so it travels
// through the same rendezvous and store as Gloo; then every rank initializes
// its NCCL communicator on its CUDA device. Groups other than the whole
// world get communicators of their own: prepareGroups() splits the world
// communicator for each (ncclCommSplit; every rank must call it with the
// same list, e.g. the plan's collective groups, at load); a group that was
// not prepared gets one on first use from a unique id made by its first
// member and sent through the host communicator to the group's members only.
//
// Failures never hang and never abort: the communicators are non-blocking
// (ncclConfig_t.blocking = 0), every call is polled with
// ncclCommGetAsyncError, and synchronize() waits for the stream while
// watching them. A peer that died or an NCCL error is kUnavailable; no
// progress for `timeoutSeconds` is kDeadlineExceeded; both name the
// operation. After the first failure every communicator is aborted
// (ncclCommAbort: the collectives still on the GPU return) and every later
// call fails at once with that first error: start the job again.
//
// Thread-safety: calls are serialized internally (a multi-rank session runs
// one run at a time, every rank issuing its collectives in the same order).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_NCCL_NCCL_COMMUNICATOR_H
#define EMBER_COMM_NCCL_NCCL_COMMUNICATOR_H

#include "comm/communicator.h"
#include "ember/dtype.h"
#include "ember/status.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace ember {

class NcclCommunicator {
public:
  enum class ReduceOp { kSum, kMax };
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator &) = delete;
  NcclCommunicator &operator=(const NcclCommunicator &) = delete;

  int rank() const { return rank_; }
  int worldSize() const { return worldSize_; }
  int device() const { return device_; }
  double timeoutSeconds() const { return timeoutSeconds_; }

  /// Splits the world communicator once for each group (global ranks,
  /// ascending) other than the world and those of one rank. Collective over
  /// the WHOLE world: every rank calls it with the same groups.
  Status prepareGroups(const std::vector<std::vector<int>> &groups);

  // Every collective below runs within `group` (global ranks, ascending,
  // containing this rank) on `stream`; every member must issue it, in the
  // same order as its other collectives. Buffers are device memory. `what`
  // names the operation in errors ("instruction 3 'pooled_all_to_all' ...").
  // The calls enqueue and return; synchronize() waits.

  /// sends[i] goes to group[i], recvs[i] comes from group[i] (sizes agree
  /// pairwise, as Communicator::exchange); this rank's own entry is a device
  /// copy; empty entries are skipped. Grouped ncclSend/ncclRecv.
  Status allToAllv(const std::vector<int> &group,
                   const std::vector<SendBuffer> &sends,
                   const std::vector<RecvBuffer> &recvs, cudaStream_t stream,
                   const std::string &what);
  /// recv[recvCount] = reduction over the group of send[pos * recvCount ..].
  Status reduceScatter(const std::vector<int> &group, const void *send,
                       void *recv, size_t recvCount, DType dtype, ReduceOp op,
                       cudaStream_t stream, const std::string &what);
  /// recv[pos * sendCount ..] = position pos's send[sendCount].
  Status allGather(const std::vector<int> &group, const void *send, void *recv,
                   size_t sendCount, DType dtype, cudaStream_t stream,
                   const std::string &what);
  /// Every member's `send` (sendBytes, which may differ per member) lands in
  /// recvs[its position] of every member; empty ones are skipped.
  Status allGatherv(const std::vector<int> &group, const void *send,
                    size_t sendBytes, const std::vector<RecvBuffer> &recvs,
                    cudaStream_t stream, const std::string &what);
  /// recv[count] = elementwise reduction over the group (in place allowed).
  Status allReduce(const std::vector<int> &group, const void *send, void *recv,
                   size_t count, DType dtype, ReduceOp op, cudaStream_t stream,
                   const std::string &what);

  /// Waits until `stream` has finished, watching the communicators: an NCCL
  /// error, or no collective finishing for timeoutSeconds(), aborts them
  /// and returns the error naming the pending collective. Use instead of
  /// cudaStreamSynchronize on streams that carry collectives.
  Status synchronize(cudaStream_t stream, const std::string &what);

  /// The first failure, or ok.
  Status health() const;

  struct State; // nccl_communicator.cpp

private:
  NcclCommunicator(int rank, int worldSize, int device, double timeoutSeconds);
  friend Result<std::unique_ptr<NcclCommunicator>>
  createNcclCommunicator(Communicator &host, int cudaDevice,
                         double timeoutSeconds);

  int rank_, worldSize_, device_;
  double timeoutSeconds_;
  Communicator *host_ = nullptr;
  std::unique_ptr<State> state_;
};

/// Creates this rank's NCCL communicator over the host communicator's world
/// on CUDA device `cudaDevice`; collective over every rank of the world.
/// Fails (kDeadlineExceeded) within timeoutSeconds when a rank does not join.
/// `host` must outlive the result (groups that were not prepared use it).
Result<std::unique_ptr<NcclCommunicator>>
createNcclCommunicator(Communicator &host, int cudaDevice,
                       double timeoutSeconds);

/// The 128 bytes of an ncclUniqueId.
using NcclUniqueIdBytes = std::array<char, 128>;

/// Within `group` (global ranks, ascending): the first member makes an
/// ncclUniqueId and sends it to the others through `host`'s exchange; every
/// member gets it. (createNcclCommunicator's first step; public for tests.)
Result<NcclUniqueIdBytes> shareNcclUniqueId(Communicator &host,
                                            const std::vector<int> &group,
                                            const std::string &what);

} // namespace ember

#endif // EMBER_COMM_NCCL_NCCL_COMMUNICATOR_H
