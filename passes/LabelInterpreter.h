//===- LabelInterpreter.h - Data movement run on element labels -*- C++ -*-===//
//
// Runs reshapes, transposes, gathers and concats, with the integer shape and
// index arithmetic they read, on small concrete tensors: the batch of the
// chosen inputs gets a concrete size and the elements of one value are
// labelled with their own index, so that where each label lands tells what
// the data movement does. ember-raise-dense-ops checks which pairs the DLRM
// interaction's gather picks with it.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PASSES_LABELINTERPRETER_H
#define EMBER_PASSES_LABELINTERPRETER_H

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <vector>

namespace mlir::ember {

/// An int64 tensor with a concrete shape (labels, indices, shape values;
/// scalars have shape []), or only a shape (`data` unset: a tensor whose
/// values do not matter, such as float activations).
struct LabelTensor {
  SmallVector<int64_t> shape;
  std::optional<std::vector<int64_t>> data;

  int64_t numElements() const;
};

/// Evaluates values at one batch size. The leaves are `batchInputs` (their
/// dynamic dim 0 is `samples`; any other dynamic dim fails) and constants;
/// `seed`, a tosa.matmul result, holds the labels 0, 1, ... of its elements.
/// Evaluated: integer constants and tosa.const_shape, tensor.dim, arith
/// integer mul/add/sub/div and casts, tensor.from_elements, integer
/// tosa.add/sub/mul, tosa.reshape and the tensor reshapes, tensor.cast,
/// tosa.transpose, tosa.gather, tosa.concat, and the shape of a
/// tosa.matmul. Anything else (another run-time input, another op) fails,
/// and so does a result that disagrees with its static type or holds more
/// than 2^24 values.
class LabelInterpreter {
public:
  LabelInterpreter(int64_t samples, ArrayRef<Value> batchInputs, Value seed)
      : samples_(samples), seed_(seed) {
    batchInputs_.insert(batchInputs.begin(), batchInputs.end());
  }

  FailureOr<LabelTensor> eval(Value v) { return eval(v, 0); }

private:
  FailureOr<LabelTensor> eval(Value v, int depth);
  FailureOr<LabelTensor> compute(Value v, int depth);
  /// The value of an index or integer scalar.
  FailureOr<int64_t> scalar(Value v, int depth);

  int64_t samples_;
  llvm::DenseSet<Value> batchInputs_;
  Value seed_;
  llvm::DenseMap<Value, LabelTensor> cache_;
};

} // namespace mlir::ember

#endif // EMBER_PASSES_LABELINTERPRETER_H
