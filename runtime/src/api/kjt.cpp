//===- kjt.cpp - Keyed jagged tensors -------------------------------------===//
#include "ember/kjt.h"

namespace ember {

namespace {
Status checkIndexTensor(const Tensor &t, const char *what) {
  if (!t.defined())
    return invalidArgument(std::string("KeyedJaggedTensor: ") + what +
                           " are missing");
  if (t.rank() != 1)
    return invalidArgument(std::string("KeyedJaggedTensor: ") + what +
                           " must be rank 1, not " + t.describe());
  if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)
    return invalidArgument(std::string("KeyedJaggedTensor: ") + what +
                           " must be int32 or int64, not " + t.describe());
  return Status::ok();
}

Status checkCommon(const std::vector<std::string> &keys, const Tensor &values,
                   const Tensor &weights) {
  if (keys.empty())
    return invalidArgument("KeyedJaggedTensor: no keys");
  EMBER_RETURN_IF_ERROR(checkIndexTensor(values, "values"));
  if (weights.defined() &&
      (weights.dtype() != DType::kFloat32 || weights.rank() != 1 ||
       weights.numel() != values.numel()))
    return invalidArgument("KeyedJaggedTensor: weights must be float32[" +
                           std::to_string(values.numel()) + "], not " +
                           weights.describe());
  return Status::ok();
}
} // namespace

Result<KeyedJaggedTensor>
KeyedJaggedTensor::fromLengths(std::vector<std::string> keys, Tensor values,
                               Tensor lengths, Tensor weights) {
  EMBER_RETURN_IF_ERROR(checkCommon(keys, values, weights));
  EMBER_RETURN_IF_ERROR(checkIndexTensor(lengths, "lengths"));
  if (lengths.numel() % static_cast<int64_t>(keys.size()) != 0)
    return invalidArgument(
        "KeyedJaggedTensor: " + std::to_string(lengths.numel()) +
        " lengths are not a multiple of the " + std::to_string(keys.size()) +
        " keys");
  KeyedJaggedTensor kjt;
  kjt.keys_ = std::make_shared<const std::vector<std::string>>(std::move(keys));
  kjt.values_ = std::move(values);
  kjt.lengths_ = std::move(lengths);
  kjt.weights_ = std::move(weights);
  return kjt;
}

Result<KeyedJaggedTensor>
KeyedJaggedTensor::fromOffsets(std::vector<std::string> keys, Tensor values,
                               Tensor offsets, Tensor weights) {
  EMBER_RETURN_IF_ERROR(checkCommon(keys, values, weights));
  EMBER_RETURN_IF_ERROR(checkIndexTensor(offsets, "offsets"));
  if (offsets.numel() < 1 ||
      (offsets.numel() - 1) % static_cast<int64_t>(keys.size()) != 0)
    return invalidArgument(
        "KeyedJaggedTensor: " + std::to_string(offsets.numel()) +
        " offsets are not 1 + a multiple of the " +
        std::to_string(keys.size()) + " keys");
  KeyedJaggedTensor kjt;
  kjt.keys_ = std::make_shared<const std::vector<std::string>>(std::move(keys));
  kjt.values_ = std::move(values);
  kjt.offsets_ = std::move(offsets);
  kjt.weights_ = std::move(weights);
  return kjt;
}

const std::vector<std::string> &KeyedJaggedTensor::keys() const {
  static const std::vector<std::string> none;
  return keys_ ? *keys_ : none;
}

int64_t KeyedJaggedTensor::batchSize() const {
  if (!keys_ || keys_->empty())
    return 0;
  int64_t n = lengths_.defined() ? lengths_.numel() : offsets_.numel() - 1;
  return n / static_cast<int64_t>(keys_->size());
}

} // namespace ember
