//===- kjt_concat_kernel.cpp - kjt_concat ---------------------------------===//
//
// inputs: K KJTs as consecutive triples (values, lengths, weights-or-absent)
// attrs:  num_inputs (K), and batch_size (B) or key_counts (K ints: the keys
//         of each KJT); all KJTs must have the same batch size
// outputs: values, lengths (keys of KJT 0, then KJT 1, ...), weights
//          (undefined when no KJT has weights). Mixing weighted and
//          unweighted KJTs is an error; dtypes must agree.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/jagged_kernel_defs.h"
#include "kernels/kernel_context.h"
#include "kernels/shared/jagged_index.h"
#include "kernels/shared/kjt_kernel_attrs.h"
#include "kernels/shared/kjt_view.h"

namespace ember::jagged {

Result<ConcatAttrs> readConcatAttrs(const Attributes &attrs, int numInputs) {
  ConcatAttrs a;
  EMBER_ASSIGN_OR_RETURN(a.numInputs, attrs.getInt("num_inputs"));
  if (a.numInputs < 1)
    return invalidArgument("attribute 'num_inputs' must be >= 1");
  if (numInputs != 3 * a.numInputs)
    return invalidArgument("kjt_concat of " + std::to_string(a.numInputs) +
                           " KJTs has " + std::to_string(numInputs) +
                           " inputs, expected " +
                           std::to_string(3 * a.numInputs) +
                           " (values, lengths, weights-or-absent each)");
  if (attrs.has("batch_size")) {
    EMBER_ASSIGN_OR_RETURN(a.batchSize, attrs.getInt("batch_size"));
    if (a.batchSize < 0)
      return invalidArgument("attribute 'batch_size' must be >= 0");
  }
  if (attrs.has("key_counts")) {
    EMBER_ASSIGN_OR_RETURN(a.keyCounts, attrs.getInts("key_counts"));
    if (static_cast<int64_t>(a.keyCounts.size()) != a.numInputs)
      return invalidArgument("attribute 'key_counts' has " +
                             std::to_string(a.keyCounts.size()) +
                             " entries, expected one per input KJT (" +
                             std::to_string(a.numInputs) + ")");
    for (size_t k = 0; k < a.keyCounts.size(); ++k)
      if (a.keyCounts[k] < 0)
        return invalidArgument("key_counts[" + std::to_string(k) +
                               "] is negative");
  }
  if (a.batchSize < 0 && a.keyCounts.empty())
    return invalidArgument("kjt_concat needs the attribute 'batch_size' or "
                           "'key_counts'");
  return a;
}

Result<std::vector<KjtView>> readConcatInputs(const KernelContext &ctx,
                                              const ConcatAttrs &a,
                                              const KjtReader &reader) {
  const std::string where = ctx.location();
  std::vector<KjtView> kjts;
  int64_t B = -1;
  for (int64_t k = 0; k < a.numInputs; ++k) {
    std::string what = "KJT " + std::to_string(k);
    // A KJT with 0 keys (key_counts) has no lengths and takes any batch size.
    int64_t keys = a.keyCounts.empty() ? 0 : a.keyCounts[k];
    int64_t batch = a.batchSize >= 0 ? a.batchSize : 0;
    if (!a.keyCounts.empty() && keys == 0 && ctx.input(3 * k + 1).defined() &&
        ctx.input(3 * k + 1).numel() != 0)
      return errorAt(StatusCode::kInvalidArgument, where,
                     what + " has 0 keys (key_counts) but has lengths");
    EMBER_ASSIGN_OR_RETURN(KjtView kjt, reader(ctx, 3 * k, keys > 0 ? keys : 0,
                                               keys > 0 ? 0 : batch, what));
    if (keys > 0 || a.keyCounts.empty()) {
      if (B < 0)
        B = kjt.batchSize;
      else if (kjt.batchSize != B)
        return errorAt(StatusCode::kInvalidArgument, where,
                       what + " has batch size " +
                           std::to_string(kjt.batchSize) + " but KJT 0 has " +
                           std::to_string(B));
    }
    if (!kjts.empty()) {
      const KjtView &first = kjts.front();
      if (kjt.weighted() != first.weighted())
        return errorAt(StatusCode::kInvalidArgument, where,
                       what + (kjt.weighted() ? " has" : " has no") +
                           " weights but KJT 0 " +
                           (first.weighted() ? "has" : "has none") +
                           ": cannot concatenate weighted and unweighted KJTs");
      if (kjt.values.dtype() != first.values.dtype() ||
          kjt.lengths.dtype() != first.lengths.dtype() ||
          (kjt.weighted() && kjt.weights.dtype() != first.weights.dtype()))
        return errorAt(StatusCode::kInvalidArgument, where,
                       what + "'s dtypes (" + kjt.values.describe() + ", " +
                           kjt.lengths.describe() + ") differ from KJT 0's (" +
                           first.values.describe() + ", " +
                           first.lengths.describe() + ")");
    }
    kjts.push_back(std::move(kjt));
  }
  return kjts;
}

namespace {

Status validate(const Attributes &attrs, int numInputs, int) {
  return readConcatAttrs(attrs, numInputs).status();
}

Status run(KernelContext &ctx) {
  const std::string where = ctx.location();
  auto attrsOr = readConcatAttrs(ctx.attrs(), ctx.numInputs());
  if (!attrsOr.isOk())
    return attrsOr.status().withContext(where);
  EMBER_ASSIGN_OR_RETURN(std::vector<KjtView> kjts,
                         readConcatInputs(ctx, *attrsOr, readKjt));
  int64_t totalValues = 0, totalLengths = 0;
  for (const KjtView &kjt : kjts) {
    totalValues += kjt.values.numel();
    totalLengths += kjt.lengths.numel();
  }
  const KjtView &first = kjts.front();
  EMBER_ASSIGN_OR_RETURN(
      uint8_t * values,
      allocateVector(ctx, 0, first.values.dtype(), totalValues));
  EMBER_ASSIGN_OR_RETURN(
      uint8_t * lengths,
      allocateVector(ctx, 1, first.lengths.dtype(), totalLengths));
  uint8_t *weights = nullptr;
  if (first.weighted()) {
    EMBER_ASSIGN_OR_RETURN(
        weights, allocateVector(ctx, 2, first.weights.dtype(), totalValues));
  } else if (ctx.numOutputs() > 2) {
    EMBER_RETURN_IF_ERROR(ctx.setOutput(2, Tensor()));
  }
  for (const KjtView &kjt : kjts) {
    copyBytes(values, kjt.values.data(), kjt.values.nbytes());
    values += kjt.values.nbytes();
    copyBytes(lengths, kjt.lengths.data(), kjt.lengths.nbytes());
    lengths += kjt.lengths.nbytes();
    if (weights) {
      copyBytes(weights, kjt.weights.data(), kjt.weights.nbytes());
      weights += kjt.weights.nbytes();
    }
  }
  return Status::ok();
}

} // namespace

KernelEntry kjtConcatKernelEntry() {
  return {"kjt_concat", run, validate,
          "concatenate the keys of KJTs of the same batch size"};
}

} // namespace ember::jagged
