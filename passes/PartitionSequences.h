//===- PartitionSequences.h - sharded sequence lookups ----------*- C++ -*-===//
//
// The part of ember-partition that rewrites sharded ember.sequence_lookup ops
// (TorchRec's sharded EmbeddingCollection) in one rank's program.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PASSES_PARTITIONSEQUENCES_H
#define EMBER_PASSES_PARTITIONSEQUENCES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir::ember {

/// Rewrites every `ember.sequence_lookup` of `func` (rank `rank`'s copy of
/// the model) that has an `ember.sharding` attribute: data-parallel ones
/// lose the attribute, sharded ones become input dist, shard lookup and
/// sequence all-to-all (PartitionSequences.cpp). Errors name the lookup.
LogicalResult partitionSequenceLookups(func::FuncOp func, int64_t rank,
                                       int64_t worldSize);

} // namespace mlir::ember

#endif // EMBER_PASSES_PARTITIONSEQUENCES_H
