//===- collective_launch.h - Launchers of the collectives ------*- C++ -*-===//
//
// Host entry points of the device code of the collectives (defined in
// collective_kernels.cu and kjt_all_to_all.cu; per-thread bodies in
// collective_device.cuh). Every launcher enqueues on env.stream, launches
// nothing for 0 elements and returns launchStatus(...). Pointers are device
// memory; small int64 arrays (prefix sums) too.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_COLLECTIVES_COLLECTIVE_LAUNCH_H
#define EMBER_CUDA_COLLECTIVES_COLLECTIVE_LAUNCH_H

#include "cuda/kernel_env.h"
#include "ember/status.h"

#include <cstddef>
#include <cstdint>

namespace ember::cuda::collectives {

/// out[i] = wire(in[i]) for i < n (wire: kWireFloat16 / kWireBFloat16).
Status launchEncodeWire(const KernelEnv &env, const float *in, uint16_t *out,
                        int64_t n, int wire);
/// out[i] = float(in[i]).
Status launchDecodeWire(const KernelEnv &env, const uint16_t *in, float *out,
                        int64_t n, int wire);

/// pooled_all_to_all: out [bMe, dSum] from the staging blocks, segment by
/// segment (`segments`: the 3 * numSegments + 1 entries of
/// pooledUnpackTable, see pooledSourceIndex). wire == kWireFloat32:
/// elements of elementBytes bytes are copied; else 16-bit wire values are
/// widened into float32 out.
Status launchPooledUnpack(const KernelEnv &env, const void *staging, int wire,
                          int elementBytes, void *out, int64_t bMe,
                          int64_t dSum, const int64_t *segments,
                          int numSegments);

/// out[i] = reduction of g blocks of `block` elements (reduceBlocksAt); when
/// outWire is set, also outWire[i] = wire(out[i]) with wire `encode`.
Status launchReduceBlocks(const KernelEnv &env, const void *staging, int wire,
                          int g, int64_t block, bool isMax, float *out,
                          uint16_t *outWire, int encode);

/// kjt_all_to_all, step 1: sums[p] += values sent to position p (lengths
/// [n], lenOff g + 1 prefix sums); firstNegative = min index of a negative
/// length. sums and firstNegative must be zeroed / set to all ones first.
Status launchKjtCount(const KernelEnv &env, const void *lengths, bool is64,
                      int64_t n, const int64_t *lenOff, int g,
                      unsigned long long *sums,
                      unsigned long long *firstNegative);

/// Step 2: out lengths [kMe * bTotal] key-major from the received
/// source-major ones; also writes them as int64 in output order (outLen64)
/// and in received order (inLen64) for the scans.
Status launchKjtPermuteLengths(const KernelEnv &env, const void *received,
                               void *out, bool is64, int64_t *outLen64,
                               int64_t *inLen64, int64_t kMe, int64_t bTotal,
                               const int64_t *batchOff, int g);

/// Scratch bytes of launchExclusiveScan for n items.
Result<size_t> exclusiveScanScratchBytes(int64_t n);
/// out[i] = sum of in[0..i) (n items; temp from exclusiveScanScratchBytes).
Status launchExclusiveScan(const KernelEnv &env, void *temp, size_t tempBytes,
                           const int64_t *in, int64_t *out, int64_t n);

/// Step 3: copies each output bag's values (and weights when ow is set)
/// from the received source-major buffers; a bag outside the n values
/// raises kLengthsSumMismatch and is skipped.
Status launchKjtCopyValues(const KernelEnv &env, const int64_t *outLen64,
                           const int64_t *outOff, const int64_t *inOff,
                           int64_t kMe, int64_t bTotal, const int64_t *batchOff,
                           int g, const void *rv, void *ov, int valueBytes,
                           const float *rw, float *ow, int64_t n);

} // namespace ember::cuda::collectives

#endif // EMBER_CUDA_COLLECTIVES_COLLECTIVE_LAUNCH_H
