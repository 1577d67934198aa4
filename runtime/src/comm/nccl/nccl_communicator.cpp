//===- nccl_communicator.cpp - NCCL collectives of a CUDA session ---------===//
#include "comm/nccl/nccl_communicator.h"

#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

namespace ember {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", s);
  return buf;
}

StatusCode codeOf(ncclResult_t r) {
  switch (r) {
  case ncclSystemError:
  case ncclRemoteError:
    return StatusCode::kUnavailable;
  case ncclInvalidArgument:
    return StatusCode::kInvalidArgument;
  case ncclInvalidUsage:
    return StatusCode::kFailedPrecondition;
  default:
    return StatusCode::kInternal;
  }
}

/// An NCCL result that is neither success nor in-progress, as a Status.
Status ncclError(ncclResult_t r, ncclComm_t comm, const std::string &what,
                 const std::string &call) {
  std::string msg = what + ": " + call + " failed: " + ncclGetErrorString(r);
  const char *last = comm ? ncclGetLastError(comm) : ncclGetLastError(nullptr);
  if (last && *last)
    msg += std::string(" (") + last + ")";
  if (r == ncclRemoteError || r == ncclSystemError)
    msg += "; a peer rank may have died or lost its connection";
  return Status(codeOf(r), msg);
}

/// Polls `comm` until the call that returned `issued` has completed (the
/// non-blocking communicator's state leaves ncclInProgress), or fails
/// after `timeout` seconds.
Status waitComm(ncclComm_t comm, ncclResult_t issued, const std::string &what,
                const std::string &call, double timeout) {
  if (issued != ncclSuccess && issued != ncclInProgress)
    return ncclError(issued, comm, what, call);
  auto start = Clock::now();
  // Enqueues usually finish within microseconds: spin first, then nap.
  int polls = 0;
  for (;;) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(comm, &state);
    if (r != ncclSuccess)
      return ncclError(r, comm, what, "ncclCommGetAsyncError after " + call);
    if (state == ncclSuccess)
      return Status::ok();
    if (state != ncclInProgress)
      return ncclError(state, comm, what, call);
    if (secondsSince(start) > timeout)
      return deadlineExceeded(
          what + ": " + call + " did not complete within " + seconds(timeout) +
          " (a peer rank is dead, hung or not running this collective)");
    if (++polls < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

ncclConfig_t nonBlockingConfig() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

Result<ncclDataType_t> ncclType(DType t) {
  switch (t) {
  case DType::kFloat32:
    return ncclFloat32;
  case DType::kFloat16:
    return ncclFloat16;
  case DType::kBFloat16:
    return ncclBfloat16;
  case DType::kFloat64:
    return ncclFloat64;
  case DType::kInt32:
    return ncclInt32;
  case DType::kInt64:
    return ncclInt64;
  case DType::kInt8:
    return ncclInt8;
  case DType::kUInt8:
  case DType::kBool:
    return ncclUint8;
  default:
    return invalidArgument(std::string("NCCL cannot reduce dtype ") +
                           std::string(dtypeName(t)));
  }
}

std::string describeGroup(const std::vector<int> &group) {
  std::string s = "[";
  for (size_t i = 0; i < group.size(); ++i)
    s += (i ? "," : "") + std::to_string(group[i]);
  return s + "]";
}

/// Makes `device` current for the scope and restores the caller's.
class DeviceScope {
public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess)
      previous_ = -1;
    if (previous_ != device) {
      status_ = cudaSetDevice(device);
      changed_ = status_ == cudaSuccess && previous_ >= 0;
    }
  }
  ~DeviceScope() {
    if (changed_)
      cudaSetDevice(previous_);
  }
  Status status(const std::string &what) const {
    if (status_ == cudaSuccess)
      return Status::ok();
    return unavailable(
        what + ": cudaSetDevice failed: " + cudaGetErrorString(status_));
  }

private:
  int previous_ = -1;
  bool changed_ = false;
  cudaError_t status_ = cudaSuccess;
};

} // namespace

