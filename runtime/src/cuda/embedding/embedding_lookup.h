//===- embedding_lookup.h - Launching the CUDA embedding lookups -*- C++
//-*-===//
//
// The C++ launch API of the CUDA lookups, used by the kernels of
// embedding_kernels.cpp (embedding_bag, grouped_embedding_bag,
// embedding_sequence), the benchmark bench/gpu/tbe_bench.cu and, later,
// whatever launches a TBE forward directly (e.g. with a float16 output).
// Everything is enqueued on the given stream; nothing synchronizes.
// docs/cuda-embedding.md describes the design.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_EMBEDDING_EMBEDDING_LOOKUP_H
#define EMBER_CUDA_EMBEDDING_EMBEDDING_LOOKUP_H

#include "cuda/embedding/embedding_lookup_params.h"
#include "ember/status.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::cuda::embedding {

/// Device bytes the descriptors of `numTables` tables and `numFeatures`
/// features need when they do not fit in the kernel parameters (0 when they
/// do: up to kInlineDescs of each).
size_t lookupDescriptorBytes(size_t numTables, size_t numFeatures);

/// Sets p's tables and features (and numTables, numFeatures, and lanes and
/// chunksPerLane: chooseLookupShape() of the widest row). When they do not fit
/// inline, they are copied (cudaMemcpyAsync from host memory, on `stream`) to
/// `deviceDescs`, lookupDescriptorBytes() bytes of device memory, 16-byte
/// aligned.
Status setLookupDescriptors(LookupParams &p,
                            const std::vector<TableDesc> &tables,
                            const std::vector<FeatureDesc> &features,
                            void *deviceDescs, cudaStream_t stream);

/// Enqueues the lookup of every bag of `p` (nothing when p.numBags is 0),
/// with the shape fitted to the batch unless p.fixedShape
/// (fitLookupShapeToBatch):
/// blocks of 128 threads, 128 / p.lanes bags per block at a time, at most
/// 32 blocks per multiprocessor (a grid-stride loop covers the rest).
Status launchLookup(const LookupParams &p, int multiprocessors,
                    cudaStream_t stream);

/// Device scratch bytes launchLengthsToOffsets needs for `n` lengths.
Result<size_t> lengthsToOffsetsScratchBytes(int64_t n);

/// offsets[0..n] (int64, at the start of `scratch`) = the exclusive scan of
/// the int32/int64 `lengths` [n]; a negative length raises kNegativeLength.
/// `scratch` holds lengthsToOffsetsScratchBytes(n) bytes, 256-byte aligned.
Status launchLengthsToOffsets(const void *lengths, bool lengths64, int64_t n,
                              void *scratch, size_t scratchBytes,
                              DeviceErrorRecord *errors, int32_t instruction,
                              int multiprocessors, cudaStream_t stream);

/// The TBE forward: every feature of a batch, key-major bags (bag f * batch +
/// s is sample s of feature f), pooled in one launch into
/// out[s * outStride + features[f].outOffset, + dim of its table).
enum class TbeOutput : uint8_t { kFloat32, kFloat16 };

struct TbeForwardArgs {
  std::vector<TableDesc> tables;
  std::vector<FeatureDesc> features;
  const void *ids = nullptr; // [numIds] int32 or int64 (ids64)
  bool ids64 = true;
  int64_t numIds = 0;
  const float *weights = nullptr;   // [numIds] or null (sum pooling only)
  const int64_t *offsets = nullptr; // [F * batch + 1], offsets[0] = 0
  int64_t batch = 0;
  void *out = nullptr;
  int64_t outStride = 0; // output elements between samples
  TbeOutput output = TbeOutput::kFloat32;
  LookupBounds bounds = LookupBounds::kFatal;
  DeviceErrorRecord *errors = nullptr;      // may be null: nothing raised
  unsigned long long *invalidIds = nullptr; // kWarning counts (or null)
  int32_t instruction = 0;
  /// lookupDescriptorBytes(tables, features) bytes of device memory when
  /// there are more than kInlineDescs tables or features.
  void *deviceDescs = nullptr;
  /// The sub-warp shape (LookupParams::lanes, ::chunksPerLane); 0 keeps
  /// setLookupDescriptors' choice. For benchmarks that compare shapes.
  int lanes = 0;
  int chunksPerLane = 0;
};

Status launchTbeForward(const TbeForwardArgs &args, int multiprocessors,
                        cudaStream_t stream);

} // namespace ember::cuda::embedding

#endif // EMBER_CUDA_EMBEDDING_EMBEDDING_LOOKUP_H
