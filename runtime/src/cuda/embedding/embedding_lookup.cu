//===- embedding_lookup.cu - The CUDA lookup kernel and its launch --------===//
#include "cuda/cuda_status.h"
#include "cuda/embedding/embedding_lookup.cuh"
#include "cuda/embedding/embedding_lookup.h"

#include <algorithm>
#include <limits>
#include <string>

namespace ember::cuda::embedding {

namespace {

// 128-thread blocks: at ~95 registers a thread, 5 blocks (20 warps) fit an
// SM where 256-thread blocks fit 2 (16 warps).
constexpr int kThreadsPerBlock = 128;
constexpr int kBlocksPerMultiprocessor = 32;
// The chunks of a row one lane loads per id (chooseLookupShape's bound).
constexpr int kChunksPerLane = 4;
// A batch whose bags would fill fewer blocks per multiprocessor than this
// gets more lanes per bag (fitLookupShapeToBatch).
constexpr int kFillBlocksPerMultiprocessor = 4;

/// Errors of the lookup kernel go to the run's record and counter.
struct DeviceSink {
  DeviceErrorRecord *errors;
  unsigned long long *invalidIds;
  int32_t instruction;
  __device__ void raise(DeviceErrorCode code, int64_t a, int64_t b, int64_t c,
                        int64_t d) {
    raiseDeviceError(errors, instruction, code, a, b, c, d);
  }
  __device__ void addInvalid(int64_t n) {
    if (invalidIds)
      atomicAdd(invalidIds, static_cast<unsigned long long>(n));
  }
};

template <int K>
__global__ void __launch_bounds__(kThreadsPerBlock)
    lookupKernel(const __grid_constant__ LookupParams p) {
  const int lanes = p.lanes;
  const int groupsPerBlock = kThreadsPerBlock / lanes;
  const int lane = static_cast<int>(threadIdx.x) & (lanes - 1);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * groupsPerBlock;
  DeviceSink sink{p.errors, p.invalidIds, p.instruction};
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * groupsPerBlock +
                   threadIdx.x / lanes;
       g < p.numBags; g += stride)
    lookupBagLaneOf<K>(p, g, lane, sink);
}

} // namespace

size_t lookupDescriptorBytes(size_t numTables, size_t numFeatures) {
  if (numTables <= static_cast<size_t>(kInlineDescs) &&
      numFeatures <= static_cast<size_t>(kInlineDescs))
    return 0;
  return numTables * sizeof(TableDesc) + numFeatures * sizeof(FeatureDesc);
}

Status setLookupDescriptors(LookupParams &p,
                            const std::vector<TableDesc> &tables,
                            const std::vector<FeatureDesc> &features,
                            void *deviceDescs, cudaStream_t stream) {
  if (tables.empty() || features.empty())
    return invalidArgument("a lookup needs at least one table and feature");
  if (tables.size() >
          static_cast<size_t>(std::numeric_limits<int32_t>::max()) ||
      features.size() >
          static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    return invalidArgument("too many tables or features for one lookup");
  int64_t maxChunks = 1;
  for (const TableDesc &t : tables)
    maxChunks = std::max<int64_t>(
        maxChunks,
        (t.dim + chunkElems(static_cast<TableFormat>(t.format)) - 1) /
            chunkElems(static_cast<TableFormat>(t.format)));
  const LookupShape shape = chooseLookupShape(maxChunks, kChunksPerLane);
  p.lanes = shape.lanes;
  p.chunksPerLane = shape.chunksPerLane;
  p.numTables = static_cast<int32_t>(tables.size());
  p.numFeatures = static_cast<int32_t>(features.size());
  const size_t bytes = lookupDescriptorBytes(tables.size(), features.size());
  if (bytes == 0) {
    std::copy(tables.begin(), tables.end(), p.inlineTables);
    std::copy(features.begin(), features.end(), p.inlineFeatures);
    p.tables = nullptr;
    p.features = nullptr;
    return Status::ok();
  }
  if (!deviceDescs)
    return invalidArgument(
        "more than " + std::to_string(kInlineDescs) +
        " tables or features need device memory for their descriptors");
  auto *t = static_cast<TableDesc *>(deviceDescs);
  auto *f = reinterpret_cast<FeatureDesc *>(t + tables.size());
  EMBER_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(t, tables.data(),
                                             tables.size() * sizeof(TableDesc),
                                             cudaMemcpyHostToDevice, stream));
  EMBER_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(f, features.data(), features.size() * sizeof(FeatureDesc),
                      cudaMemcpyHostToDevice, stream));
  p.tables = t;
  p.features = f;
  return Status::ok();
}

