//===- batch_split.cpp - One rank's part of a global batch ----------------===//
#include "batch_split.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace ember::tools {

namespace {

int64_t loadIndex(const Tensor &t, int64_t i) {
  return t.dtype() == DType::kInt32 ? t.data<int32_t>()[i]
                                    : t.data<int64_t>()[i];
}

/// Rows [begin, end) of t (a copy).
Result<Tensor> sliceRows(const Tensor &t, int64_t begin, int64_t end) {
  Shape shape = t.shape();
  shape[0] = end - begin;
  EMBER_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(t.dtype(), shape));
  size_t rowBytes = t.dim(0) ? t.nbytes() / static_cast<size_t>(t.dim(0)) : 0;
  if (out.nbytes())
    std::memcpy(out.data(),
                static_cast<const char *>(t.data()) + begin * rowBytes,
                out.nbytes());
  return out;
}

} // namespace

void batchPart(int64_t batch, int rank, int world, int64_t *begin,
               int64_t *end) {
  int64_t base = batch / world, extra = batch % world;
  *begin = rank * base + std::min<int64_t>(rank, extra);
  *end = *begin + base + (rank < extra ? 1 : 0);
}

Status splitGlobalBatch(const ModelSignature &sig,
                        std::map<std::string, Tensor> &arrays, int rank,
                        int world) {
  std::set<std::string> batchSymbols = {"B", sig.batchSymbol};
  for (const KjtInfo &k : sig.kjtInputs)
    batchSymbols.insert(k.batchSymbol);
  // nn.EmbeddingBag-style inputs: offsets input -> its ids/weights inputs.
  std::map<std::string, std::vector<const TensorInfo *>> bagMembers;
  std::map<std::string, bool> bagIncludeLast;
  for (const TensorInfo &t : sig.inputs)
    if (!t.bagOffsets.empty()) {
      bagMembers[t.bagOffsets].push_back(&t);
      bagIncludeLast[t.bagOffsets] = t.includeLastOffset;
    }
  auto inBag = [&](const TensorInfo &t) {
    return !t.bagOffsets.empty() || bagMembers.count(t.name);
  };
  int64_t batch = -1;
  std::string batchFrom;
  auto agree = [&](int64_t b, const std::string &from) -> Status {
    if (batch < 0) {
      batch = b;
      batchFrom = from;
      return Status::ok();
    }
    if (b != batch)
      return invalidArgument("the global batch is " + std::to_string(batch) +
                             " for " + batchFrom + " but " + std::to_string(b) +
                             " for " + from + "; cannot split it over ranks");
    return Status::ok();
  };

  // KJTs: per-key bags of the global batch.
  struct KjtParts {
    const KjtInfo *info;
    Tensor values, lengths, weights; // lengths as int64 [F * B]
    DType lengthsType;               // as given (lengths or offsets)
  };
  std::vector<KjtParts> kjts;
  for (const KjtInfo &k : sig.kjtInputs) {
    auto find = [&](const char *part) {
      auto it = arrays.find(k.name + "." + part);
      return it == arrays.end() ? Tensor() : it->second;
    };
    Tensor values = find("values"), lengths = find("lengths"),
           offsets = find("offsets"), weights = find("weights");
    if (!values.defined() || lengths.defined() == offsets.defined())
      continue; // the session reports what is missing
    const int64_t F = static_cast<int64_t>(k.keys.size());
    std::string where = "KJT input '" + k.name + "'";
    const Tensor &index = lengths.defined() ? lengths : offsets;
    if (index.rank() != 1 ||
        (index.dtype() != DType::kInt32 && index.dtype() != DType::kInt64))
      return invalidArgument(where + ": lengths/offsets must be int32 or "
                                     "int64 of rank 1");
    int64_t n = lengths.defined() ? lengths.dim(0) : offsets.dim(0) - 1;
    if (n < 0 || n % F != 0)
      return invalidArgument(where + ": " + std::to_string(n) +
                             " bags is not a multiple of its " +
                             std::to_string(F) + " keys");
    EMBER_ASSIGN_OR_RETURN(Tensor l, Tensor::allocate(DType::kInt64, {n}));
    for (int64_t i = 0; i < n; ++i)
      l.data<int64_t>()[i] =
          lengths.defined() ? loadIndex(lengths, i)
                            : loadIndex(offsets, i + 1) - loadIndex(offsets, i);
    EMBER_RETURN_IF_ERROR(agree(n / F, where));
    kjts.push_back({&k, values, l, weights, index.dtype()});
  }
  for (const TensorInfo &t : sig.inputs) {
    auto it = arrays.find(t.name);
    if (it == arrays.end() || t.dims.empty() || inBag(t) ||
        !batchSymbols.count(t.dims[0]) || it->second.rank() < 1)
      continue;
    EMBER_RETURN_IF_ERROR(agree(it->second.dim(0), "input '" + t.name + "'"));
  }
  // Bags: the batch is the number of bags of each offsets input.
  for (const auto &[offsetsName, members] : bagMembers) {
    auto it = arrays.find(offsetsName);
    if (it == arrays.end())
      continue; // the session reports what is missing
    const Tensor &offsets = it->second;
    std::string where = "offsets input '" + offsetsName + "'";
    if (offsets.rank() != 1 ||
        (offsets.dtype() != DType::kInt32 && offsets.dtype() != DType::kInt64))
      return invalidArgument(where + " must be int32 or int64 of rank 1");
    int64_t bags = offsets.dim(0) - (bagIncludeLast[offsetsName] ? 1 : 0);
    if (bags < 0)
      return invalidArgument(where + " is empty but has include_last_offset");
    EMBER_RETURN_IF_ERROR(agree(bags, where));
  }
  if (batch < 0)
    return invalidArgument("no input has a batch dimension to split over the "
                           "ranks");
  int64_t begin, end;
  batchPart(batch, rank, world, &begin, &end);

  for (const TensorInfo &t : sig.inputs) {
    auto it = arrays.find(t.name);
    if (it == arrays.end() || t.dims.empty() || inBag(t) ||
        !batchSymbols.count(t.dims[0]) || it->second.rank() < 1)
      continue;
    EMBER_ASSIGN_OR_RETURN(it->second, sliceRows(it->second, begin, end));
  }
  for (const auto &[offsetsName, members] : bagMembers) {
    auto it = arrays.find(offsetsName);
    if (it == arrays.end())
      continue;
    const Tensor offsets = it->second;
    const bool includeLast = bagIncludeLast[offsetsName];
    // The ids of bags [begin, end): from offsets[begin] to the next bag's
    // start (or the end of the ids for the last bag).
    int64_t first = begin < batch ? loadIndex(offsets, begin) : -1;
    for (const TensorInfo *member : members) {
      auto m = arrays.find(member->name);
      if (m == arrays.end())
        continue;
      const Tensor &ids = m->second;
      const int64_t n = ids.rank() >= 1 ? ids.dim(0) : -1;
      int64_t stop = end < batch   ? loadIndex(offsets, end)
                     : includeLast ? loadIndex(offsets, batch)
                                   : n;
      int64_t start = first < 0 ? stop : first;
      if (n < 0 || start < 0 || start > stop || stop > n)
        return invalidArgument(
            "input '" + member->name + "': its offsets ('" + offsetsName +
            "') select ids [" + std::to_string(start) + ", " +
            std::to_string(stop) + ") of " + std::to_string(n) +
            " for this rank's bags; the offsets must start at 0, not "
            "decrease and stay within the ids");
      EMBER_ASSIGN_OR_RETURN(m->second, sliceRows(ids, start, stop));
    }
    // Offsets of this rank's bags, from 0.
    const int64_t count = end - begin + (includeLast ? 1 : 0);
    EMBER_ASSIGN_OR_RETURN(Tensor part,
                           Tensor::allocate(offsets.dtype(), {count}));
    for (int64_t i = 0; i < count; ++i) {
      int64_t v = first < 0 ? 0 : loadIndex(offsets, begin + i) - first;
      if (offsets.dtype() == DType::kInt32)
        part.data<int32_t>()[i] = static_cast<int32_t>(v);
      else
        part.data<int64_t>()[i] = v;
    }
    it->second = part;
  }
  for (KjtParts &k : kjts) {
    const int64_t F = static_cast<int64_t>(k.info->keys.size());
    const int64_t *len = k.lengths.data<int64_t>();
    int64_t total = 0;
    for (int64_t i = 0; i < F * batch; ++i) {
      if (len[i] < 0)
        return invalidArgument("KJT input '" + k.info->name + "': lengths[" +
                               std::to_string(i) + "] is negative");
      total += len[i];
    }
    if (k.values.rank() != 1 || total != k.values.dim(0) ||
        (k.weights.defined() &&
         (k.weights.rank() != 1 || k.weights.dim(0) != total)))
      return invalidArgument("KJT input '" + k.info->name +
                             "': lengths sum to " + std::to_string(total) +
                             " but values/weights do not have that many "
                             "entries");
    const size_t ves = dtypeSize(k.values.dtype());
    const size_t wes = k.weights.defined() ? dtypeSize(k.weights.dtype()) : 0;
    int64_t count = 0;
    for (int64_t f = 0; f < F; ++f)
      for (int64_t b = begin; b < end; ++b)
        count += len[f * batch + b];
    EMBER_ASSIGN_OR_RETURN(
        Tensor lengths, Tensor::allocate(k.lengthsType, {F * (end - begin)}));
    EMBER_ASSIGN_OR_RETURN(Tensor values,
                           Tensor::allocate(k.values.dtype(), {count}));
    Tensor weights;
    if (k.weights.defined()) {
      EMBER_ASSIGN_OR_RETURN(weights,
                             Tensor::allocate(k.weights.dtype(), {count}));
    }
    int64_t pos = 0, out = 0, li = 0;
    for (int64_t f = 0; f < F; ++f)
      for (int64_t b = 0; b < batch; ++b) {
        int64_t n = len[f * batch + b];
        if (b >= begin && b < end) {
          if (k.lengthsType == DType::kInt32)
            lengths.data<int32_t>()[li++] = static_cast<int32_t>(n);
          else
            lengths.data<int64_t>()[li++] = n;
          if (n) {
            std::memcpy(static_cast<char *>(values.data()) + out * ves,
                        static_cast<const char *>(k.values.data()) + pos * ves,
                        n * ves);
            if (wes)
              std::memcpy(static_cast<char *>(weights.data()) + out * wes,
                          static_cast<const char *>(k.weights.data()) +
                              pos * wes,
                          n * wes);
          }
          out += n;
        }
        pos += n;
      }
    const std::string &name = k.info->name;
    arrays.erase(name + ".offsets");
    arrays[name + ".lengths"] = lengths;
    arrays[name + ".values"] = values;
    if (weights.defined())
      arrays[name + ".weights"] = weights;
  }
  return Status::ok();
}

} // namespace ember::tools