struct NcclCommunicator::State {
  struct Pending {
    cudaEvent_t event;
    cudaStream_t stream;
    std::string what;
  };
  std::mutex mu;
  ncclComm_t world = nullptr;
  /// Communicators of groups other than the world, by their global ranks.
  std::map<std::vector<int>, ncclComm_t> groups;
  /// The first failure; every later call returns it.
  Status broken;
  /// Collectives enqueued and not yet seen complete, oldest first.
  std::deque<Pending> pending;
  std::vector<cudaEvent_t> freeEvents;

  std::vector<ncclComm_t> all() const {
    std::vector<ncclComm_t> v;
    for (const auto &[g, c] : groups)
      if (c)
        v.push_back(c);
    if (world)
      v.push_back(world);
    return v;
  }

  /// Records the failure, aborts every communicator (collectives still on
  /// the GPU return) and returns the failure.
  Status fail(Status s) {
    if (broken.isOk())
      broken = s.withContext("the NCCL communicator was aborted after");
    for (ncclComm_t c : all())
      ncclCommAbort(c);
    groups.clear();
    world = nullptr;
    return s;
  }

  /// Drops completed collectives from the front of `pending` (events of one
  /// stream complete in order); returns how many were dropped.
  size_t prune() {
    size_t n = 0;
    for (auto it = pending.begin(); it != pending.end();) {
      if (cudaEventQuery(it->event) == cudaSuccess) {
        freeEvents.push_back(it->event);
        it = pending.erase(it);
        ++n;
      } else {
        ++it;
      }
    }
    return n;
  }

  Status track(cudaStream_t stream, const std::string &what) {
    if (pending.size() > 256)
      prune();
    cudaEvent_t ev = nullptr;
    if (!freeEvents.empty()) {
      ev = freeEvents.back();
      freeEvents.pop_back();
    } else {
      cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
      if (e != cudaSuccess)
        return internalError(what + ": cudaEventCreateWithFlags failed: " +
                             cudaGetErrorString(e));
    }
    cudaError_t e = cudaEventRecord(ev, stream);
    if (e != cudaSuccess) {
      freeEvents.push_back(ev);
      return internalError(
          what + ": cudaEventRecord failed: " + cudaGetErrorString(e));
    }
    pending.push_back({ev, stream, what});
    return Status::ok();
  }

  /// The first asynchronous NCCL error of any communicator, or ok.
  Status asyncErrors(const std::string &what) {
    for (ncclComm_t c : all()) {
      ncclResult_t state = ncclSuccess;
      ncclResult_t r = ncclCommGetAsyncError(c, &state);
      if (r != ncclSuccess)
        return ncclError(r, c, what, "ncclCommGetAsyncError");
      if (state != ncclSuccess && state != ncclInProgress)
        return ncclError(state, c, what, "a collective");
    }
    return Status::ok();
  }
};

NcclCommunicator::NcclCommunicator(int rank, int worldSize, int device,
                                   double timeoutSeconds)
    : rank_(rank), worldSize_(worldSize), device_(device),
      timeoutSeconds_(timeoutSeconds), state_(std::make_unique<State>()) {}

NcclCommunicator::~NcclCommunicator() {
  if (!state_)
    return;
  DeviceScope scope(device_);
  State &s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  for (ncclComm_t c : s.all()) {
    Status finalized = waitComm(c, ncclCommFinalize(c), "NCCL shutdown",
                                "ncclCommFinalize", timeoutSeconds_);
    if (finalized.isOk())
      ncclCommDestroy(c);
    else
      ncclCommAbort(c);
  }
  s.groups.clear();
  s.world = nullptr;
  for (const auto &p : s.pending)
    cudaEventDestroy(p.event);
  for (cudaEvent_t ev : s.freeEvents)
    cudaEventDestroy(ev);
}

