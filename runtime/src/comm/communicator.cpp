//===- communicator.cpp - Exchange helpers shared by the backends ---------===//
#include "comm/communicator.h"

#include <cstring>

namespace ember {

Status exchangeLocally(int position, const std::vector<SendBuffer> &sends,
                       const std::vector<RecvBuffer> &recvs,
                       const std::string &what) {
  if (sends.size() != recvs.size() || position < 0 ||
      static_cast<size_t>(position) >= sends.size())
    return internalError(what + ": malformed exchange");
  for (size_t i = 0; i < sends.size(); ++i)
    if (static_cast<int>(i) != position &&
        (sends[i].bytes != 0 || recvs[i].bytes != 0))
      return failedPrecondition(
          what + ": the collective's group has " +
          std::to_string(sends.size()) +
          " ranks but this session is single-rank (start every rank with "
          "SessionOptions.worldSize and a rendezvous, or ember-run --nproc)");
  const SendBuffer &s = sends[position];
  const RecvBuffer &r = recvs[position];
  if (s.bytes != r.bytes)
    return internalError(what + ": sends " + std::to_string(s.bytes) +
                         " bytes to itself but expects " +
                         std::to_string(r.bytes));
  if (s.bytes && s.data != r.data)
    std::memmove(r.data, s.data, s.bytes);
  return Status::ok();
}

Status runExchange(Communicator *comm, const std::vector<int> &group,
                   int position, const std::vector<SendBuffer> &sends,
                   const std::vector<RecvBuffer> &recvs,
                   const std::string &what) {
  if (group.size() == 1 || !comm)
    return exchangeLocally(position, sends, recvs, what);
  return comm->exchange(group, sends, recvs, what);
}

Status Communicator::exchangeSteps(const std::vector<int> &group,
                                   const std::vector<Step> &steps,
                                   const std::string &what) {
  for (const Step &s : steps)
    EMBER_RETURN_IF_ERROR(exchange(group, s.sends, s.recvs, what + s.step));
  return Status::ok();
}

Status runExchangeSteps(Communicator *comm, const std::vector<int> &group,
                        int position,
                        const std::vector<Communicator::Step> &steps,
                        const std::string &what) {
  if (group.size() == 1 || !comm) {
    for (const Communicator::Step &s : steps)
      EMBER_RETURN_IF_ERROR(
          exchangeLocally(position, s.sends, s.recvs, what + s.step));
    return Status::ok();
  }
  return comm->exchangeSteps(group, steps, what);
}

Result<std::vector<int64_t>> exchangeCounts(Communicator *comm,
                                            const std::vector<int> &group,
                                            int position,
                                            const std::vector<int64_t> &mine,
                                            size_t n, const std::string &what) {
  size_t g = group.size();
  if (mine.size() != g * n)
    return internalError(what + ": malformed count exchange");
  std::vector<int64_t> theirs(g * n);
  std::vector<SendBuffer> sends(g);
  std::vector<RecvBuffer> recvs(g);
  for (size_t i = 0; i < g; ++i) {
    sends[i] = {mine.data() + i * n, n * sizeof(int64_t)};
    recvs[i] = {theirs.data() + i * n, n * sizeof(int64_t)};
  }
  EMBER_RETURN_IF_ERROR(runExchange(comm, group, position, sends, recvs, what));
  return theirs;
}

Status barrier(Communicator &comm, const std::string &what) {
  int w = comm.worldSize();
  std::vector<int> group(w);
  for (int i = 0; i < w; ++i)
    group[i] = i;
  std::vector<int64_t> token(w, 1);
  return exchangeCounts(&comm, group, comm.rank(), token, 1, what).status();
}

} // namespace ember
