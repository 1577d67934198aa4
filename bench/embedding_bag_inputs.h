//===- embedding_bag_inputs.h - One embedding_bag's inputs, for benchmarks
//-===//
//
// The table formats the benchmarks take and how each becomes embedding_bag's
// inputs and attributes, shared by ember_embedding_driver (tables read from
// files) and libember_bench_lookup (tables in the caller's memory).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BENCH_EMBEDDING_BAG_INPUTS_H
#define EMBER_BENCH_EMBEDDING_BAG_INPUTS_H

#include "bench_kernel_context.h"

#include <string>

namespace ember::bench {

/// The dtype and [rows, columns] shape a table of `format` has: float32,
/// float16 and bfloat16 are [rows, dim]; int8_rowwise is uint8 [rows,
/// dim + 8] (D codes, then float32 scale and bias: FBGEMM's and torch's
/// byte row-wise layout).
inline Result<std::pair<DType, Shape>>
embeddingTableLayout(const std::string &format, int64_t rows, int64_t dim) {
  if (rows <= 0 || dim <= 0)
    return invalidArgument("rows and dim must be positive");
  if (format == "int8_rowwise")
    return std::make_pair(DType::kUInt8, Shape{rows, dim + 8});
  auto dtype = parseDType(format);
  if (!dtype || (*dtype != DType::kFloat32 && *dtype != DType::kFloat16 &&
                 *dtype != DType::kBFloat16))
    return invalidArgument(
        "--format must be float32, float16, bfloat16 or int8_rowwise, got '" +
        format + "'");
  return std::make_pair(*dtype, Shape{rows, dim});
}

/// Makes `ctx` run embedding_bag (sum pooling unless `pooling` says
/// otherwise) on `table` (laid out as embeddingTableLayout says), int64
/// `indices` and int64 `offsets` (B + 1 entries).
inline void setEmbeddingBagInputs(BenchKernelContext &ctx, Tensor table,
                                  const std::string &format, int64_t dim,
                                  Tensor indices, Tensor offsets,
                                  const std::string &pooling = "sum") {
  if (format == "int8_rowwise") {
    ctx.attrs().set("format", format);
    ctx.attrs().set("dim", dim);
  }
  ctx.setInputs({table, indices, offsets});
  ctx.attrs().set("pooling", pooling);
}

} // namespace ember::bench

#endif // EMBER_BENCH_EMBEDDING_BAG_INPUTS_H
