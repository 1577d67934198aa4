//===- EmberShardingAttrs.h - sharding and process groups -------*- C++ -*-===//
//
// Process groups (#ember.group), shards (#ember.shard) and table shardings
// (#ember.sharding). The attribute classes themselves are generated into
// EmberAttrs.h.inc with the dialect's other attributes; this header adds the
// checks that need a table's size.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_EMBERSHARDINGATTRS_H
#define EMBER_EMBERSHARDINGATTRS_H

#include "dialects/ember/EmberAttrs.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
namespace ember {

/// Checks that `sharding` fits a table of `rows` x `dim`: every shard lies
/// inside the table and the shards tile [0, rows) x [0, dim) exactly, with no
/// overlap (excluded by the attribute's own verifier) and no gap; for
/// table_wise the one shard is the whole table,
/// for row_wise / table_row_wise every shard has the full width `dim`, for
/// column_wise the full height `rows`. A data_parallel sharding (replicated,
/// no shards) fits any table. Reports the first problem through `emitError`.
LogicalResult
verifyTableSharding(ShardingAttr sharding, int64_t rows, int64_t dim,
                    llvm::function_ref<InFlightDiagnostic()> emitError);

} // namespace ember
} // namespace mlir

#endif // EMBER_EMBERSHARDINGATTRS_H
