//===- kjt_all_to_all_kernel.cpp - kjt_all_to_all on CUDA -----------------===//
//
// As comm/kernels/kjt_all_to_all_kernel.cpp, with the data on the device:
// 1. a kernel sums the lengths per destination (and finds a negative one);
//    the g sums come back through the pinned host staging with the
//    kernel's one synchronization (the output sizes depend on them);
// 2. (B, number of values, dtypes, weights) are exchanged on the host;
// 3. lengths, values and weights go in one NCCL all-to-all-v each (device
//    copies for a group of one) into source-major staging buffers;
// 4. the lengths are permuted into the key-major output, two scans give
//    each bag's offsets, and one warp per bag copies its values/weights.
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/collective_kernel_defs.h"
#include "cuda/collectives/collective_launch.h"
#include "cuda/collectives/cuda_collective_defs.h"
#include "cuda/collectives/device_collective.h"
#include "cuda/cuda_status.h"

#include <cstring>

namespace ember::cuda::collectives {

using namespace ember::collective;

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

/// Step 1: the values each destination gets (valueOff, g + 1 prefix sums),
/// checked as the CPU kernel checks them.
Status countValues(KernelContext &ctx, KernelEnv &env, const Group &group,
                   const Tensor &lengths, const Tensor &values, int64_t bMe,
                   const std::vector<int64_t> &keyOff,
                   std::vector<int64_t> &valueOff) {
  const std::string &where = group.what;
  const int g = group.size();
  const bool is64 = lengths.dtype() == DType::kInt64;
  std::vector<int64_t> lenOff(g + 1);
  for (int p = 0; p <= g; ++p)
    lenOff[p] = keyOff[p] * bMe;
  const size_t resultBytes = static_cast<size_t>(g + 1) * sizeof(uint64_t);
  if (!env.hostStaging || env.hostStagingBytes < resultBytes)
    return internalError(where + ": the host staging buffer is too small for " +
                         std::to_string(g + 1) + " counts");
  EMBER_ASSIGN_OR_RETURN(char *resultBytesPtr, scratchBytes(ctx, resultBytes));
  auto *sums = reinterpret_cast<unsigned long long *>(resultBytesPtr);
  EMBER_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(sums, 0, g * sizeof(uint64_t), env.stream));
  EMBER_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(sums + g, 0xff, sizeof(uint64_t), env.stream));
  EMBER_ASSIGN_OR_RETURN(int64_t * lenOffDevice, uploadInts(ctx, lenOff));
  EMBER_RETURN_IF_ERROR(launchKjtCount(env, lengths.data(), is64,
                                       lengths.dim(0), lenOffDevice, g, sums,
                                       sums + g));
  EMBER_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
      env.hostStaging, sums, resultBytes, cudaMemcpyDeviceToHost, env.stream));
  EMBER_RETURN_IF_ERROR(synchronizeStream(ctx, where + " (lengths)"));
  std::vector<uint64_t> host(g + 1);
  std::memcpy(host.data(), env.hostStaging, resultBytes);
  if (host[g] != ~uint64_t{0}) {
    // Error path only: one more read for the message.
    const int64_t i = static_cast<int64_t>(host[g]);
    int64_t len = 0;
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(&len,
                   static_cast<const char *>(lengths.data()) +
                       i * dtypeSize(lengths.dtype()),
                   dtypeSize(lengths.dtype()), cudaMemcpyDeviceToHost));
    if (!is64)
      len = static_cast<int32_t>(len & 0xffffffff);
    return invalidArgument(where + ": lengths[" + std::to_string(i) +
                           "] is negative (" + std::to_string(len) + ")");
  }
  valueOff.assign(g + 1, 0);
  for (int p = 0; p < g; ++p)
    valueOff[p + 1] = valueOff[p] + static_cast<int64_t>(host[p]);
  if (valueOff[g] != values.dim(0))
    return invalidArgument(where + ": lengths sum to " +
                           std::to_string(valueOff[g]) + " but there are " +
                           std::to_string(values.dim(0)) + " values");
  return Status::ok();
}

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, where));
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

  std::vector<int64_t> valueOff;
  EMBER_RETURN_IF_ERROR(
      countValues(ctx, *env, group, lengths, values, bMe, keyOff, valueOff));

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
  const int64_t bags = kMe * bTotal;
  const size_t les = dtypeSize(lt), ves = dtypeSize(vt);

  EMBER_ASSIGN_OR_RETURN(Tensor * outLengths,
                         ctx.allocateOutput(0, lt, {bags}));
  EMBER_ASSIGN_OR_RETURN(Tensor * outValues, ctx.allocateOutput(1, vt, {nOut}));
  Tensor *outWeights = nullptr;
  if (hasWeights) {
    EMBER_ASSIGN_OR_RETURN(outWeights,
                           ctx.allocateOutput(2, DType::kFloat32, {nOut}));
  }
  EMBER_ASSIGN_OR_RETURN(char *rl, scratchBytes(ctx, bags * les));
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
  EMBER_RETURN_IF_ERROR(deviceExchange(ctx, group, sends, recvs, " (lengths)"));
  for (int q = 0; q < g; ++q) {
    sends[q] = sendRange(values, valueOff[q], valueOff[q + 1]);
    recvs[q] = {rv + countOff[q] * ves, static_cast<size_t>(counts[q]) * ves};
  }
  EMBER_RETURN_IF_ERROR(deviceExchange(ctx, group, sends, recvs, " (values)"));
  if (hasWeights) {
    for (int q = 0; q < g; ++q) {
      sends[q] = sendRange(weights, valueOff[q], valueOff[q + 1]);
      recvs[q] = {rw + countOff[q] * sizeof(float),
                  static_cast<size_t>(counts[q]) * sizeof(float)};
    }
    EMBER_RETURN_IF_ERROR(
        deviceExchange(ctx, group, sends, recvs, " (weights)"));
  }
  if (bags == 0)
    return Status::ok();

  // Source-major blocks -> key-major output.
  EMBER_ASSIGN_OR_RETURN(int64_t * batchOffDevice, uploadInts(ctx, batchOff));
  const size_t bagBytes = static_cast<size_t>(bags) * sizeof(int64_t);
  EMBER_ASSIGN_OR_RETURN(char *offsets, scratchBytes(ctx, 4 * bagBytes));
  int64_t *outLen64 = reinterpret_cast<int64_t *>(offsets);
  int64_t *inLen64 = outLen64 + bags;
  int64_t *outOff = inLen64 + bags;
  int64_t *inOff = outOff + bags;
  EMBER_RETURN_IF_ERROR(launchKjtPermuteLengths(
      *env, rl, outLengths->data(), lt == DType::kInt64, outLen64, inLen64, kMe,
      bTotal, batchOffDevice, g));
  if (nOut == 0)
    return Status::ok();
  EMBER_ASSIGN_OR_RETURN(size_t scanBytes, exclusiveScanScratchBytes(bags));
  EMBER_ASSIGN_OR_RETURN(char *scanTemp, scratchBytes(ctx, scanBytes));
  EMBER_RETURN_IF_ERROR(
      launchExclusiveScan(*env, scanTemp, scanBytes, outLen64, outOff, bags));
  EMBER_RETURN_IF_ERROR(
      launchExclusiveScan(*env, scanTemp, scanBytes, inLen64, inOff, bags));
  return launchKjtCopyValues(
      *env, outLen64, outOff, inOff, kMe, bTotal, batchOffDevice, g, rv,
      outValues->data(), static_cast<int>(ves),
      reinterpret_cast<const float *>(rw),
      outWeights ? outWeights->data<float>() : nullptr, nOut);
}

} // namespace

KernelDef kjtAllToAllKernel() {
  KernelDef d = collective::kjtAllToAllKernel();
  d.run = run;
  return d;
}

} // namespace ember::cuda::collectives
