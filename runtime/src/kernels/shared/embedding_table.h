//===- embedding_table.h - Embedding tables and pooling modes --*- C++ -*-===//
#ifndef EMBER_KERNELS_SHARED_EMBEDDING_TABLE_H
#define EMBER_KERNELS_SHARED_EMBEDDING_TABLE_H

#include "ember/dtype.h"
#include "ember/status.h"
#include "ember/tensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ember::embedding {

/// How the rows of one bag are reduced.
enum class Pooling : uint8_t { kSum, kMean, kMax };

std::optional<Pooling> parsePooling(std::string_view name);
std::string_view poolingName(Pooling pooling);

/// An embedding table as the lookups see it: raw rows of `rowBytes` bytes in
/// `format`, each decoding to `dim` floats.
struct TableView {
  const uint8_t *data = nullptr;
  int64_t rows = 0;
  int64_t dim = 0;
  int64_t rowBytes = 0;
  TableFormat format = TableFormat::kFloat32;
};

/// The table format a float tensor's dtype implies (nullopt for other dtypes).
std::optional<TableFormat> formatOfDType(DType dtype);

/// Checks the format/dim attributes of a lookup (at plan load): `format` when
/// given must name a format, `dim` when given must be positive, and quantized
/// formats need `dim`. `formatName` empty and `dim` < 0 mean absent.
Status checkTableAttrs(const std::string &formatName, int64_t dim,
                       std::string_view what);

/// Builds the view of `table` (2-D float32/float16/bfloat16 [rows, dim], or
/// uint8 [rows, tableRowBytes(format, dim)] for the row-wise quantized
/// formats) and checks it against the optional `formatName` and `dim`.
/// `what` names the table in errors ("input 0 (table)", "table 3").
Result<TableView> makeTableView(const Tensor &table,
                                const std::string &formatName, int64_t dim,
                                std::string_view what,
                                const std::string &where);

} // namespace ember::embedding

#endif // EMBER_KERNELS_SHARED_EMBEDDING_TABLE_H
