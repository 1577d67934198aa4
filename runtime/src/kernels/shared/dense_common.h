//===- dense_common.h - Helpers shared by the dense and shape kernels -*- C++
//-*-===//
//
// Error construction (every message starts with ctx.location()), dtype and
// rank checks, float32 views of float16/bfloat16 inputs, allocation-free
// attribute access and a parallel loop that does not allocate.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNELS_SHARED_DENSE_COMMON_H
#define EMBER_KERNELS_SHARED_DENSE_COMMON_H

#include "ember/status.h"
#include "ember/tensor.h"
#include "kernels/attributes.h"
#include "kernels/kernel_context.h"
#include "threading/thread_pool.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ember::cpu {

/// InvalidArgument "<location>: <what>".
Status kernelError(const KernelContext &ctx, const std::string &what);
/// OutOfRange "<location>: <what>".
Status kernelRangeError(const KernelContext &ctx, const std::string &what);

/// Input `index` must be present (a defined tensor).
Status requireInput(const KernelContext &ctx, int index, const char *name);
/// `s` with "<location>: " prepended when it is an error. The location
/// string is only built on failure (no allocation on the success path).
inline Status atLocation(const KernelContext &ctx, Status s) {
  if (s.isOk())
    return s;
  return s.withContext(ctx.location());
}

/// ctx.allocateOutput(0, ...) with the location added to a failure (e.g. a
/// result too large to allocate).
inline Result<Tensor *> allocateOutput(KernelContext &ctx, DType dtype,
                                       const Shape &shape) {
  Result<Tensor *> out = ctx.allocateOutput(0, dtype, shape);
  if (!out.isOk())
    return out.status().withContext(ctx.location());
  return out;
}

/// Fails unless `t` has dtype `dtype`.
Status requireDType(const KernelContext &ctx, const Tensor &t, const char *name,
                    DType dtype);
/// Fails unless `t` has rank `rank`.
Status requireRank(const KernelContext &ctx, const Tensor &t, const char *name,
                   int rank);

/// True for float32, float16 and bfloat16: the dtypes float kernels accept.
bool isFloatLike(DType dtype);

/// The elements of a float32, float16 or bfloat16 tensor as float32. A
/// float32 tensor is returned as is; the others are converted into scratch
/// memory. Any other dtype is an error naming `name`.
Result<const float *> floatInput(KernelContext &ctx, const Tensor &t,
                                 const char *name);

/// Normalizes `axis` in [-rank, rank) to [0, rank) or fails naming `attr`.
Result<int> normalizeAxis(const KernelContext &ctx, int64_t axis, int rank,
                          const char *attr);

/// The attribute `name` as a list of ints without copying it; nullptr when
/// it is absent (a kOptional attribute of the kernel contract left out). A
/// present attribute of another kind is an error.
Result<const std::vector<int64_t> *> findInts(const Attributes &attrs,
                                              const char *name);

/// A 0/1 flag (an int attribute): fails when it is absent, of another kind
/// or another value (messages name the attribute).
Status validateBoolAttr(const Attributes &attrs, const char *name);

/// Runs fn(begin, end) over [0, n) on the context's pool, in chunks of at
/// least `grain`. Runs inline when n <= grain. Does not heap-allocate: the
/// std::function holds a single reference.
template <typename F>
void parallelFor(KernelContext &ctx, int64_t n, int64_t grain, const F &fn) {
  if (n <= 0)
    return;
  if (n <= grain || ctx.threadPool().size() == 1) {
    fn(int64_t{0}, n);
    return;
  }
  std::function<void(int64_t, int64_t)> wrapper = [&fn](int64_t b, int64_t e) {
    fn(b, e);
  };
  ctx.threadPool().parallelFor(0, n, grain, wrapper);
}

/// A grain (in items) such that each chunk does about `targetWork` units of
/// work when one item costs `workPerItem`.
inline int64_t grainFor(int64_t workPerItem, int64_t targetWork = 32768) {
  if (workPerItem <= 0)
    workPerItem = 1;
  int64_t g = targetWork / workPerItem;
  return g < 1 ? 1 : g;
}

/// Row-major element strides of `shape`.
void contiguousStrides(const Shape &shape, int64_t *strides);

} // namespace ember::cpu

#endif // EMBER_KERNELS_SHARED_DENSE_COMMON_H
