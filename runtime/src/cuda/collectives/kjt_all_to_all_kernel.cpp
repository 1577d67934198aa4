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
#include "comm/kernels/kjt_all_to_all_layout.h"
#include "cuda/collectives/collective_launch.h"
#include "cuda/collectives/cuda_collective_defs.h"
#include "cuda/collectives/device_collective.h"

namespace ember::cuda::collectives {

using namespace ember::collective;

namespace {

/// Step 1: the values each destination gets (valueOff, g + 1 prefix sums),
/// checked as the CPU kernel checks them.
Status countValues(KernelContext &ctx, KernelEnv &env, const Group &group,
                   const Tensor &lengths, const Tensor &values, int64_t bMe,
                   const std::vector<int64_t> &keyOff,
                   std::vector<int64_t> &valueOff) {
  const int g = group.size();
  std::vector<int64_t> lenOff(g + 1);
  for (int p = 0; p <= g; ++p)
    lenOff[p] = keyOff[p] * bMe;
  EMBER_ASSIGN_OR_RETURN(std::vector<uint64_t> sums,
                         sumLengthsOnDevice(ctx, env, group, lengths, lenOff));
  valueOff.assign(g + 1, 0);
  for (int p = 0; p < g; ++p)
    valueOff[p + 1] = valueOff[p] + static_cast<int64_t>(sums[p]);
  return checkLengthsMatchValues(group.what, valueOff[g], values);
}

} // namespace

Status runKjtAllToAll(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, where));
  const int g = group.size();
  EMBER_ASSIGN_OR_RETURN(KjtAllToAllInput in,
                         checkKjtAllToAllInput(ctx, group));
  const Tensor &lengths = ctx.input(0), &values = ctx.input(1);
  static const Tensor kAbsent;
  const Tensor &weights = ctx.numInputs() > 2 ? ctx.input(2) : kAbsent;
  const int64_t bMe = in.localBatch;
  const DType lt = in.lengthsType, vt = in.valuesType;

  std::vector<int64_t> valueOff;
  EMBER_RETURN_IF_ERROR(
      countValues(ctx, *env, group, lengths, values, bMe, in.keyOff, valueOff));

  EMBER_ASSIGN_OR_RETURN(KjtAllToAllLayout layout,
                         exchangeKjtSizes(group, in, valueOff));
  const std::vector<int64_t> &batchOff = layout.batchOff;
  const int64_t kMe = layout.localKeys, bTotal = layout.totalBatch,
                nOut = layout.numValuesOut;
  const int64_t bags = kMe * bTotal;
  const size_t ves = dtypeSize(vt);

  EMBER_ASSIGN_OR_RETURN(KjtAllToAllBuffers buf,
                         allocateKjtAllToAllBuffers(ctx, in, layout));
  char *rl = buf.rl, *rv = buf.rv, *rw = buf.rw;
  EMBER_RETURN_IF_ERROR(exchangeKjtBlocks(
      [&](const std::vector<Communicator::Step> &steps) {
        // One all-to-all-v per step (NCCL has no announcement to save).
        for (const Communicator::Step &s : steps)
          EMBER_RETURN_IF_ERROR(
              deviceExchange(ctx, group, s.sends, s.recvs, s.step));
        return Status::ok();
      },
      g, in, layout, valueOff, lengths, values, weights, rl, rv, rw));
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
      *env, rl, buf.outLengths->data(), lt == DType::kInt64, outLen64, inLen64,
      kMe, bTotal, batchOffDevice, g));
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
      buf.outValues->data(), static_cast<int>(ves),
      reinterpret_cast<const float *>(rw),
      buf.outWeights ? buf.outWeights->data<float>() : nullptr, nOut);
}

} // namespace ember::cuda::collectives
