//===- shape_expand.cpp - expand (ONNX Expand) ----------------------------===//
//
// Broadcasts x to broadcast(x.shape, shape) where `shape` is the attr (or an
// int64 [n] second input when the attr is absent). Any dtype.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/dense_common.h"
#include "kernels/cpu/dense_registration.h"
#include "kernels/cpu/shape_strided_copy.h"
#include "kernels/kernel_registry.h"

namespace ember::cpu {
namespace {

Status validateExpand(const Attributes &attrs, int numInputs, int) {
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *shape,
                         findInts(attrs, "shape"));
  if (!shape && numInputs == 1)
    return invalidArgument("expand needs attribute 'shape' (or a shape input)");
  if (shape)
    for (int64_t d : *shape)
      if (d < 0)
        return invalidArgument(
            "attribute 'shape' of expand has the negative dim " +
            std::to_string(d));
  return Status::ok();
}

Status expandKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(
      atLocation(ctx, validateExpand(ctx.attrs(), ctx.numInputs(), 1)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *attr,
                         findInts(ctx.attrs(), "shape"));
  const int64_t *target;
  int64_t n;
  if (attr) {
    target = attr->data();
    n = static_cast<int64_t>(attr->size());
  } else {
    EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "shape"));
    const Tensor &s = ctx.input(1);
    if (s.dtype() != DType::kInt64 || s.rank() != 1)
      return kernelError(ctx,
                         "expand: the shape input must be int64 [n], got " +
                             s.describe());
    target = s.data<int64_t>();
    n = s.dim(0);
  }
  Result<Shape> targetShape = Shape::fromDims(target, static_cast<size_t>(n));
  if (!targetShape.isOk())
    return kernelError(ctx, "expand: " + targetShape.status().message());
  Shape shapes[2] = {x.shape(), *targetShape};
  Result<Shape> outShape = broadcastShapes(shapes, 2);
  if (!outShape.isOk())
    return kernelError(ctx, "expand: " + outShape.status().message());
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
  KernelDef def;
  def.name = "expand";
  def.run = expandKernel;
  def.validate = validateExpand;
  def.minInputs = 1;
  def.maxInputs = 2;
  def.summary = "broadcasts x to attr shape (numpy rules), any dtype";
  return registry.add(std::move(def));
}

} // namespace ember::cpu
