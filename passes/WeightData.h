//===- WeightData.h - The bytes of weight constants, mapped or not -*- C++
//-*-===//
//
// Weights at real scale (docs/architecture.md, "Weights at scale"): the ONNX
// importer maps large external-data initializers read-only
// (MappedWeightFile) and makes them DenseResourceElementsAttr constants whose
// blob points into the mapping, so no byte of a table is copied. Everything
// that reads a weight's bytes (the partitioning, the plan emitter, the weights
// writer) goes through weightBytesOf(), which takes both those and ordinary
// DenseElementsAttr constants.
//
// Mapped files register their address range, so that the weights writer can
// drop the pages it has passed (releaseMappedPages) and keep the compiler's
// resident memory bounded; memory that is not such a mapping is never touched.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PASSES_WEIGHTDATA_H
#define EMBER_PASSES_WEIGHTDATA_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace mlir::ember {

/// A whole file mapped read-only (PROT_READ, MAP_SHARED): its pages come from
/// the page cache on first touch and are never copied. The mapping lives as
/// long as the last shared_ptr (the blobs of the attributes over it hold one).
class MappedWeightFile {
public:
  /// Maps `path`; on failure returns null and sets `error`.
  static std::shared_ptr<MappedWeightFile> open(llvm::StringRef path,
                                                std::string *error);
  ~MappedWeightFile();
  MappedWeightFile(const MappedWeightFile &) = delete;
  MappedWeightFile &operator=(const MappedWeightFile &) = delete;

  const char *data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string &path() const { return path_; }
  /// The open file (for SEEK_DATA / SEEK_HOLE).
  int fd() const { return fd_; }

private:
  MappedWeightFile() = default;
  int fd_ = -1;
  const char *data_ = nullptr;
  uint64_t size_ = 0;
  std::string path_;
};

/// A constant of `type` whose bytes are [offset, offset + bytes of type) of
/// `file`, without copying them: a DenseResourceElementsAttr whose blob (named
/// after `name`) keeps the mapping alive. The caller checks that the range
/// lies in the file and that `file->data() + offset` is aligned to the
/// element size.
DenseResourceElementsAttr mappedWeights(ShapedType type, llvm::StringRef name,
                                        std::shared_ptr<MappedWeightFile> file,
                                        uint64_t offset);

/// A constant of `type` over the same bytes as `attr` (a bitcast to another
/// element type of the same width, or a row range of its first dim when
/// `byteOffset`/`type` say so: no copy). `attr` must be resource-backed.
DenseResourceElementsAttr viewOfMappedWeights(DenseResourceElementsAttr attr,
                                              ShapedType type,
                                              uint64_t byteOffset = 0);

/// Rows [row0, row0 + rows) x columns [col0, col0 + cols) of the 2-D
/// constant `weights` over a mapped file, built at `b`'s insertion point
/// without copying: whole rows are a view of the same mapping (an
/// arith.constant), other column ranges a tensor.extract_slice of the whole
/// constant, which the plan emitter writes row by row from the mapping.
Value sliceOfMappedWeights(OpBuilder &b, Location loc,
                           DenseResourceElementsAttr weights, int64_t row0,
                           int64_t rows, int64_t col0, int64_t cols);

/// The bytes of a weight constant.
struct WeightBytes {
  /// All the elements in row-major order, or one element when `splat`.
  llvm::ArrayRef<char> data;
  bool splat = false;
  /// Bytes of one element.
  uint64_t elementBytes = 0;
};

/// The bytes of `attr`: a DenseElementsAttr (not of i1: its bits are
/// packed) or a DenseResourceElementsAttr whose blob is present and holds
/// exactly the type's bytes. nullopt otherwise.
std::optional<WeightBytes> weightBytesOf(ElementsAttr attr);

/// Whether `attr` is a constant over a mapped file (its bytes are not in
/// memory until read).
bool isMappedWeights(ElementsAttr attr);

/// What the bytes at `data` are, for as long as they stay so (at most `size`
/// bytes): a hole of a mapped weight file (zeros that take no disk space,
/// found with SEEK_DATA without reading them), or data (also any memory
/// that is not a mapped weight file).
struct WeightExtent {
  bool hole = false;
  uint64_t bytes = 0;
};
WeightExtent weightExtentAt(const char *data, uint64_t size);

/// Drops the resident pages that lie wholly inside [data, data + size) and
/// inside one mapped weight file (madvise MADV_DONTNEED: the data stay in the
/// file and come back on the next touch). Does nothing for any other memory.
void releaseMappedPages(const char *data, uint64_t size);

} // namespace mlir::ember

#endif // EMBER_PASSES_WEIGHTDATA_H