Result<NcclUniqueIdBytes> shareNcclUniqueId(Communicator &host,
                                            const std::vector<int> &group,
                                            const std::string &what) {
  auto me = std::find(group.begin(), group.end(), host.rank());
  if (me == group.end())
    return internalError(what + ": rank " + std::to_string(host.rank()) +
                         " is not in group " + describeGroup(group));
  const int position = static_cast<int>(me - group.begin());
  NcclUniqueIdBytes id{};
  static_assert(sizeof(ncclUniqueId) == sizeof(NcclUniqueIdBytes));
  if (position == 0) {
    ncclUniqueId made;
    ncclResult_t r = ncclGetUniqueId(&made);
    if (r != ncclSuccess)
      return ncclError(r, nullptr, what, "ncclGetUniqueId");
    std::memcpy(id.data(), &made, sizeof(made));
  }
  const size_t g = group.size();
  std::vector<SendBuffer> sends(g);
  std::vector<RecvBuffer> recvs(g);
  NcclUniqueIdBytes received{};
  for (size_t i = 0; i < g; ++i) {
    if (position == 0 && i != 0)
      sends[i] = {id.data(), id.size()};
    if (position != 0 && i == 0)
      recvs[i] = {received.data(), received.size()};
  }
  if (g > 1)
    EMBER_RETURN_IF_ERROR(
        host.exchange(group, sends, recvs, what + " (NCCL unique id)"));
  return position == 0 ? id : received;
}

namespace {

/// Creates and initializes (non-blocking, polled) a communicator of
/// `nranks` ranks from a unique id.
Result<ncclComm_t> initComm(const NcclUniqueIdBytes &idBytes, int nranks,
                            int rank, double timeout, const std::string &what) {
  ncclUniqueId id;
  std::memcpy(&id, idBytes.data(), sizeof(id));
  ncclConfig_t config = nonBlockingConfig();
  ncclComm_t comm = nullptr;
  ncclResult_t r = ncclCommInitRankConfig(&comm, nranks, id, rank, &config);
  if (!comm)
    return ncclError(r == ncclSuccess ? ncclInternalError : r, nullptr, what,
                     "ncclCommInitRankConfig");
  Status s = waitComm(comm, r, what, "ncclCommInitRankConfig", timeout);
  if (!s.isOk()) {
    ncclCommAbort(comm);
    return s;
  }
  return comm;
}

} // namespace

Result<std::unique_ptr<NcclCommunicator>>
createNcclCommunicator(Communicator &host, int cudaDevice,
                       double timeoutSeconds) {
  const int rank = host.rank(), world = host.worldSize();
  const std::string what =
      "NCCL initialization of rank " + std::to_string(rank) + " of " +
      std::to_string(world) + " on CUDA device " + std::to_string(cudaDevice);
  if (timeoutSeconds <= 0)
    return invalidArgument(what + ": the timeout must be positive");
  std::unique_ptr<NcclCommunicator> nccl(
      new NcclCommunicator(rank, world, cudaDevice, timeoutSeconds));
  nccl->host_ = &host;
  DeviceScope scope(cudaDevice);
  EMBER_RETURN_IF_ERROR(scope.status(what));
  std::vector<int> all(world);
  for (int r = 0; r < world; ++r)
    all[r] = r;
  EMBER_ASSIGN_OR_RETURN(NcclUniqueIdBytes id,
                         shareNcclUniqueId(host, all, what));
  EMBER_ASSIGN_OR_RETURN(nccl->state_->world,
                         initComm(id, world, rank, timeoutSeconds, what));
  return nccl;
}

Status NcclCommunicator::health() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->broken;
}

namespace {

/// This rank's index in `group`, or an error for a malformed group.
Result<int> positionIn(const std::vector<int> &group, int rank, int world,
                       const std::string &what) {
  int position = -1;
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i] < 0 || group[i] >= world || (i && group[i] <= group[i - 1]))
      return internalError(what + ": malformed group " + describeGroup(group) +
                           " for a world of " + std::to_string(world));
    if (group[i] == rank)
      position = static_cast<int>(i);
  }
  if (position < 0)
    return internalError(what + ": rank " + std::to_string(rank) +
                         " is not in group " + describeGroup(group));
  return position;
}

} // namespace

