//===- kernel_context.h - What a kernel sees of the executor ---*- C++ -*-===//
//
// The contract between the executor and the kernels. A kernel is a function
// Status(KernelContext&): it reads its inputs and attributes, allocates its
// outputs through the context (from the run's arena: no malloc in the steady
// state) and fills them. Kernels never throw and never abort on bad data: an
// out-of-range id or inconsistent lengths/offsets is a Status naming where.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_KERNEL_CONTEXT_H
#define EMBER_KERNELS_KERNEL_CONTEXT_H

#include "ember/bounds_check.h"
#include "ember/status.h"
#include "ember/tensor.h"
#include "kernels/attributes.h"
#include "kernels/quantized_sums.h"

#include <cstddef>
#include <string>

namespace ember {

class ThreadPool;
class Communicator;
struct CollectiveInfo;
namespace cuda {
struct KernelEnv;
}

/// What a session's options tell every kernel of its runs.
struct KernelSettings {
  /// What lookups do with ids outside their table
  /// (SessionOptions::boundsCheck).
  BoundsCheckMode boundsCheck = BoundsCheckMode::kFatal;
  /// How lookups add up quantized rows (SessionOptions::quantizedSums).
  embedding::QuantizedSums quantizedSums = embedding::defaultQuantizedSums();
};

class KernelContext {
public:
  virtual ~KernelContext() = default;

  virtual int numInputs() const = 0;
  /// Input i; an optional input the plan left out is an undefined Tensor.
  virtual const Tensor &input(int i) const = 0;
  virtual int numOutputs() const = 0;

  /// Allocates output i (uninitialized) and returns it. The memory comes from
  /// the run's arena and lives until the executor releases the slot.
  virtual Result<Tensor *> allocateOutput(int i, DType dtype, const Shape &shape) = 0;
  /// Makes output i alias `tensor` (reshape, identity, views of an input).
  virtual Status setOutput(int i, const Tensor &tensor) = 0;
  /// Temporary memory, 64-byte aligned, valid until the kernel returns.
  virtual Result<void *> scratch(size_t bytes) = 0;

  virtual const Attributes &attrs() const = 0;
  virtual ThreadPool &threadPool() = 0;
  virtual BoundsCheckMode boundsCheck() const = 0;
  /// The order in which pooled lookups add up quantized rows.
  virtual embedding::QuantizedSums quantizedSums() const = 0;
  /// In BoundsCheckMode::kWarning, lookups report how many ids they zeroed.
  virtual void reportInvalidIds(int64_t count) = 0;
  /// Where the kernel runs, for error messages: e.g.
  /// "instruction 12 'embedding_bag' (sparse_arch.ebc.t_user)".
  virtual std::string location() const = 0;

  /// The collective descriptor of this instruction (Instruction.collective),
  /// or nullptr: a collective kernel then runs as a group of one.
  virtual const CollectiveInfo *collective() const { return nullptr; }
  /// The session's communicator; nullptr in a single-rank session.
  virtual Communicator *communicator() const { return nullptr; }

  /// The device, stream and error record of a kernel that runs on the CUDA
  /// backend (runtime/src/cuda/kernel_env.h); nullptr on the CPU backend.
  /// When it is set, every tensor of this context is device memory.
  virtual cuda::KernelEnv *gpu() const { return nullptr; }
};

} // namespace ember

#endif // EMBER_KERNELS_KERNEL_CONTEXT_H
