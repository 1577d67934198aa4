//===- kjt_view.cpp - A keyed jagged tensor's inputs, checked -------------===//
#include "kernels/shared/kjt_view.h"

#include "kernels/kernel_context.h"
#include "kernels/shared/jagged_index.h"

namespace ember::jagged {

Result<KjtView> checkKjt(const KernelContext &ctx, int first, int64_t numKeys,
                         int64_t batchSize, const std::string &what) {
  const std::string where = ctx.location();
  KjtView kjt;
  kjt.values = ctx.input(first);
  kjt.lengths = ctx.input(first + 1);
  if (first + 2 < ctx.numInputs())
    kjt.weights = ctx.input(first + 2);
  std::string in = "input " + std::to_string(first);
  if (!kjt.values.defined() || kjt.values.rank() != 1)
    return errorAt(StatusCode::kInvalidArgument, where,
                   what + " values (" + in + ") must be 1-D, got " +
                       (kjt.values.defined() ? kjt.values.describe()
                                             : std::string("none")));
  EMBER_RETURN_IF_ERROR(checkIndexVector(
      kjt.lengths, what + " lengths (input " + std::to_string(first + 1) + ")",
      where));
  const int64_t n = kjt.values.numel(), numLengths = kjt.lengths.numel();
  if (kjt.weighted() && (kjt.weights.rank() != 1 || kjt.weights.numel() != n))
    return errorAt(StatusCode::kInvalidArgument, where,
                   what + " weights (input " + std::to_string(first + 2) +
                       ") must be 1-D with one entry per value (" +
                       std::to_string(n) + "), got " + kjt.weights.describe());
  if (numKeys > 0) {
    if (numLengths % numKeys != 0)
      return errorAt(StatusCode::kInvalidArgument, where,
                     what + " has " + std::to_string(numLengths) +
                         " lengths, not a multiple of its " +
                         std::to_string(numKeys) + " keys");
    kjt.numKeys = numKeys;
    kjt.batchSize = numLengths / numKeys;
  } else if (batchSize > 0) {
    if (numLengths % batchSize != 0)
      return errorAt(StatusCode::kInvalidArgument, where,
                     what + " has " + std::to_string(numLengths) +
                         " lengths, not a multiple of the batch size " +
                         std::to_string(batchSize));
    kjt.batchSize = batchSize;
    kjt.numKeys = numLengths / batchSize;
  } else if (numLengths != 0) {
    return errorAt(StatusCode::kInvalidArgument, where,
                   what + ": the batch size is 0 but there are " +
                       std::to_string(numLengths) + " lengths");
  }
  return kjt;
}

Result<KjtView> readKjt(const KernelContext &ctx, int first, int64_t numKeys,
                        int64_t batchSize, const std::string &what) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(KjtView kjt,
                         checkKjt(ctx, first, numKeys, batchSize, what));
  const int64_t n = kjt.values.numel(), numLengths = kjt.lengths.numel();
  kjt.offsets.resize(numLengths + 1);
  EMBER_RETURN_IF_ERROR(lengthsToOffsets(kjt.lengths, kjt.offsets.data(),
                                         what + " lengths", where));
  if (kjt.offsets.back() != n)
    return errorAt(StatusCode::kInvalidArgument, where,
                   what + " lengths sum to " +
                       std::to_string(kjt.offsets.back()) + " but there are " +
                       std::to_string(n) + " values");
  return kjt;
}

Result<uint8_t *> allocateVector(KernelContext &ctx, int index, DType dtype,
                                 int64_t numel) {
  EMBER_ASSIGN_OR_RETURN(Tensor * t, ctx.allocateOutput(index, dtype, {numel}));
  return t->data<uint8_t>();
}

} // namespace ember::jagged
