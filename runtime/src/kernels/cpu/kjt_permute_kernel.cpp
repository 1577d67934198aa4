//===- kjt_permute_kernel.cpp - kjt_permute -------------------------------===//
//
// inputs: 0 values [N], 1 lengths [F*B], 2 optional weights [N]
// attrs:  permutation (P ints: output key i is input key permutation[i];
//         keys may repeat or be left out, as TorchRec's KJT.permute),
//         num_keys (F) or batch_size (B): one of them is required, since the
//         permutation alone does not say how many keys the input has
// outputs: values, lengths [P*B] (same dtypes), weights (undefined when
//          absent)
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/jagged_kernel_defs.h"
#include "kernels/kernel_context.h"
#include "kernels/shared/jagged_index.h"
#include "kernels/shared/kjt_kernel_attrs.h"
#include "kernels/shared/kjt_view.h"

#include <cstring>

namespace ember::jagged {

Result<PermuteAttrs> readPermuteAttrs(const Attributes &attrs) {
  PermuteAttrs a;
  EMBER_ASSIGN_OR_RETURN(a.permutation, attrs.getInts("permutation"));
  // Both optional without a default (kernels.def): one must be given.
  if (attrs.has("num_keys")) {
    EMBER_ASSIGN_OR_RETURN(a.numKeys, attrs.getInt("num_keys"));
  }
  if (attrs.has("batch_size")) {
    EMBER_ASSIGN_OR_RETURN(a.batchSize, attrs.getInt("batch_size"));
  }
  if (a.numKeys < 0 || a.batchSize < 0)
    return invalidArgument("attributes 'num_keys' and 'batch_size' must not be "
                           "negative");
  if (!attrs.has("num_keys") && !attrs.has("batch_size"))
    return invalidArgument(
        "kjt_permute needs the attribute 'num_keys' (keys of "
        "the input) or 'batch_size'");
  for (size_t i = 0; i < a.permutation.size(); ++i)
    if (a.permutation[i] < 0 ||
        (a.numKeys > 0 && a.permutation[i] >= a.numKeys))
      return invalidArgument("permutation[" + std::to_string(i) +
                             "] = " + std::to_string(a.permutation[i]) +
                             " is not a key of the input (num_keys " +
                             std::to_string(a.numKeys) + ")");
  return a;
}

namespace {

Status validate(const Attributes &attrs, int, int) {
  return readPermuteAttrs(attrs).status();
}

Status run(KernelContext &ctx) {
  const std::string where = ctx.location();
  auto attrsOr = readPermuteAttrs(ctx.attrs());
  if (!attrsOr.isOk())
    return attrsOr.status().withContext(where);
  const PermuteAttrs &a = *attrsOr;
  if (a.numKeys == 0 && a.batchSize == 0 && ctx.input(1).defined() &&
      ctx.input(1).numel() > 0)
    return errorAt(StatusCode::kInvalidArgument, where,
                   "num_keys/batch_size is 0 but the input has lengths");
  EMBER_ASSIGN_OR_RETURN(KjtView kjt,
                         readKjt(ctx, 0, a.numKeys, a.batchSize, "the KJT"));
  const int64_t B = kjt.batchSize,
                P = static_cast<int64_t>(a.permutation.size());
  int64_t total = 0;
  for (int64_t i = 0; i < P; ++i) {
    int64_t k = a.permutation[i];
    if (k >= kjt.numKeys)
      return errorAt(StatusCode::kInvalidArgument, where,
                     "permutation[" + std::to_string(i) +
                         "] = " + std::to_string(k) + " but the input has " +
                         std::to_string(kjt.numKeys) + " keys");
    total += kjt.keyBegin(k + 1) - kjt.keyBegin(k);
  }
  EMBER_ASSIGN_OR_RETURN(uint8_t * values,
                         allocateVector(ctx, 0, kjt.values.dtype(), total));
  EMBER_ASSIGN_OR_RETURN(uint8_t * lengths,
                         allocateVector(ctx, 1, kjt.lengths.dtype(), P * B));
  uint8_t *weights = nullptr;
  if (kjt.weighted()) {
    EMBER_ASSIGN_OR_RETURN(weights,
                           allocateVector(ctx, 2, kjt.weights.dtype(), total));
  } else if (ctx.numOutputs() > 2) {
    EMBER_RETURN_IF_ERROR(ctx.setOutput(2, Tensor()));
  }
  const size_t vb = kjt.valueBytes(), wb = kjt.weightBytes();
  const size_t lb = dtypeSize(kjt.lengths.dtype());
  int64_t pos = 0;
  for (int64_t i = 0; i < P; ++i) {
    int64_t k = a.permutation[i];
    int64_t begin = kjt.keyBegin(k), count = kjt.keyBegin(k + 1) - begin;
    copyBytes(lengths + i * B * lb, kjt.lengths.data<uint8_t>() + k * B * lb,
              B * lb);
    if (count == 0)
      continue;
    copyBytes(values + pos * vb, kjt.values.data<uint8_t>() + begin * vb,
              count * vb);
    if (weights)
      copyBytes(weights + pos * wb, kjt.weights.data<uint8_t>() + begin * wb,
                count * wb);
    pos += count;
  }
  return Status::ok();
}

} // namespace

KernelEntry kjtPermuteKernelEntry() {
  return {"kjt_permute", run, validate,
          "reorder (repeat, drop) the keys of a KJT"};
}

} // namespace ember::jagged
