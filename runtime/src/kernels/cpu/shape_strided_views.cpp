//===- shape_strided_views.cpp - slice, transpose -------------------------===//
//
// Both copy a strided view of x (kernels/shared/strided_view.h says which)
// into a dense result with stridedCopy. Any dtype.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/cpu/shape_strided_copy.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/strided_view.h"

namespace ember::cpu {
namespace {

template <Result<StridedView> (*View)(KernelContext &)>
Status stridedViewKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(StridedView view, View(ctx));
  const Tensor &x = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         allocateOutput(ctx, x.dtype(), view.shape));
  stridedCopy(ctx, x.data(), view.base, view.strides, out->data(), view.shape,
              dtypeSize(x.dtype()));
  return Status::ok();
}

} // namespace

Status registerStridedViewKernels(KernelRegistry &registry) {
  return addKernels(
      registry,
      {
          {"slice", stridedViewKernel<sliceView>, validateSlice,
           "ONNX Slice with attrs starts/ends/axes/steps, any dtype"},
          {"transpose", stridedViewKernel<transposeView>, validateTranspose,
           "permutes dims by attr perm (default reversed), any dtype"},
      });
}

} // namespace ember::cpu
