//===- kjt_all_to_all_kernel.cpp - kjt_all_to_all -------------------------===//
//
// inputs:  0 lengths [K * B_me] (key-major, int32/int64), 1 values [N]
//          (int32/int64), 2 weights [N] float32 or absent (-1)
// attrs:   key_splits (one per group position, sum K): the first
//          key_splits[0] keys go to position 0, the next to position 1, ...
// outputs: 0 lengths [K_me * B_total], 1 values, 2 weights (only when the
//          input has weights), K_me = key_splits[my position]. For each of
//          my keys: the bags of source position 0 (B_0 of them), then
//          position 1, ...; dtypes kept.
//
// Step 1 exchanges (B, number of values, dtypes) with every position; then
// lengths, values and weights go in one exchange each, empty blocks skipped.
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/collective_common.h"
#include "comm/kernels/collective_kernel_defs.h"

#include <cstring>

namespace ember::collective {

namespace {

Result<std::vector<int64_t>> keySplits(const Attributes &attrs, int groupSize) {
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> s,
                         perMemberInts(attrs, "key_splits", groupSize));
  int64_t k = 0;
  for (int64_t v : s)
    k += v;
  if (s.empty() || k == 0)
    return invalidArgument("attribute 'key_splits' must give at least one key");
  return s;
}

Status validate(const Attributes &attrs, int, int) {
  return keySplits(attrs, -1).status();
}

Status validateGroup(const Attributes &attrs, int groupSize) {
  return keySplits(attrs, groupSize).status();
}

int64_t loadLength(const void *p, DType t, int64_t i) {
  return t == DType::kInt32 ? static_cast<const int32_t *>(p)[i]
                            : static_cast<const int64_t *>(p)[i];
}

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  const int g = group.size(), me = group.position;
  auto splitsOr = keySplits(ctx.attrs(), g);
  if (!splitsOr)
    return splitsOr.status().withContext(where);
  const std::vector<int64_t> &splits = *splitsOr;
  const std::vector<int64_t> keyOff = prefixSums(splits);
  const int64_t numKeys = keyOff[g];

  const Tensor &lengths = ctx.input(0), &values = ctx.input(1);
  static const Tensor kAbsent;
  const Tensor &weights = ctx.numInputs() > 2 ? ctx.input(2) : kAbsent;
  auto isIndex = [](const Tensor &t) {
    return t.defined() && t.rank() == 1 &&
           (t.dtype() == DType::kInt32 || t.dtype() == DType::kInt64);
  };
  if (!isIndex(lengths) || !isIndex(values))
    return invalidArgument(
        where + ": lengths and values must be int32/int64 of rank 1");
  // Weights travel when the input has them and the plan asks for them.
  const bool hasWeights = weights.defined() && ctx.numOutputs() == 3;
  if (hasWeights && (weights.dtype() != DType::kFloat32 ||
                     weights.rank() != 1 || weights.dim(0) != values.dim(0)))
    return invalidArgument(where + ": weights must be float32[" +
                           std::to_string(values.dim(0)) + "], not " +
                           weights.describe());
  if (ctx.numOutputs() == 3 && !weights.defined())
    return invalidArgument(where + ": the plan asks for output weights but "
                                   "the input has no weights");
  if (lengths.dim(0) % numKeys != 0)
    return invalidArgument(where + ": lengths has " +
                           std::to_string(lengths.dim(0)) +
                           " entries, not a multiple of the " +
                           std::to_string(numKeys) + " keys of key_splits");
  const int64_t bMe = lengths.dim(0) / numKeys;
  const DType lt = lengths.dtype(), vt = values.dtype();

  // Values per destination (key-major: each destination's keys are one
  // contiguous range of lengths and of values).
  std::vector<int64_t> valueOff(g + 1, 0);
  int64_t total = 0;
  for (int p = 0; p < g; ++p) {
    valueOff[p] = total;
    for (int64_t i = keyOff[p] * bMe; i < keyOff[p + 1] * bMe; ++i) {
      int64_t len = loadLength(lengths.data(), lt, i);
      if (len < 0)
        return invalidArgument(where + ": lengths[" + std::to_string(i) +
                               "] is negative (" + std::to_string(len) + ")");
      total += len;
    }
  }
  valueOff[g] = total;
  if (total != values.dim(0))
    return invalidArgument(where + ": lengths sum to " + std::to_string(total) +
                           " but there are " + std::to_string(values.dim(0)) +
                           " values");

