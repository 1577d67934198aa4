//===- embedding_lookup_params.h - One launch of the lookup kernel -*- C++
//-*-===//
//
// Every CUDA embedding lookup (embedding_bag, grouped_embedding_bag,
// embedding_sequence, the TBE forward of embedding_lookup.h) is one launch of
// the same kernel, described by a LookupParams passed by value: the bags
// ("segments" of ids), the features they belong to, the tables those read
// and the output rows they write.
//
// Bag g (0 <= g < numBags) belongs to feature f = g / bagsPerFeature and
// sample s = g % bagsPerFeature; it pools ids [begin, end) of `ids` (see
// bagRange in embedding_lookup.cuh) from table features[f].table and writes
// the table's dim columns at out[s * outStride + features[f].outOffset].
//
// Plain data only: included by nvcc (kernels), g++ (host launch code and the
// emulation tests) alike.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_EMBEDDING_EMBEDDING_LOOKUP_PARAMS_H
#define EMBER_CUDA_EMBEDDING_EMBEDDING_LOOKUP_PARAMS_H

#include "cuda/device_error.h"
#include "cuda/host_device.h"
#include "ember/dtype.h"

#include <cstdint>

namespace ember::cuda::embedding {

/// Pooling of a feature; the values of ember::embedding::Pooling.
enum class LookupPooling : uint8_t { kSum = 0, kMean = 1, kMax = 2 };

/// What happens to an id outside its table. Every mode reads a zero row
/// instead (a GPU never reads past a table); kFatal also raises
/// kIdOutOfRange, kWarning counts it in LookupParams::invalidIds.
enum class LookupBounds : uint8_t { kFatal = 0, kWarning = 1, kIgnore = 2 };

/// One table as the kernel sees it (device memory).
struct TableDesc {
  const uint8_t *data = nullptr;
  int64_t rows = 0;
  int64_t rowBytes = 0; // tableRowBytes(format, dim)
  int32_t dim = 0;
  uint8_t format = 0; // TableFormat
};

/// One feature: which table it reads and where its columns start.
struct FeatureDesc {
  int64_t outOffset = 0; // first output column
  int32_t table = 0;
  uint8_t pooling = 0; // LookupPooling
};

/// Features and tables up to this many travel inside the kernel parameters;
/// more are read from device copies (LookupParams::features / ::tables).
constexpr int kInlineDescs = 32;

/// The most chunks of a row one lane loads per id in one pass.
constexpr int kMaxChunksPerLane = 4;

/// Elements of a row one lane handles per step ("chunk"): 16 bytes of
/// float32 / float16 / bfloat16, 8 bytes of int8 codes, 4 bytes of int4 codes.
EMBER_HD_INLINE constexpr int chunkElems(TableFormat f) {
  return f == TableFormat::kFloat32 ? 4 : 8;
}
/// Bytes of a full chunk (the vector load width).
EMBER_HD_INLINE constexpr int chunkBytes(TableFormat f) {
  return f == TableFormat::kInt8RowWise   ? 8
         : f == TableFormat::kInt4RowWise ? 4
                                          : 16;
}

struct LookupParams {
  // Ids [numIds], int32 or int64; weights [numIds] float32 or null.
  const void *ids = nullptr;
  const float *weights = nullptr;
  int64_t numIds = 0;
  // Bag g is ids [offsets[g], offsets[g + 1]), the end being numIds when
  // g + 1 == numOffsets (PyTorch's include_last_offset=0). Null offsets: bag
  // g is the single id g (unpooled lookup).
  const void *offsets = nullptr;
  int64_t numOffsets = 0;
  int64_t numBags = 0;
  int64_t bagsPerFeature = 0;
  int32_t numFeatures = 1;
  int32_t numTables = 1;
  /// Sub-warp width: lanes per bag, a power of two <= 32, and the chunks
  /// of a row each lane loads per id in one pass, 1..kMaxChunksPerLane
  /// (chooseLookupShape()).
  int32_t lanes = 32;
  int32_t chunksPerLane = 1;
  /// lanes and chunksPerLane were set by hand (a benchmark comparing
  /// shapes): launchLookup keeps them instead of fitting them to the batch.
  uint8_t fixedShape = 0;
  /// Ids equal to it are skipped (not counted by mean); -1: none.
  int64_t paddingIdx = -1;
  // Output rows: float32, or float16 when outHalf.
  void *out = nullptr;
  int64_t outStride = 0; // elements between samples
  // Errors (device memory).
  DeviceErrorRecord *errors = nullptr;
  unsigned long long *invalidIds = nullptr;
  int32_t instruction = 0;
  uint8_t ids64 = 0;
  uint8_t offsets64 = 0;
  uint8_t outHalf = 0;
  uint8_t bounds = 0; // LookupBounds
  /// Offsets come from the user (embedding_bag): raise kFirstOffsetNotZero,
  /// kOffsetsDecreasing, kOffsetOutOfRange for bad ones.
  uint8_t checkOffsets = 0;
  /// Offsets are the scan of lengths (grouped lookup): raise
  /// kLengthsSumMismatch unless the last one is numIds.
  uint8_t checkLengthSum = 0;
  /// Device arrays of the descriptors, or null: the inline ones are used.
  const TableDesc *tables = nullptr;
  const FeatureDesc *features = nullptr;
  TableDesc inlineTables[kInlineDescs];
  FeatureDesc inlineFeatures[kInlineDescs];
};

} // namespace ember::cuda::embedding

#endif // EMBER_CUDA_EMBEDDING_EMBEDDING_LOOKUP_PARAMS_H
