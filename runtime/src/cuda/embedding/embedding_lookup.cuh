//===- embedding_lookup.cuh - Per-lane body of the lookup kernel -*- C++
//-*-===//
//
// The work of one lane of one bag, written once for the device (nvcc) and
// the host emulation test (g++): tests/unit/gpu/embedding_emulation_test.cpp
// runs lookupBagLane over every (bag, lane) of an emulated grid.
//
// Design: a sub-warp of `lanes` threads pools one bag. A row is cut into
// chunks of chunkElems(format) elements (16 bytes of float32/float16/
// bfloat16, 8 of int8 codes, 4 of int4 codes); lane l handles K =
// chunksPerLane chunks at a time (l, l + lanes, ..., l + (K - 1) lanes, then
// the next group) and walks the bag's ids itself (the lanes of a sub-warp
// read the same id: one broadcast load), so lanes never need each other.
// Rows are read with one vector load per chunk when the chunk is full and
// aligned, byte by byte otherwise (rows whose size is not a multiple of the
// chunk size, the last partial chunk). Ids are taken kUnroll at a time and
// the K chunks of each of their rows loaded before any is accumulated, so
// kUnroll * K loads are in flight per lane. Accumulation is float32, in id
// order. chooseLookupShape / fitLookupShapeToBatch pick lanes and K.
//
// Semantics are those of the CPU kernels (embedding_pool_loop.h): padding
// ids are skipped; an id outside its table is a zero row (counted by mean,
// a zero in max) and is reported per LookupParams::bounds; empty bags give
// zeros; weights multiply rows (sum pooling).
//
// Errors go to a Sink: raise(code, a, b, c, d) and addInvalid(count). Only
// lane 0 reports, once per bag.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_EMBEDDING_EMBEDDING_LOOKUP_CUH
#define EMBER_CUDA_EMBEDDING_EMBEDDING_LOOKUP_CUH

#include "cuda/embedding/embedding_lookup_params.h"

#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

// Fully unrolled under nvcc (the loops index small register arrays).
#ifdef __CUDACC__
#define EMBER_LOOKUP_UNROLL _Pragma("unroll")
#else
#define EMBER_LOOKUP_UNROLL
#endif