  std::vector<int64_t> mine(5 * g);
  for (int p = 0; p < g; ++p) {
    mine[5 * p] = bMe;
    mine[5 * p + 1] = valueOff[p + 1] - valueOff[p];
    mine[5 * p + 2] = static_cast<int64_t>(lt);
    mine[5 * p + 3] = static_cast<int64_t>(vt);
    mine[5 * p + 4] = hasWeights;
  }
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> hdr,
      exchangeCounts(group.comm, group.ranks, me, mine, 5, where + " (sizes)"));
  std::vector<int64_t> batches(g), counts(g);
  for (int q = 0; q < g; ++q) {
    batches[q] = hdr[5 * q];
    counts[q] = hdr[5 * q + 1];
    if (hdr[5 * q + 2] != mine[2] || hdr[5 * q + 3] != mine[3] ||
        hdr[5 * q + 4] != mine[4])
      return invalidArgument(
          where + ": group position " + std::to_string(q) +
          " sends a KJT with other dtypes or weights than this rank's (" +
          std::string(dtypeName(lt)) + " lengths, " +
          std::string(dtypeName(vt)) + " values, " +
          (hasWeights ? "weights" : "no weights") + ")");
  }
  const std::vector<int64_t> batchOff = prefixSums(batches),
                             countOff = prefixSums(counts);
  const int64_t kMe = splits[me], bTotal = batchOff[g], nOut = countOff[g];
  const size_t les = dtypeSize(lt), ves = dtypeSize(vt);

  EMBER_ASSIGN_OR_RETURN(Tensor * outLengths,
                         ctx.allocateOutput(0, lt, {kMe * bTotal}));
  EMBER_ASSIGN_OR_RETURN(Tensor * outValues, ctx.allocateOutput(1, vt, {nOut}));
  Tensor *outWeights = nullptr;
  if (hasWeights) {
    EMBER_ASSIGN_OR_RETURN(outWeights,
                           ctx.allocateOutput(2, DType::kFloat32, {nOut}));
  }
  // Received blocks, in source order: lengths [K_me * B_q] key-major, values
  // and weights key-major within each source.
  EMBER_ASSIGN_OR_RETURN(char *rl, scratchBytes(ctx, kMe * bTotal * les));
  EMBER_ASSIGN_OR_RETURN(char *rv, scratchBytes(ctx, nOut * ves));
  char *rw = nullptr;
  if (hasWeights) {
    EMBER_ASSIGN_OR_RETURN(rw, scratchBytes(ctx, nOut * sizeof(float)));
  }

  std::vector<SendBuffer> sends(g);
  std::vector<RecvBuffer> recvs(g);
  auto sendRange = [&](const Tensor &t, int64_t begin, int64_t end) {
    size_t es = dtypeSize(t.dtype());
    return SendBuffer{static_cast<const char *>(t.data()) + begin * es,
                      static_cast<size_t>(end - begin) * es};
  };
  for (int q = 0; q < g; ++q) {
    sends[q] = sendRange(lengths, keyOff[q] * bMe, keyOff[q + 1] * bMe);
    recvs[q] = {rl + kMe * batchOff[q] * les,
                static_cast<size_t>(kMe * batches[q]) * les};
  }
  EMBER_RETURN_IF_ERROR(group.exchange(sends, recvs, " (lengths)"));
  for (int q = 0; q < g; ++q) {
    sends[q] = sendRange(values, valueOff[q], valueOff[q + 1]);
    recvs[q] = {rv + countOff[q] * ves, static_cast<size_t>(counts[q]) * ves};
  }
  EMBER_RETURN_IF_ERROR(group.exchange(sends, recvs, " (values)"));
  if (hasWeights) {
    for (int q = 0; q < g; ++q) {
      sends[q] = sendRange(weights, valueOff[q], valueOff[q + 1]);
      recvs[q] = {rw + countOff[q] * sizeof(float),
                  static_cast<size_t>(counts[q]) * sizeof(float)};
    }
    EMBER_RETURN_IF_ERROR(group.exchange(sends, recvs, " (weights)"));
  }

  // Reorder source-major blocks into key-major output.
  char *ol = static_cast<char *>(outLengths->data());
  char *ov = static_cast<char *>(outValues->data());
  char *ow = outWeights ? static_cast<char *>(outWeights->data()) : nullptr;
  int64_t outValue = 0;
  std::vector<int64_t> cursor(countOff.begin(), countOff.end() - 1);
  for (int64_t f = 0; f < kMe; ++f) {
    for (int q = 0; q < g; ++q) {
      const char *src = rl + (kMe * batchOff[q] + f * batches[q]) * les;
      std::memcpy(ol + (f * bTotal + batchOff[q]) * les, src,
                  static_cast<size_t>(batches[q]) * les);
      int64_t n = 0;
      for (int64_t b = 0; b < batches[q]; ++b)
        n += loadLength(src, lt, b);
      if (n < 0 || cursor[q] + n > countOff[q + 1])
        return invalidArgument(where + ": group position " + std::to_string(q) +
                               " sent lengths that do not match its values");
      if (n) {
        std::memcpy(ov + outValue * ves, rv + cursor[q] * ves,
                    static_cast<size_t>(n) * ves);
        if (ow)
          std::memcpy(ow + outValue * sizeof(float),
                      rw + cursor[q] * sizeof(float),
                      static_cast<size_t>(n) * sizeof(float));
      }
      cursor[q] += n;
      outValue += n;
    }
  }
  return Status::ok();
}

} // namespace

KernelDef kjtAllToAllKernel() {
  KernelDef d;
  d.name = "kjt_all_to_all";
  d.run = run;
  d.validate = validate;
  d.validateGroup = validateGroup;
  d.collectiveKind = static_cast<int>(CollectiveInfo::Kind::kKjtAllToAll);
  d.minInputs = 2;
  d.maxInputs = 3;
  d.minOutputs = 2;
  d.maxOutputs = 3;
  d.summary = "KJT (lengths, values, weights) keys -> their ranks (input dist)";
  return d;
}

} // namespace ember::collective