Status
NcclCommunicator::prepareGroups(const std::vector<std::vector<int>> &groups) {
  State &s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.broken.isOk())
    return s.broken;
  const std::string what = "NCCL communicator split";
  DeviceScope scope(device_);
  EMBER_RETURN_IF_ERROR(scope.status(what));
  std::vector<std::vector<int>> todo(groups);
  std::sort(todo.begin(), todo.end());
  todo.erase(std::unique(todo.begin(), todo.end()), todo.end());
  for (const std::vector<int> &group : todo) {
    for (size_t i = 0; i < group.size(); ++i)
      if (group[i] < 0 || group[i] >= worldSize_ ||
          (i && group[i] <= group[i - 1]))
        return internalError(what + ": malformed group " +
                             describeGroup(group));
    if (group.size() <= 1 || static_cast<int>(group.size()) == worldSize_)
      continue;
    const bool member = std::binary_search(group.begin(), group.end(), rank_);
    const std::string step = what + " for group " + describeGroup(group);
    ncclConfig_t config = nonBlockingConfig();
    ncclComm_t sub = nullptr;
    ncclResult_t r = ncclCommSplit(s.world, member ? 0 : NCCL_SPLIT_NOCOLOR,
                                   rank_, &sub, &config);
    Status st = waitComm(s.world, r, step, "ncclCommSplit", timeoutSeconds_);
    if (st.isOk() && sub)
      st = waitComm(sub, ncclSuccess, step, "ncclCommSplit", timeoutSeconds_);
    if (!st.isOk()) {
      if (sub)
        ncclCommAbort(sub);
      return s.fail(st);
    }
    if (member) {
      if (!sub)
        return s.fail(internalError(step + ": ncclCommSplit gave no "
                                           "communicator to a member"));
      auto old = s.groups.find(group);
      if (old != s.groups.end()) // already made lazily: keep that one
        ncclCommAbort(sub);
      else
        s.groups[group] = sub;
    }
  }
  return Status::ok();
}

namespace {

/// The communicator of a group, with this rank's group position as its rank
/// (the world's ranks are the positions of the world group).
struct GroupComm {
  ncclComm_t comm = nullptr;
  int position = 0;
};

} // namespace

// The shared prologue of every collective: checks, device, communicator.
namespace {

/// A collective of a group of one: a device copy (nothing when in place).
Status copyLocally(void *recv, const void *send, size_t bytes,
                   cudaStream_t stream, const std::string &what) {
  if (recv == send || bytes == 0)
    return Status::ok();
  cudaError_t e =
      cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, stream);
  return e == cudaSuccess
             ? Status::ok()
             : internalError(
                   what + ": cudaMemcpyAsync failed: " + cudaGetErrorString(e));
}

/// Waits for an issued collective (non-blocking communicator); a failure
/// breaks the communicator, success tracks the stream for synchronize().
Status finishCollective(NcclCommunicator::State &s, ncclComm_t comm,
                        ncclResult_t issued, const char *call,
                        cudaStream_t stream, const std::string &what,
                        double timeoutSeconds) {
  Status st = waitComm(comm, issued, what, call, timeoutSeconds);
  if (!st.isOk())
    return s.fail(st);
  return s.track(stream, what);
}

} // namespace

#define EMBER_NCCL_PROLOGUE(groupVar, whatVar)                                 \
  State &s = *state_;                                                          \
  std::lock_guard<std::mutex> lock(s.mu);                                      \
  if (!s.broken.isOk())                                                        \
    return s.broken;                                                           \
  DeviceScope scope(device_);                                                  \
  EMBER_RETURN_IF_ERROR(scope.status(whatVar));                                \
  EMBER_ASSIGN_OR_RETURN(const int position,                                   \
                         positionIn(groupVar, rank_, worldSize_, whatVar))

namespace {

Result<ncclComm_t> commFor(NcclCommunicator::State &s, Communicator *host,
                           const std::vector<int> &group, int position,
                           int worldSize, double timeout,
                           const std::string &what) {
  if (static_cast<int>(group.size()) == worldSize) {
    if (!s.world)
      return internalError(what + ": no NCCL world communicator");
    return s.world;
  }
  auto it = s.groups.find(group);
  if (it != s.groups.end())
    return it->second;
  // Not prepared: the group's members make a communicator of their own.
  if (!host)
    return internalError(what + ": no host communicator for NCCL group " +
                         describeGroup(group));
  const std::string step =
      what + " (NCCL communicator for group " + describeGroup(group) + ")";
  EMBER_ASSIGN_OR_RETURN(NcclUniqueIdBytes id,
                         shareNcclUniqueId(*host, group, step));
  auto comm =
      initComm(id, static_cast<int>(group.size()), position, timeout, step);
  if (!comm)
    return s.fail(comm.status());
  s.groups[group] = *comm;
  return *comm;
}

} // namespace

