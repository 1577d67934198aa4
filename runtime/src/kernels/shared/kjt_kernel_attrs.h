//===- kjt_kernel_attrs.h - Attributes of the jagged and KJT kernels -*- C++
//-*-===//
//
// The attribute readers (and host-side input checks) of the jagged and KJT
// kernels, shared by the CPU kernels (kjt_*_kernel.cpp,
// jagged_padding_kernels.cpp) and their CUDA versions (runtime/src/cuda/
// jagged/), which take the same attributes.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_KJT_KERNEL_ATTRS_H
#define EMBER_KERNELS_SHARED_KJT_KERNEL_ATTRS_H

#include "kernels/attributes.h"
#include "kernels/shared/kjt_view.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ember::jagged {

// kjt_permute (kjt_permute_kernel.cpp)
struct PermuteAttrs {
  std::vector<int64_t> permutation;
  int64_t numKeys = 0, batchSize = 0;
};
Result<PermuteAttrs> readPermuteAttrs(const Attributes &attrs);

// kjt_split (kjt_split_kernel.cpp): the key counts of the parts.
Result<std::vector<int64_t>> readSplitKeyCounts(const Attributes &attrs,
                                                int numOutputs);

// kjt_concat (kjt_concat_kernel.cpp)
struct ConcatAttrs {
  int64_t numInputs = 0;
  int64_t batchSize = -1;         // -1: not given
  std::vector<int64_t> keyCounts; // empty: not given
};
Result<ConcatAttrs> readConcatAttrs(const Attributes &attrs, int numInputs);
/// Reads (with `reader`: readKjt on the CPU, checkKjt on a device) and checks
/// the KJTs to concatenate: batch sizes, weights all or none, dtypes.
using KjtReader = std::function<Result<KjtView>(
    const KernelContext &, int, int64_t, int64_t, const std::string &)>;
Result<std::vector<KjtView>> readConcatInputs(const KernelContext &ctx,
                                              const ConcatAttrs &a,
                                              const KjtReader &reader);

// kjt_bucketize (kjt_bucketize_kernel.cpp)
struct BucketizeAttrs {
  std::vector<int64_t> blockSizes;
  int64_t numBuckets = 1;
};
Result<BucketizeAttrs> readBucketizeAttrs(const Attributes &attrs);

// kjt_from_bags (kjt_from_bags_kernel.cpp)
struct FromBagsAttrs {
  std::vector<int64_t> includeLastOffset;
  std::vector<int64_t> numRows;          // empty: ids are not checked
  std::vector<std::string> featureNames; // empty: "feature <f>" in messages
  DType lengthsDType = DType::kInt64;
};
Result<FromBagsAttrs> readFromBagsAttrs(const Attributes &attrs, int numInputs);
/// "feature f" or "feature f ('name')".
std::string fromBagsFeatureName(const FromBagsAttrs &a, int64_t f);
/// The checked shape of kjt_from_bags' inputs.
struct FromBagsInputs {
  int64_t batchSize = 0; // B (0 without features)
  DType idsDType = DType::kInt64;
  bool weighted = false;
  /// Per feature, the B + 1 validated offsets; only filled by a reader of
  /// host data (readData = true).
  std::vector<std::vector<int64_t>> offsets;
};
/// Checks dtypes, dims and batch sizes; with `readData` also validates the
/// offsets and ids (host memory) and fills `offsets`.
Result<FromBagsInputs> readFromBagsInputs(const KernelContext &ctx,
                                          const FromBagsAttrs &a,
                                          bool readData);

// jagged_to_padded (jagged_padding_kernels.cpp)
Result<int64_t> readMaxLength(const Attributes &attrs);
/// The bytes of `value` as one element of `dtype`.
std::vector<uint8_t> paddingBytes(double value, DType dtype);

} // namespace ember::jagged

#endif // EMBER_KERNELS_SHARED_KJT_KERNEL_ATTRS_H
