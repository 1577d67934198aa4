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
// lengths, values and weights go in one exchange of a step each, posted
// together (one round trip on Gloo), empty blocks skipped.
//
//===----------------------------------------------------------------------===//
#include "comm/kernels/collective_common.h"
#include "comm/kernels/collective_kernel_defs.h"
#include "comm/kernels/kjt_all_to_all_layout.h"

#include <cstring>

namespace ember::collective {

namespace {

Status run(KernelContext &ctx) {
  Group group = groupOf(ctx);
  const std::string &where = group.what;
  const int g = group.size();
  EMBER_ASSIGN_OR_RETURN(KjtAllToAllInput in,
                         checkKjtAllToAllInput(ctx, group));
  const std::vector<int64_t> &keyOff = in.keyOff;
  const Tensor &lengths = ctx.input(0), &values = ctx.input(1);
  static const Tensor kAbsent;
  const Tensor &weights = ctx.numInputs() > 2 ? ctx.input(2) : kAbsent;
  const int64_t bMe = in.localBatch;
  const DType lt = in.lengthsType, vt = in.valuesType;

  // Values per destination (key-major: each destination's keys are one
  // contiguous range of lengths and of values).
  std::vector<int64_t> valueOff(g + 1, 0);
  int64_t total = 0;
  for (int p = 0; p < g; ++p) {
    valueOff[p] = total;
    for (int64_t i = keyOff[p] * bMe; i < keyOff[p + 1] * bMe; ++i) {
      int64_t len = loadLength(lengths.data(), lt, i);
      if (len < 0)
        return negativeLength(where, i, len);
      total += len;
    }
  }
  valueOff[g] = total;
  EMBER_RETURN_IF_ERROR(checkLengthsMatchValues(where, total, values));

  EMBER_ASSIGN_OR_RETURN(KjtAllToAllLayout layout,
                         exchangeKjtSizes(group, in, valueOff));
  const std::vector<int64_t> &batches = layout.batches,
                             &batchOff = layout.batchOff,
                             &countOff = layout.countOff;
  const int64_t kMe = layout.localKeys, bTotal = layout.totalBatch;
  const size_t les = dtypeSize(lt), ves = dtypeSize(vt);

  // Received blocks, in source order: lengths [K_me * B_q] key-major, values
  // and weights key-major within each source.
  EMBER_ASSIGN_OR_RETURN(KjtAllToAllBuffers buf,
                         allocateKjtAllToAllBuffers(ctx, in, layout));
  char *rl = buf.rl, *rv = buf.rv, *rw = buf.rw;
  EMBER_RETURN_IF_ERROR(exchangeKjtBlocks(
      [&](const std::vector<Communicator::Step> &steps) {
        return group.exchangeSteps(steps);
      },
      g, in, layout, valueOff, lengths, values, weights, rl, rv, rw));

  // Reorder source-major blocks into key-major output.
  char *ol = static_cast<char *>(buf.outLengths->data());
  char *ov = static_cast<char *>(buf.outValues->data());
  char *ow =
      buf.outWeights ? static_cast<char *>(buf.outWeights->data()) : nullptr;
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
  d.validate = validateKeySplits;
  d.validateGroup = validateKeySplitsForGroup;
  d.summary = "KJT (lengths, values, weights) keys -> their ranks (input dist)";
  return d;
}

} // namespace ember::collective
