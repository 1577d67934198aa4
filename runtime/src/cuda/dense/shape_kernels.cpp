//===- shape_kernels.cpp - slice, transpose, shape on CUDA ----------------===//
//
// slice and transpose work out their strided view with the CPU kernels' own
// sliceView / transposeView (kernels/shared/strided_view.h: same attribute
// handling and errors) and copy it with the broadcast-copy kernel
// (a BroadcastIndex with the view's strides, which may be negative). `shape`
// writes the input's dims through kernel parameters (the input's data is
// never read, so it does not fall back to the host).
//
//===----------------------------------------------------------------------===//
#include "cuda/dense/dense_host.h"
#include "cuda/dense/dense_launch.h"
#include "cuda/dense/dense_registration.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/shape_op_range.h"
#include "kernels/shared/strided_view.h"

#include <algorithm>

namespace ember::cuda::dense {
namespace {

template <Result<cpu::StridedView> (*View)(KernelContext &)>
Status stridedViewKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::StridedView view, View(ctx));
  const Tensor &x = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, x.dtype(), view.shape));
  if (out->numel() == 0)
    return Status::ok();
  BroadcastIndex ix = stridedIndex(view);
  size_t es = dtypeSize(x.dtype());
  const char *base = x.data<char>() + view.base * static_cast<int64_t>(es);
  return cpu::atLocation(ctx, launchExpand(*env, ix, base, out->data(),
                                           static_cast<int>(es), out->numel()));
}

Status shapeKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx));
  EMBER_ASSIGN_OR_RETURN(cpu::ShapeOpRange range, cpu::shapeOpRange(ctx));
  const Tensor &x = ctx.input(0);
  const int64_t start = range.start, n = range.count;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         cpu::allocateOutput(ctx, DType::kInt64, {n}));
  int64_t dims[Shape::kMaxRank];
  for (int64_t i = 0; i < n; ++i)
    dims[i] = x.dim(static_cast<int>(start + i));
  return cpu::atLocation(ctx, launchWriteInt64s(*env, dims, static_cast<int>(n),
                                                out->data<int64_t>()));
}

} // namespace

Status registerShapeKernels(KernelRegistry &r) {
  return addCudaKernels(
      r,
      {
          {"slice", stridedViewKernel<cpu::sliceView>, "strided copy kernel"},
          {"transpose", stridedViewKernel<cpu::transposeView>,
           "strided copy kernel"},
          {"shape", shapeKernel, "dims as kernel parameters"},
      });
}

} // namespace ember::cuda::dense
