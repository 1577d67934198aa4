//===- collective_common.cpp - Shared pieces of the collective kernels ----===//
#include "comm/kernels/collective_common.h"

#include "comm/collective_info.h"

namespace ember::collective {

Group groupOf(KernelContext &ctx) {
  Group g;
  g.what = ctx.location();
  g.comm = ctx.communicator();
  if (const CollectiveInfo *info = ctx.collective()) {
    g.ranks = info->groupRanks;
    g.position = info->position;
    if (!info->name.empty() && g.what.find(info->name) == std::string::npos)
      g.what += " [collective '" + info->name + "']";
  } else {
    g.ranks = {g.comm ? g.comm->rank() : 0};
  }
  return g;
}

Result<std::vector<int64_t>>
Group::allGatherInts(const std::vector<int64_t> &mine,
                     const std::string &step) const {
  std::vector<int64_t> all;
  all.reserve(mine.size() * ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i)
    all.insert(all.end(), mine.begin(), mine.end());
  return exchangeCounts(comm, ranks, position, all, mine.size(), what + step);
}

Result<std::vector<int64_t>> perMemberInts(const Attributes &attrs,
                                           const char *name, int groupSize) {
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> v, attrs.getInts(name));
  if (groupSize >= 0 && static_cast<int>(v.size()) != groupSize)
    return invalidArgument("attribute '" + std::string(name) + "' has " +
                           std::to_string(v.size()) +
                           " entries but the collective's group has " +
                           std::to_string(groupSize) + " ranks");
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] < 0 || v[i] > (int64_t{1} << 40))
      return invalidArgument("attribute '" + std::string(name) + "'[" +
                             std::to_string(i) + "] = " + std::to_string(v[i]) +
                             " is out of range");
  return v;
}

std::vector<int64_t> prefixSums(const std::vector<int64_t> &v) {
  std::vector<int64_t> out(v.size() + 1, 0);
  for (size_t i = 0; i < v.size(); ++i)
    out[i + 1] = out[i] + v[i];
  return out;
}

int64_t rowElements(const Tensor &t) {
  int64_t e = 1;
  for (int d = 1; d < t.rank(); ++d)
    e *= t.dim(d);
  return e;
}

Result<char *> scratchBytes(KernelContext &ctx, size_t bytes) {
  EMBER_ASSIGN_OR_RETURN(void *p, ctx.scratch(bytes ? bytes : 64));
  return static_cast<char *>(p);
}

Result<bool> reduceIsMax(const Attributes &attrs) {
  EMBER_ASSIGN_OR_RETURN(std::string r, attrs.getString("reduce"));
  if (r != "sum" && r != "max")
    return invalidArgument("attribute 'reduce' must be \"sum\" or \"max\", not "
                           "\"" +
                           r + "\"");
  return r == "max";
}

Status validateBatchRefDivisor(const Attributes &attrs) {
  EMBER_ASSIGN_OR_RETURN(int64_t divisor, attrs.getInt("batch_ref_divisor"));
  if (divisor < 1)
    return invalidArgument("attribute 'batch_ref_divisor' must be >= 1, got " +
                           std::to_string(divisor));
  return Status::ok();
}

Result<int64_t> localBatch(const KernelContext &ctx, const Tensor &ref,
                           const std::string &where) {
  if (!ref.defined() || ref.rank() < 1)
    return invalidArgument(where + ": batch_ref must have rank >= 1");
  auto divisorOr = ctx.attrs().getInt("batch_ref_divisor");
  if (!divisorOr.isOk())
    return divisorOr.status().withContext(where);
  int64_t divisor = *divisorOr;
  if (divisor < 1 || ref.dim(0) % divisor != 0)
    return invalidArgument(where + ": batch_ref has " +
                           std::to_string(ref.dim(0)) +
                           " rows, not a multiple of batch_ref_divisor " +
                           std::to_string(divisor));
  return ref.dim(0) / divisor;
}

} // namespace ember::collective
