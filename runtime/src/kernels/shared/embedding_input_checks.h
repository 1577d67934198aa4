//===- embedding_input_checks.h - Host checks of the lookups ----*- C++ -*-===//
//
// The attribute parsing and host-side input checks (dtypes, shapes, table
// views, padding_idx, pooling vs weights; with their messages) of
// embedding_bag, grouped_embedding_bag and embedding_sequence, shared by the
// CPU kernels (*embedding*_kernel.cpp) and the CUDA kernels
// (cuda/embedding/embedding_kernels.cpp). Value checks (offsets, lengths,
// ids) are the kernels' own: the CPU checks them on the host, the CUDA
// kernels on the device.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_EMBEDDING_INPUT_CHECKS_H
#define EMBER_KERNELS_SHARED_EMBEDDING_INPUT_CHECKS_H

#include "kernels/kernel_context.h"
#include "kernels/shared/embedding_attrs.h"
#include "kernels/shared/embedding_table.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ember::embedding {

/// A backend's own check of each table view, run right after the view is
/// made (what: "input 0 (table)", ...). Empty: none.
using TableViewCheck = std::function<Status(
    const TableView &view, const std::string &what, const std::string &where)>;

/// embedding_bag: 0 table, 1 indices, 2 offsets, 3 optional weights.
struct EmbeddingBagInputs {
  BagAttrs attrs;
  TableView table;
  int64_t numBags = 0; // B (from offsets' length and include_last_offset)
};
Result<EmbeddingBagInputs>
checkEmbeddingBagInputs(KernelContext &ctx,
                        const TableViewCheck &tableCheck = {});

/// grouped_embedding_bag: 0 values, 1 lengths [F*B], 2 optional weights,
/// then the tables (from input kFirstGroupedTable on).
constexpr int kFirstGroupedTable = 3;
struct GroupedEmbeddingBagInputs {
  GroupedAttrs attrs;
  std::vector<TableView> tables;
  int64_t numFeatures = 0, batch = 0; // F, B
};
Result<GroupedEmbeddingBagInputs>
checkGroupedEmbeddingBagInputs(KernelContext &ctx,
                               const TableViewCheck &tableCheck = {});

/// embedding_sequence: 0 table, 1 indices.
struct EmbeddingSequenceInputs {
  SequenceAttrs attrs;
  TableView table;
};
Result<EmbeddingSequenceInputs>
checkEmbeddingSequenceInputs(KernelContext &ctx,
                             const TableViewCheck &tableCheck = {});

} // namespace ember::embedding

#endif // EMBER_KERNELS_SHARED_EMBEDDING_INPUT_CHECKS_H
