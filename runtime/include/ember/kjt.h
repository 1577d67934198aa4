//===- kjt.h - Keyed jagged tensors -----------------------------*- C++ -*-===//
//
// A KeyedJaggedTensor (TorchRec's KJT) holds the sparse features of a batch:
// for F keys and a batch of B samples, `values` are the ids of all bags laid
// out key-major (all bags of key 0, then key 1, ...), `lengths[f * B + b]` is
// the number of ids of sample b for key f (or, equivalently, `offsets` of
// F * B + 1 entries with offsets[0] == 0), and optional `weights` hold one
// float32 per value.
//
// Tensors are handles: building a KJT over Tensor::view()s of user buffers
// copies no data.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KJT_H
#define EMBER_KJT_H

#include "ember/status.h"
#include "ember/tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace ember {

class KeyedJaggedTensor {
public:
  KeyedJaggedTensor() = default;

  /// values: int32|int64 [N]; lengths: int32|int64 [F * B]; weights (optional,
  /// undefined Tensor for none): float32 [N]. Checks ranks, dtypes and that
  /// the lengths count is a multiple of the number of keys; the run checks
  /// the lengths' sum against N.
  static Result<KeyedJaggedTensor> fromLengths(std::vector<std::string> keys,
                                               Tensor values, Tensor lengths,
                                               Tensor weights = Tensor());
  /// offsets: int32|int64 [F * B + 1], offsets[0] == 0, non-decreasing,
  /// offsets[F * B] == N (checked by the run).
  static Result<KeyedJaggedTensor> fromOffsets(std::vector<std::string> keys,
                                               Tensor values, Tensor offsets,
                                               Tensor weights = Tensor());

  bool defined() const { return keys_ != nullptr; }
  const std::vector<std::string> &keys() const;
  int numKeys() const { return keys_ ? static_cast<int>(keys_->size()) : 0; }
  const Tensor &values() const { return values_; }
  /// Defined when built from lengths.
  const Tensor &lengths() const { return lengths_; }
  /// Defined when built from offsets.
  const Tensor &offsets() const { return offsets_; }
  bool hasLengths() const { return lengths_.defined(); }
  const Tensor &weights() const { return weights_; }
  bool hasWeights() const { return weights_.defined(); }
  /// The batch size B (bags per key); 0 without keys.
  int64_t batchSize() const;

private:
  // Shared so that copying a KJT (into RunInputs, per request) allocates
  // nothing.
  std::shared_ptr<const std::vector<std::string>> keys_;
  Tensor values_, lengths_, offsets_, weights_;
};

} // namespace ember

#endif // EMBER_KJT_H
