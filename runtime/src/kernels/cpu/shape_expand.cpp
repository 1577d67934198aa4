//===- shape_expand.cpp - expand (ONNX Expand) ----------------------------===//
//
// Broadcasts x to broadcast(x.shape, shape) where `shape` is the attr (or an
// int64 [n] second input when the attr is absent). Any dtype.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/cpu/shape_strided_copy.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/broadcast.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/expand_shape.h"

namespace ember::cpu {
namespace {

Status expandKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(Shape expanded, expandShape(ctx, [](const Tensor &s) {
                           const int64_t *dims = s.data<int64_t>();
                           return Result<std::vector<int64_t>>(
                               std::vector<int64_t>(dims, dims + s.dim(0)));
                         }));
  const Shape *outShape = &expanded;
  const Tensor &x = ctx.input(0);
  int64_t inStrides[Shape::kMaxRank], strides[Shape::kMaxRank];
  contiguousStrides(x.shape(), inStrides);
  int offset = outShape->rank() - x.rank();
  for (int i = 0; i < outShape->rank(); ++i) {
    int j = i - offset;
    strides[i] = (j < 0 || x.dim(j) == 1) ? 0 : inStrides[j];
  }
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, x.dtype(), *outShape));
  stridedCopy(ctx, x.data(), 0, strides, out->data(), *outShape,
              dtypeSize(x.dtype()));
  return Status::ok();
}

} // namespace

Status registerExpandKernels(KernelRegistry &registry) {
  return addKernels(registry,
                    {{"expand", expandKernel, validateExpand,
                      "broadcasts x to attr shape (numpy rules), any dtype"}});
}

} // namespace ember::cpu
