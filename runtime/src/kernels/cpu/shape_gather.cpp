//===- shape_gather.cpp - gather gather_elements --------------------------===//
//
// gather (ONNX Gather): out = data[:axis] + indices.shape + data[axis+1:].
// gather_elements (ONNX GatherElements): out has the indices' shape, and
// out[i..] = data[i.. with i_axis replaced by indices[i..]]. Indices are int32
// or int64; negative ones count from the back; one out of [-dim, dim) is an
// OutOfRange error naming the index, its position and the dim. Any data dtype.
// Every index is checked before anything is written.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/gather_shape.h"

#include <cstring>

namespace ember::cpu {
namespace {

inline int64_t indexAt(const Tensor &indices, int64_t i) {
  return indices.dtype() == DType::kInt64 ? indices.data<int64_t>()[i]
                                          : int64_t{indices.data<int32_t>()[i]};
}

/// Fails on the first index outside [-dim, dim).
Status checkIndices(KernelContext &ctx, const Tensor &indices, int64_t dim,
                    const char *op, int axis) {
  int64_t n = indices.numel();
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = indexAt(indices, i);
    if (v < -dim || v >= dim)
      return kernelRangeError(
          ctx, std::string(op) + ": index " + std::to_string(v) +
                   " at position " + std::to_string(i) +
                   " is out of range for axis " + std::to_string(axis) +
                   " of size " + std::to_string(dim));
  }
  return Status::ok();
}

Status gatherKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(GatherShape s, gatherShape(ctx));
  const Tensor &data = ctx.input(0), &indices = ctx.input(1);
  const int axis = s.axis;
  int64_t axisDim = data.dim(axis);
  EMBER_RETURN_IF_ERROR(checkIndices(ctx, indices, axisDim, "gather", axis));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, data.dtype(), s.outShape));
  const int64_t outer = s.outer, inner = s.inner, n = indices.numel();
  size_t rowBytes = static_cast<size_t>(inner) * dtypeSize(data.dtype());
  if (out->numel() == 0)
    return Status::ok();
  const char *src = data.data<char>();
  char *dst = out->data<char>();
  parallelFor(ctx, outer * n,
              grainFor(static_cast<int64_t>(rowBytes) + 16, 1 << 16),
              [&](int64_t b, int64_t e) {
                for (int64_t item = b; item < e; ++item) {
                  int64_t o = item / n, j = item % n;
                  int64_t idx = indexAt(indices, j);
                  if (idx < 0)
                    idx += axisDim;
                  std::memcpy(dst + item * rowBytes,
                              src + (o * axisDim + idx) * rowBytes, rowBytes);
                }
              });
  return Status::ok();
}

Status gatherElementsKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(int axis, gatherElementsAxis(ctx));
  const Tensor &data = ctx.input(0), &indices = ctx.input(1);
  int64_t axisDim = data.dim(axis);
  EMBER_RETURN_IF_ERROR(
      checkIndices(ctx, indices, axisDim, "gather_elements", axis));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, data.dtype(), indices.shape()));
  int64_t total = indices.numel();
  if (total == 0)
    return Status::ok();
  int rank = data.rank();
  int64_t dataStrides[Shape::kMaxRank];
  contiguousStrides(data.shape(), dataStrides);
  size_t es = dtypeSize(data.dtype());
  const char *src = data.data<char>();
  char *dst = out->data<char>();
  parallelFor(ctx, total, 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      int64_t rem = i, off = 0;
      for (int k = rank - 1; k >= 0; --k) {
        int64_t c = rem % indices.dim(k);
        rem /= indices.dim(k);
        if (k == axis) {
          c = indexAt(indices, i);
          if (c < 0)
            c += axisDim;
        }
        off += c * dataStrides[k];
      }
      std::memcpy(dst + i * es, src + off * es, es);
    }
  });
  return Status::ok();
}

} // namespace

Status registerGatherKernels(KernelRegistry &registry) {
  return addKernels(
      registry,
      {
          {"gather", gatherKernel, validateGatherAxis,
           "ONNX Gather along attr axis (int32/int64 indices, any dtype)"},
          {"gather_elements", gatherElementsKernel, validateGatherAxis,
           "ONNX GatherElements along attr axis"},
      });
}

} // namespace ember::cpu