Status NcclCommunicator::allToAllv(const std::vector<int> &group,
                                   const std::vector<SendBuffer> &sends,
                                   const std::vector<RecvBuffer> &recvs,
                                   cudaStream_t stream,
                                   const std::string &what) {
  EMBER_NCCL_PROLOGUE(group, what);
  const size_t g = group.size();
  if (sends.size() != g || recvs.size() != g)
    return internalError(what + ": malformed exchange");
  const SendBuffer &own = sends[position];
  if (own.bytes != recvs[position].bytes)
    return internalError(what + ": sends " + std::to_string(own.bytes) +
                         " bytes to itself but expects " +
                         std::to_string(recvs[position].bytes));
  EMBER_RETURN_IF_ERROR(copyLocally(recvs[position].data, own.data, own.bytes,
                                    stream, what + " (own block)"));
  bool any = false;
  for (size_t i = 0; i < g; ++i)
    if (static_cast<int>(i) != position && (sends[i].bytes || recvs[i].bytes))
      any = true;
  if (!any)
    return Status::ok();
  EMBER_ASSIGN_OR_RETURN(
      ncclComm_t comm,
      commFor(s, host_, group, position, worldSize_, timeoutSeconds_, what));
  ncclResult_t first = ncclSuccess;
  ncclGroupStart();
  for (size_t i = 0; i < g; ++i) {
    if (static_cast<int>(i) == position)
      continue;
    const int peer = static_cast<int>(i);
    if (sends[i].bytes) {
      ncclResult_t r = ncclSend(sends[i].data, sends[i].bytes, ncclUint8, peer,
                                comm, stream);
      if (first == ncclSuccess && r != ncclSuccess && r != ncclInProgress)
        first = r;
    }
    if (recvs[i].bytes) {
      ncclResult_t r = ncclRecv(recvs[i].data, recvs[i].bytes, ncclUint8, peer,
                                comm, stream);
      if (first == ncclSuccess && r != ncclSuccess && r != ncclInProgress)
        first = r;
    }
  }
  ncclResult_t ended = ncclGroupEnd();
  if (first != ncclSuccess)
    return s.fail(ncclError(first, comm, what, "ncclSend/ncclRecv"));
  Status st = waitComm(comm, ended, what, "ncclGroupEnd(ncclSend/ncclRecv)",
                       timeoutSeconds_);
  if (!st.isOk())
    return s.fail(st);
  return s.track(stream, what);
}

Status NcclCommunicator::allGatherv(const std::vector<int> &group,
                                    const void *send, size_t sendBytes,
                                    const std::vector<RecvBuffer> &recvs,
                                    cudaStream_t stream,
                                    const std::string &what) {
  std::vector<SendBuffer> sends(group.size(), SendBuffer{send, sendBytes});
  return allToAllv(group, sends, recvs, stream, what);
}

Status NcclCommunicator::reduceScatter(const std::vector<int> &group,
                                       const void *send, void *recv,
                                       size_t recvCount, DType dtype,
                                       ReduceOp op, cudaStream_t stream,
                                       const std::string &what) {
  EMBER_NCCL_PROLOGUE(group, what);
  EMBER_ASSIGN_OR_RETURN(ncclDataType_t type, ncclType(dtype));
  if (recvCount == 0)
    return Status::ok();
  if (group.size() == 1)
    return copyLocally(recv, send, recvCount * dtypeSize(dtype), stream, what);
  EMBER_ASSIGN_OR_RETURN(
      ncclComm_t comm,
      commFor(s, host_, group, position, worldSize_, timeoutSeconds_, what));
  ncclResult_t r =
      ncclReduceScatter(send, recv, recvCount, type,
                        op == ReduceOp::kMax ? ncclMax : ncclSum, comm, stream);
  return finishCollective(s, comm, r, "ncclReduceScatter", stream, what,
                          timeoutSeconds_);
}

