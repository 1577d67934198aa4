//===- PlanKjtOps.h - KJTs, keyed tensors and lookups in a plan -*- C++ -*-===//
//
// Lowers the sparse side of a model to the runtime's KJT and embedding
// kernels (docs/kernels-embedding.md): KJT function arguments become
// Signature.kjt_inputs, ember.kjt.* ops become kjt_permute / kjt_split /
// kjt_concat / kjt_bucketize / lengths_to_offsets (or nothing: creating a KJT
// and reading its parts only renames slots), ember.embedding_bag_collection
// and ember.grouped_lookup become one grouped_embedding_bag each, and
// ember.keyed_tensor.* become slices, concats or nothing.
//
// A KJT value of the plan is three slots (the shared contract, see
// docs/plan-format.md): values [N] (i32/i64), lengths [K * B] key-major
// (lengths[f * B + b]) and optional weights [N] f32. A keyed tensor is one
// [B, sum(D)] slot. lookupKjt / lookupKeyedTensor give them to later users
// (the partitioning work).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANKJTOPS_H
#define EMBER_COMPILER_PLAN_PLANKJTOPS_H

#include "plan/OpLoweringTable.h"
#include "plan/PlanProgramBuilder.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <string>

namespace mlir::ember::plan_emitter {

/// The slots of one KJT value of the program.
struct KjtSlotRefs {
  int values = -1;
  int lengths = -1;
  int weights = -1; ///< -1 when the KJT has no weights
  int64_t numKeys = 0;
  /// B: a symbol, a static size, or neither when the plan does not know it
  /// (then every [B, ...] result gets a fresh symbol bound at run time).
  DimInfo batch;
  /// The dim of values (and weights): N.
  DimInfo numValues;
};

/// The slots of one jagged tensor value: values [N, dense...] and offsets
/// [B + 1] (int64).
struct JaggedSlotRefs {
  int values = -1;
  int offsets = -1;
  DimInfo numValues;  ///< N
  DimInfo numOffsets; ///< B + 1
  DimInfo batch;      ///< B, when the plan knows it
};

/// The [B, sum(D)] slot of a keyed tensor value.
struct KeyedTensorSlot {
  int slot = -1;
  DimInfo batch;
};

/// What the KJT lowering needs from the function emitter.
struct KjtLoweringHooks {
  /// The slot of operand `v` of `op` (materializing constants), or an error
  /// at `op`.
  std::function<FailureOr<int>(Operation *op, Value v)> operandSlot;
  /// Defines the slot of tensor result `result` of `op` with the given dims.
  std::function<FailureOr<int>(Operation *op, Value result,
                               ArrayRef<DimInfo> dims)>
      defineResult;
  /// The constant weight tensor behind an ember.table value, or null.
  std::function<Value(Value table)> tableWeights;
  /// The instruction name (source location) of `op`.
  std::function<std::string(Operation *op)> location;
  /// The index of the plan's collective descriptor for the next collective
  /// of this program (`kind`: pb::CollectiveDescriptor::Kind, group: the
  /// ranks), or an error at `op` (PlanCollectiveOps.cpp).
  std::function<FailureOr<int>(Operation *op, int kind,
                               ArrayRef<int64_t> group)>
      collective;
};

class PlanKjtLowering {
public:
  PlanKjtLowering(PlanProgramBuilder &builder, KjtLoweringHooks hooks)
      : builder_(builder), hooks_(std::move(hooks)) {}

  /// Adds KJT argument `arg` (type !ember.kjt) to the signature
  /// (Signature.kjt_inputs, RankProgram.kjt_input_slots): values [N_<name>],
  /// lengths [K*B] (batch symbol "B"), weights [N_<name>] f32.
  LogicalResult defineInput(BlockArgument arg, const std::string &name,
                            pb::Signature *signature);

  /// True for the ops `emit` lowers (the rows of its lowering table).
  static bool handles(Operation *op);
  LogicalResult emit(Operation *op);

  /// The slots of a KJT value (argument or op result), or nullptr.
  const KjtSlotRefs *lookupKjt(Value kjt) const;
  /// The slot of a keyed tensor value, or nullptr.
  const KeyedTensorSlot *lookupKeyedTensor(Value keyedTensor) const;

private:
  using Method = LogicalResult (PlanKjtLowering::*)(Operation *);
  /// The row lowering `op`: this file's table, then jaggedLowerings()
  /// (PlanJaggedOps.cpp) and collectiveLowerings() (PlanCollectiveOps.cpp);
  /// each file lists the ops it lowers.
  static const OpLowering<Method> *lowering(Operation *op);
  static ArrayRef<OpLowering<Method>> jaggedLowerings();
  static ArrayRef<OpLowering<Method>> collectiveLowerings();

  /// Ops whose values only shape computations or later ops read.
  LogicalResult emitNothing(Operation *) { return success(); }
  LogicalResult emitCreate(Operation *op);
  LogicalResult emitAccessor(Operation *op);
  LogicalResult emitPermute(Operation *op);
  LogicalResult emitSplit(Operation *op);
  LogicalResult emitConcat(Operation *op);
  LogicalResult emitBucketize(Operation *op);
  LogicalResult emitLookup(Operation *op);
  LogicalResult emitKeyedTensor(Operation *op);
  // Jagged tensors, sequence lookups and their all-to-all
  // (PlanJaggedOps.cpp).
  LogicalResult emitJagged(Operation *op);
  FailureOr<const JaggedSlotRefs *> jaggedOperand(Operation *op, Value v);
  DimInfo batchOfOffsets(Value offsets) const;
  // The partitioned program's ops (PlanCollectiveOps.cpp).
  LogicalResult emitFromBags(Operation *op);
  LogicalResult emitKjtAllToAll(Operation *op);
  LogicalResult emitPooledCollective(Operation *op);
  LogicalResult emitGatherOrReduce(Operation *op);
  LogicalResult emitWait(Operation *op);

  /// The slots of KJT operand `v` of `op`, or an error at `op`.
  FailureOr<const KjtSlotRefs *> kjtOperand(Operation *op, Value v);
  FailureOr<const KeyedTensorSlot *> keyedOperand(Operation *op, Value v);
  /// A slot tied to no MLIR value. A symbolic dim may carry a factor.
  int addSlot(const std::string &name, pb::DataType dtype,
              ArrayRef<std::pair<DimInfo, int64_t>> dims);
  /// A fresh N symbol (values of a kernel-produced KJT).
  DimInfo freshDim();
  /// The [K * B] lengths dim of a KJT with `numKeys` keys and batch `batch`.
  std::pair<DimInfo, int64_t> lengthsDim(int64_t numKeys, const DimInfo &batch);
  /// Output slots (values, lengths, weights or -1) for a kernel-produced KJT
  /// of `numKeys` keys; records them for `result` when it is non-null.
  KjtSlotRefs addKjtSlots(Value result, const std::string &name,
                          pb::DataType valuesType, pb::DataType lengthsType,
                          bool weighted, int64_t numKeys, const DimInfo &batch);

  PlanProgramBuilder &builder_;
  KjtLoweringHooks hooks_;
  llvm::DenseMap<Value, KjtSlotRefs> kjts_;
  llvm::DenseMap<Value, KeyedTensorSlot> keyed_;
  llvm::DenseMap<Value, JaggedSlotRefs> jaggeds_;
  /// Tensor results of collectives, by awaitable: the slot and its dims.
  llvm::DenseMap<Value, std::pair<int, DimList>> awaited_;
};

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANKJTOPS_H