namespace ember::cuda::embedding {

/// Ids whose rows one lane loads before accumulating them.
constexpr int kUnroll = 4;

/// Up to 16 raw bytes of one chunk of a row, little-endian words.
struct RawChunk {
  uint32_t w[4];
};

EMBER_HD_INLINE int64_t loadIndex(const void *p, bool is64, int64_t i) {
  return is64 ? static_cast<const int64_t *>(p)[i]
              : static_cast<int64_t>(static_cast<const int32_t *>(p)[i]);
}

EMBER_HD_INLINE float bitsToFloat(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

EMBER_HD_INLINE uint32_t floatToBits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}

EMBER_HD_INLINE float halfBitsToFloat(uint32_t h) {
#ifdef __CUDA_ARCH__
  return __half2float(__ushort_as_half(static_cast<unsigned short>(h)));
#else
  return ember::halfToFloat(static_cast<uint16_t>(h));
#endif
}

EMBER_HD_INLINE uint16_t floatToHalfBits(float f) {
#ifdef __CUDA_ARCH__
  return __half_as_ushort(__float2half_rn(f));
#else
  return ember::floatToHalf(f);
#endif
}

/// std::max of the CPU kernels (the first argument unless b is larger).
EMBER_HD_INLINE float maxOf(float a, float b) { return a < b ? b : a; }

/// Bytes of `elems` elements of a chunk of format F.
template <TableFormat F> EMBER_HD_INLINE int chunkBytesOf(int elems) {
  if constexpr (F == TableFormat::kFloat32)
    return 4 * elems;
  else if constexpr (F == TableFormat::kInt8RowWise)
    return elems;
  else if constexpr (F == TableFormat::kInt4RowWise)
    return (elems + 1) / 2;
  else
    return 2 * elems;
}

/// Whether the chunk at `p` of `elems` elements is read with one vector load.
template <TableFormat F>
EMBER_HD_INLINE bool vectorChunk(const uint8_t *p, int elems) {
  return elems == chunkElems(F) &&
         (reinterpret_cast<uintptr_t>(p) % chunkBytes(F)) == 0;
}

/// Reads chunk `c` of a row of `dim` elements (the bytes past the row's end
/// are never read; they are zero in `r`).
template <TableFormat F>
EMBER_HD_INLINE void loadChunk(const uint8_t *row, int64_t c, int64_t dim,
                               RawChunk &r) {
  constexpr int V = chunkElems(F), kBytes = chunkBytes(F);
  const uint8_t *p = row + c * kBytes;
  const int elems = dim - c * V < V ? static_cast<int>(dim - c * V) : V;
  r.w[0] = r.w[1] = r.w[2] = r.w[3] = 0;
  if (vectorChunk<F>(p, elems)) {
#ifdef __CUDA_ARCH__
    if constexpr (kBytes == 16) {
      uint4 v = __ldg(reinterpret_cast<const uint4 *>(p));
      r.w[0] = v.x, r.w[1] = v.y, r.w[2] = v.z, r.w[3] = v.w;
    } else if constexpr (kBytes == 8) {
      uint2 v = __ldg(reinterpret_cast<const uint2 *>(p));
      r.w[0] = v.x, r.w[1] = v.y;
    } else {
      r.w[0] = __ldg(reinterpret_cast<const unsigned int *>(p));
    }
#else
    std::memcpy(r.w, p, kBytes);
#endif
    return;
  }
  const int n = chunkBytesOf<F>(elems);
  EMBER_LOOKUP_UNROLL
  for (int k = 0; k < kBytes; ++k)
    if (k < n)
      r.w[k >> 2] |= static_cast<uint32_t>(p[k]) << (8 * (k & 3));
}

/// The scale and bias of a quantized row (two float32 after the codes).
template <TableFormat F>
EMBER_HD_INLINE void loadScaleBias(const uint8_t *row, int64_t dim,
                                   float &scale, float &bias) {
  const int64_t codes = F == TableFormat::kInt8RowWise ? dim : (dim + 1) / 2;
  const uint8_t *p = row + codes;
  if ((reinterpret_cast<uintptr_t>(p) & 7) == 0) {
#ifdef __CUDA_ARCH__
    float2 sb = __ldg(reinterpret_cast<const float2 *>(p));
    scale = sb.x;
    bias = sb.y;
#else
    std::memcpy(&scale, p, 4);
    std::memcpy(&bias, p + 4, 4);
#endif
    return;
  }
  uint32_t s = 0, b = 0;
  EMBER_LOOKUP_UNROLL
  for (int k = 0; k < 4; ++k) {
    s |= static_cast<uint32_t>(p[k]) << (8 * k);
    b |= static_cast<uint32_t>(p[4 + k]) << (8 * k);
  }
  scale = bitsToFloat(s);
  bias = bitsToFloat(b);
}

/// Element k of a chunk: its value for float formats, its code for
/// quantized ones.
template <TableFormat F>
EMBER_HD_INLINE float chunkElement(const RawChunk &r, int k) {
  if constexpr (F == TableFormat::kFloat32)
    return bitsToFloat(r.w[k]);
  else if constexpr (F == TableFormat::kFloat16)
    return halfBitsToFloat((r.w[k >> 1] >> ((k & 1) * 16)) & 0xffffu);
  else if constexpr (F == TableFormat::kBFloat16)
    return bitsToFloat(((r.w[k >> 1] >> ((k & 1) * 16)) & 0xffffu) << 16);
  else if constexpr (F == TableFormat::kInt8RowWise)
    return static_cast<float>((r.w[k >> 2] >> ((k & 3) * 8)) & 0xffu);
  else
    return static_cast<float>((r.w[0] >> (4 * k)) & 0xfu);
}

EMBER_HD_INLINE TableDesc tableAt(const LookupParams &p, int32_t t) {
  return p.tables ? p.tables[t] : p.inlineTables[t];
}
EMBER_HD_INLINE FeatureDesc featureAt(const LookupParams &p, int32_t f) {
  return p.features ? p.features[f] : p.inlineFeatures[f];
}

/// The ids [begin, end) of bag g, clamped into [0, numIds] so that bad
/// offsets never make a lane read outside the ids; when `report`, bad offsets
/// are raised (see LookupParams::checkOffsets / ::checkLengthSum).
template <class Sink>
EMBER_HD_INLINE void bagRange(const LookupParams &p, int64_t g, bool report,
                              Sink &sink, int64_t &begin, int64_t &end) {
  if (!p.offsets) {
    begin = g;
    end = g + 1;
    return;
  }
  const int64_t b0 = loadIndex(p.offsets, p.offsets64, g);
  const int64_t e0 = g + 1 < p.numOffsets
                         ? loadIndex(p.offsets, p.offsets64, g + 1)
                         : p.numIds;
  if (report && p.checkOffsets) {
    if (g == 0 && b0 != 0)
      sink.raise(DeviceErrorCode::kFirstOffsetNotZero, b0, 0, 0, 0);
    if (e0 < b0)
      sink.raise(DeviceErrorCode::kOffsetsDecreasing, g + 1, e0, b0, 0);
    else if (e0 > p.numIds)
      sink.raise(DeviceErrorCode::kOffsetOutOfRange, g + 1, e0, p.numIds, 0);
  }
  if (report && p.checkLengthSum && g == p.numBags - 1 && e0 != p.numIds)
    sink.raise(DeviceErrorCode::kLengthsSumMismatch, e0, p.numIds, 0, 0);
  begin = b0 < 0 ? 0 : (b0 > p.numIds ? p.numIds : b0);
  end = e0 < begin ? begin : (e0 > p.numIds ? p.numIds : e0);
}

/// Writes `elems` (<= V) floats of `v` at output element `col` of `outRow`:
/// full chunks at aligned addresses with vector stores (the words packed the
/// same way on both sides), the rest element by element.
template <int V>
EMBER_HD_INLINE void storeChunk(const LookupParams &p, void *outRow,
                                int64_t col, const float (&v)[V], int elems) {
  static_assert(V == 4 || V == 8, "chunks are 4 or 8 elements");
  RawChunk w;
  if (p.outHalf) {
    uint16_t *o = static_cast<uint16_t *>(outRow) + col;
    if (elems == V && (reinterpret_cast<uintptr_t>(o) % (2 * V)) == 0) {
      EMBER_LOOKUP_UNROLL
      for (int k = 0; k < V / 2; ++k)
        w.w[k] = floatToHalfBits(v[2 * k]) |
                 (uint32_t(floatToHalfBits(v[2 * k + 1])) << 16);
#ifdef __CUDA_ARCH__
      if constexpr (V == 8)
        *reinterpret_cast<uint4 *>(o) =
            make_uint4(w.w[0], w.w[1], w.w[2], w.w[3]);
      else
        *reinterpret_cast<uint2 *>(o) = make_uint2(w.w[0], w.w[1]);
#else
      std::memcpy(o, w.w, 2 * V);
#endif
      return;
    }
    for (int k = 0; k < V; ++k)
      if (k < elems)
        o[k] = floatToHalfBits(v[k]);
    return;
  }
  float *o = static_cast<float *>(outRow) + col;
  if (elems == V && (reinterpret_cast<uintptr_t>(o) & 15) == 0) {
    EMBER_LOOKUP_UNROLL
    for (int q = 0; q < V / 4; ++q) {
      EMBER_LOOKUP_UNROLL
      for (int k = 0; k < 4; ++k)
        w.w[k] = floatToBits(v[4 * q + k]);
#ifdef __CUDA_ARCH__
      *reinterpret_cast<uint4 *>(o + 4 * q) =
          make_uint4(w.w[0], w.w[1], w.w[2], w.w[3]);
#else
      std::memcpy(o + 4 * q, w.w, 16);
#endif
    }
    return;
  }
  for (int k = 0; k < V; ++k)
    if (k < elems)
      o[k] = v[k];
}

/// Lane `lane` of bag g over a table of format F: chunk groups of K chunks
/// (c0, c0 + lanes, ..., c0 + (K - 1) * lanes), c0 = lane, lane + K * lanes,
/// ...; for each group the bag's ids are walked once, kUnroll at a time, and
/// the K chunks of each of their rows are all loaded before any is
/// accumulated, so up to kUnroll * K loads of a lane are in flight.
template <TableFormat F, int K, class Sink>
EMBER_HD_INLINE void poolBagLane(const LookupParams &p, const TableDesc &t,
                                 LookupPooling pooling, int64_t g,
                                 int64_t begin, int64_t end, int lane,
                                 void *outRow, Sink &sink) {
  constexpr int V = chunkElems(F);
  constexpr bool kQuantized =
      F == TableFormat::kInt8RowWise || F == TableFormat::kInt4RowWise;
  const bool isMax = pooling == LookupPooling::kMax;
  const int64_t dim = t.dim;
  const int64_t chunks = (dim + V - 1) / V;
  const int64_t lanes = p.lanes;
  const LookupBounds bounds = static_cast<LookupBounds>(p.bounds);
  const bool hasPadding = p.paddingIdx >= 0;
  for (int64_t c0 = lane; c0 < chunks; c0 += lanes * K) {
    // Lane 0 reports the bag's invalid ids, in its first group only.
    const bool reporter = c0 == 0;
    bool live[K]; // chunk c0 + j * lanes is in the row
    EMBER_LOOKUP_UNROLL
    for (int j = 0; j < K; ++j)
      live[j] = c0 + j * lanes < chunks;
    float acc[K][V];
    EMBER_LOOKUP_UNROLL
    for (int j = 0; j < K; ++j)
      EMBER_LOOKUP_UNROLL
    for (int k = 0; k < V; ++k)
      acc[j][k] = isMax ? bitsToFloat(0xff800000u) : 0.0f; // -inf
    int64_t count = 0, invalid = 0;
    for (int64_t i = begin; i < end; i += kUnroll) {
      RawChunk raw[kUnroll][K];
      float scale[kUnroll], bias[kUnroll];
      int64_t id[kUnroll];
      // 0: skipped (padding or past the bag), 1: a row, 2: invalid id.
      int state[kUnroll];
      EMBER_LOOKUP_UNROLL
      for (int u = 0; u < kUnroll; ++u) {
        state[u] = 0;
        id[u] = 0;
        scale[u] = 1.0f;
        bias[u] = 0.0f;
        if (i + u >= end)
          continue;
        id[u] = loadIndex(p.ids, p.ids64, i + u);
        if (hasPadding && id[u] == p.paddingIdx)
          continue;
        if (static_cast<uint64_t>(id[u]) >= static_cast<uint64_t>(t.rows)) {
          state[u] = 2;
          continue;
        }
        state[u] = 1;
        const uint8_t *row = t.data + id[u] * t.rowBytes;
        EMBER_LOOKUP_UNROLL
        for (int j = 0; j < K; ++j)
          if (live[j])
            loadChunk<F>(row, c0 + j * lanes, dim, raw[u][j]);
        if constexpr (kQuantized)
          loadScaleBias<F>(row, dim, scale[u], bias[u]);
      }
      EMBER_LOOKUP_UNROLL
      for (int u = 0; u < kUnroll; ++u) {
        if (state[u] == 0)
          continue;
        ++count;
        if (state[u] == 2) {
          if (reporter) {
            if (bounds == LookupBounds::kFatal)
              sink.raise(DeviceErrorCode::kIdOutOfRange, id[u], i + u, g,
                         t.rows);
            ++invalid;
          }
          if (isMax) {
            EMBER_LOOKUP_UNROLL
            for (int j = 0; j < K; ++j)
              EMBER_LOOKUP_UNROLL
            for (int k = 0; k < V; ++k)
              acc[j][k] = maxOf(acc[j][k], 0.0f);
          }
          continue;
        }
        if (isMax) {
          EMBER_LOOKUP_UNROLL
          for (int j = 0; j < K; ++j)
            EMBER_LOOKUP_UNROLL
          for (int k = 0; k < V; ++k)
            acc[j][k] = maxOf(
                acc[j][k],
                kQuantized ? scale[u] * chunkElement<F>(raw[u][j], k) + bias[u]
                           : chunkElement<F>(raw[u][j], k));
        } else {
          const float w = p.weights ? p.weights[i + u] : 1.0f;
          if constexpr (kQuantized) {
            const float ws = w * scale[u], wb = w * bias[u];
            EMBER_LOOKUP_UNROLL
            for (int j = 0; j < K; ++j)
              EMBER_LOOKUP_UNROLL
            for (int k = 0; k < V; ++k)
              acc[j][k] += ws * chunkElement<F>(raw[u][j], k) + wb;
          } else {
            EMBER_LOOKUP_UNROLL
            for (int j = 0; j < K; ++j)
              EMBER_LOOKUP_UNROLL
            for (int k = 0; k < V; ++k)
              acc[j][k] += w * chunkElement<F>(raw[u][j], k);
          }
        }
      }
    }
    if (reporter && invalid > 0 && bounds == LookupBounds::kWarning)
      sink.addInvalid(invalid);
    EMBER_LOOKUP_UNROLL
    for (int j = 0; j < K; ++j) {
      if (!live[j])
        continue;
      if (count == 0) {
        EMBER_LOOKUP_UNROLL
        for (int k = 0; k < V; ++k)
          acc[j][k] = 0.0f;
      } else if (pooling == LookupPooling::kMean && count > 1) {
        const float n = static_cast<float>(count);
        EMBER_LOOKUP_UNROLL
        for (int k = 0; k < V; ++k)
          acc[j][k] /= n;
      }
      const int64_t c = c0 + j * lanes;
      const int elems = dim - c * V < V ? static_cast<int>(dim - c * V) : V;
      storeChunk<V>(p, outRow, c * V, acc[j], elems);
    }
  }
}

/// Everything lane `lane` (0 <= lane < p.lanes) does for bag g, with K =
/// p.chunksPerLane chunks per lane (the kernel is instantiated per K: one
/// kernel for every K would need the registers of the largest).
template <int K, class Sink>
EMBER_HD void lookupBagLaneOf(const LookupParams &p, int64_t g, int lane,
                              Sink &sink) {
  const int32_t f =
      p.numFeatures == 1 ? 0 : static_cast<int32_t>(g / p.bagsPerFeature);
  const int64_t sample = g - static_cast<int64_t>(f) * p.bagsPerFeature;
  const FeatureDesc feature = featureAt(p, f);
  const TableDesc table = tableAt(p, feature.table);
  int64_t begin, end;
  bagRange(p, g, lane == 0, sink, begin, end);
  const int64_t first = sample * p.outStride + feature.outOffset;
  void *outRow =
      p.outHalf ? static_cast<void *>(static_cast<uint16_t *>(p.out) + first)
                : static_cast<void *>(static_cast<float *>(p.out) + first);
  const LookupPooling pooling = static_cast<LookupPooling>(feature.pooling);
  switch (static_cast<TableFormat>(table.format)) {
  case TableFormat::kFloat32:
    poolBagLane<TableFormat::kFloat32, K>(p, table, pooling, g, begin, end,
                                          lane, outRow, sink);
    break;
  case TableFormat::kFloat16:
    poolBagLane<TableFormat::kFloat16, K>(p, table, pooling, g, begin, end,
                                          lane, outRow, sink);
    break;
  case TableFormat::kBFloat16:
    poolBagLane<TableFormat::kBFloat16, K>(p, table, pooling, g, begin, end,
                                           lane, outRow, sink);
    break;
  case TableFormat::kInt8RowWise:
    poolBagLane<TableFormat::kInt8RowWise, K>(p, table, pooling, g, begin, end,
                                              lane, outRow, sink);
    break;
  case TableFormat::kInt4RowWise:
    poolBagLane<TableFormat::kInt4RowWise, K>(p, table, pooling, g, begin, end,
                                              lane, outRow, sink);
    break;
  }
}

/// lookupBagLaneOf<p.chunksPerLane> (the host emulation's entry).
template <class Sink>
EMBER_HD void lookupBagLane(const LookupParams &p, int64_t g, int lane,
                            Sink &sink) {
  static_assert(kMaxChunksPerLane == 4, "one case per chunk count");
  switch (p.chunksPerLane) {
  case 2:
    return lookupBagLaneOf<2>(p, g, lane, sink);
  case 3:
    return lookupBagLaneOf<3>(p, g, lane, sink);
  case 4:
    return lookupBagLaneOf<4>(p, g, lane, sink);
  default:
    return lookupBagLaneOf<1>(p, g, lane, sink);
  }
}

/// How the lanes of a bag share rows of at most `maxChunks` chunks, when
/// one lane may load up to `maxPerLane` chunks of a row per id: the fewest
/// lanes (a power of two, at most 32) for which that covers the row, but at
/// least 8 when the row has that many chunks (8 lanes x 16 bytes: each load
/// instruction reads 128 contiguous bytes of a row), and the chunks per
/// lane that then suffice. Fewer lanes per bag with several chunks each
/// keep more loads in flight and leave fewer lanes idle: on an H100, D 192
/// float16 (24 chunks) ran at 0.88 of the copy bandwidth as 8 lanes x 3
/// against 0.68 as 32 lanes x 1 (docs/performance.md).
struct LookupShape {
  int lanes = 1;
  int chunksPerLane = 1;
};
EMBER_HD_INLINE LookupShape chooseLookupShape(int64_t maxChunks,
                                              int maxPerLane) {
  constexpr int kMinLanes = 8;
  if (maxPerLane < 1)
    maxPerLane = 1;
  LookupShape s;
  while (s.lanes < 32 && (s.lanes * int64_t{maxPerLane} < maxChunks ||
                          (s.lanes < kMinLanes && s.lanes < maxChunks)))
    s.lanes *= 2;
  const int64_t perLane = (maxChunks + s.lanes - 1) / s.lanes;
  s.chunksPerLane =
      static_cast<int>(perLane < maxPerLane ? perLane : maxPerLane);
  if (s.chunksPerLane < 1)
    s.chunksPerLane = 1;
  return s;
}

/// `s` widened for a small batch: while `numBags` bags of s.lanes threads
/// would leave the GPU short of threads (fewer than `targetThreads`), twice
/// the lanes with half the chunks each. Where every bag runs at once, more
/// lanes with fewer chunks finish sooner: on an H100, batch 512 of D 128
/// float32 took 10.8 us as 32 lanes x 1 and 15.6 us as 8 x 4.
EMBER_HD_INLINE LookupShape fitLookupShapeToBatch(LookupShape s,
                                                  int64_t numBags,
                                                  int64_t targetThreads) {
  while (s.lanes < 32 && s.chunksPerLane > 1 &&
         numBags * s.lanes < targetThreads) {
    s.lanes *= 2;
    s.chunksPerLane = (s.chunksPerLane + 1) / 2;
  }
  return s;
}

/// Lengths -> counts for the offsets scan of the grouped lookup: element i
/// of `lengths`, raising kNegativeLength for a negative one.
template <class Sink>
EMBER_HD_INLINE int64_t checkedLength(const void *lengths, bool is64, int64_t i,
                                      Sink &sink) {
  const int64_t v = loadIndex(lengths, is64, i);
  if (v < 0)
    sink.raise(DeviceErrorCode::kNegativeLength, v, i, 0, 0);
  return v;
}

} // namespace ember::cuda::embedding

#endif // EMBER_CUDA_EMBEDDING_EMBEDDING_LOOKUP_CUH