Status NcclCommunicator::allGather(const std::vector<int> &group,
                                   const void *send, void *recv,
                                   size_t sendCount, DType dtype,
                                   cudaStream_t stream,
                                   const std::string &what) {
  EMBER_NCCL_PROLOGUE(group, what);
  if (sendCount == 0)
    return Status::ok();
  if (group.size() == 1)
    return copyLocally(recv, send, sendCount * dtypeSize(dtype), stream, what);
  EMBER_ASSIGN_OR_RETURN(
      ncclComm_t comm,
      commFor(s, host_, group, position, worldSize_, timeoutSeconds_, what));
  // Bytes: every dtype gathers as raw data.
  ncclResult_t r = ncclAllGather(send, recv, sendCount * dtypeSize(dtype),
                                 ncclUint8, comm, stream);
  return finishCollective(s, comm, r, "ncclAllGather", stream, what,
                          timeoutSeconds_);
}

Status NcclCommunicator::allReduce(const std::vector<int> &group,
                                   const void *send, void *recv, size_t count,
                                   DType dtype, ReduceOp op,
                                   cudaStream_t stream,
                                   const std::string &what) {
  EMBER_NCCL_PROLOGUE(group, what);
  EMBER_ASSIGN_OR_RETURN(ncclDataType_t type, ncclType(dtype));
  if (count == 0)
    return Status::ok();
  if (group.size() == 1)
    return copyLocally(recv, send, count * dtypeSize(dtype), stream, what);
  EMBER_ASSIGN_OR_RETURN(
      ncclComm_t comm,
      commFor(s, host_, group, position, worldSize_, timeoutSeconds_, what));
  ncclResult_t r =
      ncclAllReduce(send, recv, count, type,
                    op == ReduceOp::kMax ? ncclMax : ncclSum, comm, stream);
  return finishCollective(s, comm, r, "ncclAllReduce", stream, what,
                          timeoutSeconds_);
}

#undef EMBER_NCCL_PROLOGUE

Status NcclCommunicator::synchronize(cudaStream_t stream,
                                     const std::string &what) {
  State &s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.broken.isOk())
    return s.broken;
  DeviceScope scope(device_);
  EMBER_RETURN_IF_ERROR(scope.status(what));
  auto onStream = [&] {
    for (const auto &p : s.pending)
      if (p.stream == stream)
        return &p;
    return static_cast<const State::Pending *>(nullptr);
  };
  s.prune();
  if (!onStream()) {
    // No collective of ours is pending there: nothing can hang on a peer.
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess)
      return internalError(
          what + ": cudaStreamSynchronize failed: " + cudaGetErrorString(e));
    return Status::ok();
  }
  auto lastProgress = Clock::now();
  auto nap = std::chrono::microseconds(10);
  for (;;) {
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) {
      s.prune();
      return Status::ok();
    }
    if (e != cudaErrorNotReady)
      return internalError(
          what + ": cudaStreamQuery failed: " + cudaGetErrorString(e));
    const State::Pending *oldest = onStream();
    const std::string op = oldest ? oldest->what : std::string("a collective");
    Status async = s.asyncErrors(what + ": NCCL failed during " + op);
    if (!async.isOk())
      return s.fail(async);
    if (s.prune())
      lastProgress = Clock::now();
    if (onStream() && secondsSince(lastProgress) > timeoutSeconds_)
      return s.fail(deadlineExceeded(
          what + ": " + op + " made no progress for " +
          seconds(timeoutSeconds_) +
          " (a peer rank is dead, hung or not running this collective); "
          "the NCCL communicators were aborted"));
    if (!onStream()) {
      // Only our own kernels are left on the stream.
      e = cudaStreamSynchronize(stream);
      if (e != cudaSuccess)
        return internalError(
            what + ": cudaStreamSynchronize failed: " + cudaGetErrorString(e));
      return Status::ok();
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(100));
  }
}

} // namespace ember
