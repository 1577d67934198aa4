//===- embedding_table.cpp - Embedding tables and pooling modes -----------===//
#include "kernels/shared/embedding_table.h"

#include "kernels/shared/jagged_index.h"

namespace ember::embedding {

std::optional<Pooling> parsePooling(std::string_view name) {
  if (name == "sum")
    return Pooling::kSum;
  if (name == "mean")
    return Pooling::kMean;
  if (name == "max")
    return Pooling::kMax;
  return std::nullopt;
}

std::string_view poolingName(Pooling pooling) {
  switch (pooling) {
  case Pooling::kSum:
    return "sum";
  case Pooling::kMean:
    return "mean";
  case Pooling::kMax:
    return "max";
  }
  return "unknown";
}

std::optional<TableFormat> formatOfDType(DType dtype) {
  switch (dtype) {
  case DType::kFloat32:
    return TableFormat::kFloat32;
  case DType::kFloat16:
    return TableFormat::kFloat16;
  case DType::kBFloat16:
    return TableFormat::kBFloat16;
  default:
    return std::nullopt;
  }
}

static bool isQuantized(TableFormat format) {
  return format == TableFormat::kInt8RowWise ||
         format == TableFormat::kInt4RowWise;
}

Status checkTableAttrs(const std::string &formatName, int64_t dim,
                       std::string_view what) {
  std::string w(what);
  if (!formatName.empty()) {
    auto format = parseTableFormat(formatName);
    if (!format)
      return invalidArgument(w + ": unknown table format '" + formatName +
                             "' (expected float32, float16, bfloat16, "
                             "int8_rowwise or int4_rowwise)");
    if (isQuantized(*format) && dim < 0)
      return invalidArgument(w + ": format '" + formatName +
                             "' needs the attribute 'dim' (columns per row)");
  }
  if (dim == 0 || dim < -1)
    return invalidArgument(w + ": dim must be positive, got " +
                           std::to_string(dim));
  return Status::ok();
}

Result<TableView> makeTableView(const Tensor &table,
                                const std::string &formatName, int64_t dim,
                                std::string_view what,
                                const std::string &where) {
  using jagged::errorAt;
  const StatusCode bad = StatusCode::kInvalidArgument;
  std::string w(what);
  if (!table.defined())
    return errorAt(bad, where, w + " is required but absent");
  if (table.rank() != 2)
    return errorAt(bad, where,
                   w + " must be 2-D [rows, row width], got " +
                       table.describe());
  TableView view;
  view.data = table.data<uint8_t>();
  view.rows = table.dim(0);
  std::optional<TableFormat> format;
  if (!formatName.empty()) {
    format = parseTableFormat(formatName);
    if (!format)
      return errorAt(bad, where,
                     w + ": unknown table format '" + formatName + "'");
  }
  if (auto implied = formatOfDType(table.dtype())) {
    if (format && *format != *implied)
      return errorAt(bad, where,
                     w + " is " + table.describe() + " but its format is '" +
                         formatName + "'");
    view.format = *implied;
    view.dim = table.dim(1);
    if (dim >= 0 && dim != view.dim)
      return errorAt(bad, where,
                     w + " has " + std::to_string(view.dim) +
                         " columns but dim is " + std::to_string(dim));
  } else if (table.dtype() == DType::kUInt8) {
    if (!format || !isQuantized(*format))
      return errorAt(bad, where,
                     w + " is " + table.describe() +
                         ": a uint8 table needs format int8_rowwise or "
                         "int4_rowwise");
    if (dim <= 0)
      return errorAt(bad, where,
                     w + ": a " + formatName +
                         " table needs the attribute 'dim'");
    view.format = *format;
    view.dim = dim;
    int64_t rowBytes = tableRowBytes(*format, dim);
    if (table.dim(1) != rowBytes)
      return errorAt(bad, where,
                     w + " is " + table.describe() + " but a " + formatName +
                         " row of dim " + std::to_string(dim) + " has " +
                         std::to_string(rowBytes) + " bytes");
  } else {
    return errorAt(bad, where,
                   w +
                       " must be float32, float16, bfloat16 or uint8 "
                       "(row-wise quantized), got " +
                       table.describe());
  }
  if (view.dim <= 0)
    return errorAt(bad, where, w + " has no columns: " + table.describe());
  view.rowBytes = tableRowBytes(view.format, view.dim);
  return view;
}

} // namespace ember::embedding
