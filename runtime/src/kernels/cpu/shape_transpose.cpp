//===- shape_transpose.cpp - transpose ------------------------------------===//
//
// out.dim(k) = x.dim(perm[k]) for attr `perm` (default: the dims reversed),
// any dtype, copied through stridedCopy.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_common.h"
#include "kernels/cpu/dense_registration.h"
#include "kernels/cpu/shape_strided_copy.h"
#include "kernels/kernel_registry.h"

namespace ember::cpu {
namespace {

Status validateTranspose(const Attributes &attrs, int, int) {
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *perm,
                         findInts(attrs, "perm"));
  if (!perm)
    return Status::ok();
  int64_t n = static_cast<int64_t>(perm->size());
  bool seen[Shape::kMaxRank] = {};
  bool ok = n <= Shape::kMaxRank;
  for (int64_t i = 0; ok && i < n; ++i) {
    int64_t p = (*perm)[i];
    ok = p >= 0 && p < n && !seen[p];
    if (ok)
      seen[p] = true;
  }
  if (!ok)
    return invalidArgument("attribute 'perm' is not a permutation of 0.." +
                           std::to_string(n - 1));
  return Status::ok();
}

} // namespace

Result<StridedView> planTranspose(KernelContext &ctx, const Tensor &x) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateTranspose(ctx.attrs(), 0, 0)));
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *perm,
                         findInts(ctx.attrs(), "perm"));
  int rank = x.rank();
  int64_t p[Shape::kMaxRank];
  if (perm) {
    bool seen[Shape::kMaxRank] = {};
    bool ok = static_cast<int>(perm->size()) == rank;
    for (int k = 0; ok && k < rank; ++k) {
      p[k] = (*perm)[k];
      ok = p[k] >= 0 && p[k] < rank && !seen[p[k]];
      if (ok)
        seen[p[k]] = true;
    }
    if (!ok)
      return kernelError(
          ctx, "transpose: attribute 'perm' is not a permutation of the " +
                   std::to_string(rank) + " dims of " + x.describe());
  } else {
    for (int k = 0; k < rank; ++k)
      p[k] = rank - 1 - k;
  }
  int64_t inStrides[Shape::kMaxRank], strides[Shape::kMaxRank],
      dims[Shape::kMaxRank];
  contiguousStrides(x.shape(), inStrides);
  for (int k = 0; k < rank; ++k) {
    dims[k] = x.dim(static_cast<int>(p[k]));
    strides[k] = inStrides[p[k]];
  }
  StridedView view;
  EMBER_ASSIGN_OR_RETURN(view.shape, Shape::fromDims(dims, rank));
  for (int k = 0; k < rank; ++k)
    view.strides[k] = strides[k];
  return view;
}

namespace {

Status transposeKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(StridedView view, planTranspose(ctx, x));
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, x.dtype(), view.shape));
  stridedCopy(ctx, x.data(), 0, view.strides, out->data(), view.shape,
              dtypeSize(x.dtype()));
  return Status::ok();
}

} // namespace

Status registerTransposeKernels(KernelRegistry &registry) {
  KernelDef def;
  def.name = "transpose";
  def.run = transposeKernel;
  def.validate = validateTranspose;
  def.summary = "permutes dims by attr perm (default reversed), any dtype";
  return registry.add(std::move(def));
}

} // namespace ember::cpu