Status launchLookup(const LookupParams &p, int multiprocessors,
                    cudaStream_t stream) {
  if (p.numBags <= 0)
    return Status::ok();
  if (p.lanes < 1 || p.lanes > 32 || (p.lanes & (p.lanes - 1)) != 0)
    return internalError("lookup lanes must be a power of two <= 32, got " +
                         std::to_string(p.lanes));
  if (p.chunksPerLane < 1 || p.chunksPerLane > kMaxChunksPerLane)
    return internalError("lookup chunks per lane must be in 1.." +
                         std::to_string(kMaxChunksPerLane) + ", got " +
                         std::to_string(p.chunksPerLane));
  if (!p.fixedShape) {
    const LookupShape fitted = fitLookupShapeToBatch(
        {p.lanes, p.chunksPerLane}, p.numBags,
        int64_t{std::max(multiprocessors, 1)} * kThreadsPerBlock *
            kFillBlocksPerMultiprocessor);
    if (fitted.lanes != p.lanes) {
      LookupParams widened = p;
      widened.lanes = fitted.lanes;
      widened.chunksPerLane = fitted.chunksPerLane;
      widened.fixedShape = 1;
      return launchLookup(widened, multiprocessors, stream);
    }
  }
  const int64_t groupsPerBlock = kThreadsPerBlock / p.lanes;
  const int64_t needed = (p.numBags + groupsPerBlock - 1) / groupsPerBlock;
  const int64_t cap = static_cast<int64_t>(std::max(multiprocessors, 1)) *
                      kBlocksPerMultiprocessor;
  const unsigned blocks = static_cast<unsigned>(std::min(needed, cap));
  static_assert(kMaxChunksPerLane == 4, "one kernel per chunk count");
  switch (p.chunksPerLane) {
  case 1:
    lookupKernel<1><<<blocks, kThreadsPerBlock, 0, stream>>>(p);
    break;
  case 2:
    lookupKernel<2><<<blocks, kThreadsPerBlock, 0, stream>>>(p);
    break;
  case 3:
    lookupKernel<3><<<blocks, kThreadsPerBlock, 0, stream>>>(p);
    break;
  default:
    lookupKernel<4><<<blocks, kThreadsPerBlock, 0, stream>>>(p);
    break;
  }
  return launchStatus("embedding lookup");
}

Status launchTbeForward(const TbeForwardArgs &args, int multiprocessors,
                        cudaStream_t stream) {
  if (args.batch < 0 || args.numIds < 0)
    return invalidArgument("TBE forward: negative batch or id count");
  LookupParams p;
  EMBER_RETURN_IF_ERROR(setLookupDescriptors(p, args.tables, args.features,
                                             args.deviceDescs, stream));
  for (const FeatureDesc &f : args.features)
    if (f.table < 0 || f.table >= p.numTables)
      return invalidArgument("TBE forward: a feature names table " +
                             std::to_string(f.table) + " of " +
                             std::to_string(p.numTables));
  if (args.lanes)
    p.lanes = args.lanes;
  if (args.chunksPerLane)
    p.chunksPerLane = args.chunksPerLane;
  p.fixedShape = args.lanes || args.chunksPerLane;
  p.ids = args.ids;
  p.ids64 = args.ids64;
  p.numIds = args.numIds;
  p.weights = args.weights;
  p.offsets = args.offsets;
  p.offsets64 = 1;
  p.numBags = static_cast<int64_t>(args.features.size()) * args.batch;
  p.numOffsets = p.numBags + 1;
  p.bagsPerFeature = args.batch;
  p.out = args.out;
  p.outStride = args.outStride;
  p.outHalf = args.output == TbeOutput::kFloat16;
  p.bounds = static_cast<uint8_t>(args.bounds);
  p.errors = args.errors;
  p.invalidIds = args.invalidIds;
  p.instruction = args.instruction;
  p.checkLengthSum = 1;
  return launchLookup(p, multiprocessors, stream);
}

} // namespace ember::cuda::embedding
