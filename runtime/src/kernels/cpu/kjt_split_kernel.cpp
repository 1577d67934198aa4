//===- kjt_split_kernel.cpp - kjt_split -----------------------------------===//
//
// inputs: 0 values [N], 1 lengths [F*B], 2 optional weights [N]
// attrs:  key_counts (S ints >= 0, summing to F)
// outputs: 3*S: (values, lengths, weights) of each part, in order; a part's
//          weights are undefined when the input has none.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/jagged_kernel_defs.h"
#include "kernels/kernel_context.h"
#include "kernels/shared/jagged_index.h"
#include "kernels/shared/kjt_kernel_attrs.h"
#include "kernels/shared/kjt_view.h"

#include <cstring>

namespace ember::jagged {

Result<std::vector<int64_t>> readSplitKeyCounts(const Attributes &attrs,
                                                int numOutputs) {
  EMBER_ASSIGN_OR_RETURN(auto counts, attrs.getInts("key_counts"));
  if (counts.empty())
    return invalidArgument("attribute 'key_counts' is empty");
  int64_t total = 0;
  for (size_t s = 0; s < counts.size(); ++s) {
    if (counts[s] < 0)
      return invalidArgument("key_counts[" + std::to_string(s) +
                             "] is negative");
    total += counts[s];
  }
  if (total == 0)
    return invalidArgument("attribute 'key_counts' sums to 0 keys");
  if (numOutputs != 3 * static_cast<int>(counts.size()))
    return invalidArgument("kjt_split into " + std::to_string(counts.size()) +
                           " parts has " + std::to_string(numOutputs) +
                           " outputs, expected " +
                           std::to_string(3 * counts.size()));
  return counts;
}

namespace {

Status validate(const Attributes &attrs, int, int numOutputs) {
  return readSplitKeyCounts(attrs, numOutputs).status();
}

Status run(KernelContext &ctx) {
  const std::string where = ctx.location();
  auto countsOr = readSplitKeyCounts(ctx.attrs(), ctx.numOutputs());
  if (!countsOr.isOk())
    return countsOr.status().withContext(where);
  const std::vector<int64_t> &counts = *countsOr;
  int64_t F = 0;
  for (int64_t c : counts)
    F += c;
  EMBER_ASSIGN_OR_RETURN(KjtView kjt, readKjt(ctx, 0, F, 0, "the KJT"));
  const int64_t B = kjt.batchSize;
  const size_t vb = kjt.valueBytes(), wb = kjt.weightBytes();
  const size_t lb = dtypeSize(kjt.lengths.dtype());
  int64_t firstKey = 0;
  for (size_t s = 0; s < counts.size(); ++s) {
    const int out = 3 * static_cast<int>(s);
    int64_t begin = kjt.keyBegin(firstKey);
    int64_t count = kjt.keyBegin(firstKey + counts[s]) - begin;
    EMBER_ASSIGN_OR_RETURN(uint8_t * values,
                           allocateVector(ctx, out, kjt.values.dtype(), count));
    EMBER_ASSIGN_OR_RETURN(
        uint8_t * lengths,
        allocateVector(ctx, out + 1, kjt.lengths.dtype(), counts[s] * B));
    copyBytes(values, kjt.values.data<uint8_t>() + begin * vb, count * vb);
    copyBytes(lengths, kjt.lengths.data<uint8_t>() + firstKey * B * lb,
              counts[s] * B * lb);
    if (kjt.weighted()) {
      EMBER_ASSIGN_OR_RETURN(
          uint8_t * weights,
          allocateVector(ctx, out + 2, kjt.weights.dtype(), count));
      copyBytes(weights, kjt.weights.data<uint8_t>() + begin * wb, count * wb);
    } else {
      EMBER_RETURN_IF_ERROR(ctx.setOutput(out + 2, Tensor()));
    }
    firstKey += counts[s];
  }
  return Status::ok();
}

} // namespace

KernelEntry kjtSplitKernelEntry() {
  return {"kjt_split", run, validate,
          "split a KJT into parts of consecutive keys"};
}

} // namespace ember::jagged
