//===- shape_scatter.cpp - scatter_nd (ONNX ScatterND, reduction none) ----===//
//
// Inputs data [d0..dr-1], indices [..., k] (int64 or int32, k <= r),
// updates indices.shape[:-1] + data.shape[k:]. The output is a copy of data
// with out[indices[i]] = updates[i] for each index tuple, in order (a later
// duplicate wins). Negative indices count from the back; an index outside
// [-dim, dim) is an OutOfRange error naming it. Any dtype.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"

#include <cstring>

namespace ember::cpu {
namespace {

Status validateScatterNd(const Attributes &attrs, int, int) {
  EMBER_ASSIGN_OR_RETURN(std::string reduction, attrs.getString("reduction"));
  if (reduction != "none")
    return invalidArgument("scatter_nd supports only reduction 'none', got '" +
                           reduction + "'");
  return Status::ok();
}

Status scatterNdKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateScatterNd(ctx.attrs(), 0, 0)));
  for (int i = 0; i < 3; ++i)
    EMBER_RETURN_IF_ERROR(requireInput(ctx, i,
                                       i == 0   ? "data"
                                       : i == 1 ? "indices"
                                                : "updates"));
  const Tensor &data = ctx.input(0), &indices = ctx.input(1),
               &updates = ctx.input(2);
  if (indices.dtype() != DType::kInt64 && indices.dtype() != DType::kInt32)
    return kernelError(ctx, "scatter_nd: indices must be int32 or int64, got " +
                                indices.describe());
  if (updates.dtype() != data.dtype())
    return kernelError(ctx, "scatter_nd: updates " + updates.describe() +
                                " must have the dtype of data " +
                                data.describe());
  if (indices.rank() < 1)
    return kernelError(ctx, "scatter_nd: indices must have rank >= 1, got " +
                                indices.describe());
  int64_t k = indices.dim(indices.rank() - 1);
  if (k < 1 || k > data.rank())
    return kernelError(
        ctx, "scatter_nd: the last dim of indices " + indices.describe() +
                 " must be in [1, rank of data " + data.describe() + "]");
  // updates.shape == indices.shape[:-1] + data.shape[k:]
  bool ok = updates.rank() == indices.rank() - 1 + data.rank() - k;
  for (int i = 0; ok && i < indices.rank() - 1; ++i)
    ok = updates.dim(i) == indices.dim(i);
  for (int i = 0; ok && i < data.rank() - k; ++i)
    ok = updates.dim(indices.rank() - 1 + i) ==
         data.dim(static_cast<int>(k) + i);
  if (!ok)
    return kernelError(
        ctx, "scatter_nd: updates " + updates.describe() +
                 " must be indices.shape[:-1] + data.shape[k:] for indices " +
                 indices.describe() + " and data " + data.describe());
  int64_t tuples = indices.numel() / k;
  int64_t strides[Shape::kMaxRank];
  contiguousStrides(data.shape(), strides);
  auto at = [&](int64_t i) {
    return indices.dtype() == DType::kInt64
               ? indices.data<int64_t>()[i]
               : int64_t{indices.data<int32_t>()[i]};
  };
  for (int64_t t = 0; t < tuples; ++t)
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = at(t * k + j), dim = data.dim(static_cast<int>(j));
      if (v < -dim || v >= dim)
        return kernelRangeError(
            ctx, "scatter_nd: index " + std::to_string(v) + " (tuple " +
                     std::to_string(t) + ", component " + std::to_string(j) +
                     ") is out of range for dim " + std::to_string(j) +
                     " of size " + std::to_string(dim));
    }
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, data.dtype(), data.shape()));
  if (data.nbytes())
    std::memcpy(out->data(), data.data(), data.nbytes());
  size_t es = dtypeSize(data.dtype());
  int64_t sliceElems = k == data.rank() ? 1 : strides[k - 1];
  size_t sliceBytes = static_cast<size_t>(sliceElems) * es;
  char *dst = out->data<char>();
  const char *src = updates.data<char>();
  for (int64_t t = 0; t < tuples; ++t) { // in order: a later duplicate wins
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = at(t * k + j);
      if (v < 0)
        v += data.dim(static_cast<int>(j));
      off += v * strides[j];
    }
    if (sliceBytes)
      std::memcpy(dst + off * es, src + t * sliceBytes, sliceBytes);
  }
  return Status::ok();
}

} // namespace

Status registerScatterKernels(KernelRegistry &registry) {
  return addKernels(
      registry,
      {{"scatter_nd", scatterNdKernel, validateScatterNd,
        "ONNX ScatterND (reduction none): copy of data with slices replaced"}});
}

} // namespace ember::cpu
