//===- shape_reshape.cpp - reshape flatten squeeze unsqueeze shape --------===//
//
// The views: reshape, flatten, squeeze and unsqueeze alias their input with a
// new shape (setOutput, no copy) and work for any dtype. `shape` writes the
// input's dims as int64.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"
#include "kernels/shared/shape_op_range.h"

#include <algorithm>
#include <string_view>

namespace ember::cpu {
namespace {

Status aliasWithShape(KernelContext &ctx, const Tensor &x, const int64_t *dims,
                      int rank) {
  Result<Shape> shape = Shape::fromDims(dims, static_cast<size_t>(rank));
  if (!shape.isOk())
    return kernelError(ctx, shape.status().message());
  Result<Tensor> view = x.reshaped(*shape);
  if (!view.isOk())
    return kernelError(ctx, view.status().message());
  return ctx.setOutput(0, *view);
}

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

Status validateReshape(const Attributes &attrs, int numInputs, int) {
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *shape,
                         findInts(attrs, "shape"));
  if (!shape && numInputs == 1)
    return invalidArgument(
        "reshape needs attribute 'shape' (or a shape input)");
  if (shape) {
    if (shape->size() > size_t(Shape::kMaxRank))
      return invalidArgument("attribute 'shape' has more than " +
                             std::to_string(Shape::kMaxRank) + " dims");
    if (std::count(shape->begin(), shape->end(), -1) > 1)
      return invalidArgument("attribute 'shape' has more than one -1");
    for (int64_t d : *shape)
      if (d < -1)
        return invalidArgument("attribute 'shape' has the invalid dim " +
                               std::to_string(d));
  }
  return Status::ok();
}

Status reshapeKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(
      atLocation(ctx, validateReshape(ctx.attrs(), ctx.numInputs(), 1)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *attr,
                         findInts(ctx.attrs(), "shape"));
  const int64_t *target;
  int64_t rank;
  if (attr) {
    target = attr->data();
    rank = static_cast<int64_t>(attr->size());
  } else {
    EMBER_RETURN_IF_ERROR(requireInput(ctx, 1, "shape"));
    const Tensor &s = ctx.input(1);
    if (s.dtype() != DType::kInt64 || s.rank() != 1)
      return kernelError(ctx,
                         "reshape: the shape input must be int64 [rank], got " +
                             s.describe());
    target = s.data<int64_t>();
    rank = s.dim(0);
  }
  if (rank > Shape::kMaxRank)
    return kernelError(ctx, "reshape: target rank " + std::to_string(rank) +
                                " exceeds " + std::to_string(Shape::kMaxRank));
  int64_t dims[Shape::kMaxRank];
  int inferred = -1;
  int64_t known = 1;
  for (int i = 0; i < rank; ++i) {
    int64_t d = target[i];
    if (d == 0) { // ONNX: 0 copies the input's dim
      if (i >= x.rank())
        return kernelError(ctx, "reshape: dim " + std::to_string(i) +
                                    " is 0 (copy) but x " + x.describe() +
                                    " has no dim " + std::to_string(i));
      d = x.dim(i);
    } else if (d == -1) {
      if (inferred >= 0)
        return kernelError(ctx,
                           "reshape: more than one -1 in the target shape");
      inferred = i;
      dims[i] = 1;
      continue;
    } else if (d < -1) {
      return kernelError(ctx, "reshape: invalid dim " + std::to_string(d));
    }
    dims[i] = d;
    if (__builtin_mul_overflow(known, d, &known))
      return kernelError(ctx,
                         "reshape: the target shape's element count overflows");
  }
  if (inferred >= 0) {
    if (known == 0 || x.numel() % known != 0)
      return kernelError(
          ctx, "reshape: cannot infer the -1 dim of the target for x " +
                   x.describe());
    dims[inferred] = x.numel() / known;
    known *= dims[inferred];
  }
  if (known != x.numel()) {
    // Not through Shape::fromDims: the target may be no valid shape at all.
    std::string t = "[";
    for (int i = 0; i < rank; ++i)
      t += (i ? ", " : "") + std::to_string(dims[i]);
    return kernelError(ctx, "reshape: x " + x.describe() + " has " +
                                std::to_string(x.numel()) +
                                " elements, target " + t + "] has " +
                                std::to_string(known));
  }
  return aliasWithShape(ctx, x, dims, static_cast<int>(rank));
}

//===----------------------------------------------------------------------===//
// flatten
//===----------------------------------------------------------------------===//

Status validateFlatten(const Attributes &attrs, int, int) {
  return attrs.getInt("axis").status();
}

Status flattenKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateFlatten(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  int64_t axis = *ctx.attrs().getInt("axis");
  if (axis < -x.rank() || axis > x.rank())
    return kernelError(ctx,
                       "flatten: attribute 'axis' = " + std::to_string(axis) +
                           " is out of range for " + x.describe());
  if (axis < 0)
    axis += x.rank();
  int64_t dims[2] = {1, 1};
  for (int i = 0; i < x.rank(); ++i)
    dims[i < axis ? 0 : 1] *= x.dim(i);
  return aliasWithShape(ctx, x, dims, 2);
}

//===----------------------------------------------------------------------===//
// squeeze / unsqueeze
//===----------------------------------------------------------------------===//

/// squeeze and unsqueeze: `axes` (squeeze: [] by default, every size-1 dim).
Status validateAxes(const Attributes &attrs, int, int) {
  EMBER_ASSIGN_OR_RETURN(const std::vector<int64_t> *axes,
                         findInts(attrs, "axes"));
  if (!axes)
    return invalidArgument("missing attribute 'axes'");
  return Status::ok();
}

Status squeezeKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateAxes(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  const std::vector<int64_t> *axes = *findInts(ctx.attrs(), "axes");
  bool drop[Shape::kMaxRank] = {};
  if (axes->empty()) {
    for (int i = 0; i < x.rank(); ++i)
      drop[i] = x.dim(i) == 1;
  } else {
    for (int64_t a : *axes) {
      EMBER_ASSIGN_OR_RETURN(int axis, normalizeAxis(ctx, a, x.rank(), "axes"));
      if (x.dim(axis) != 1)
        return kernelError(ctx, "squeeze: axis " + std::to_string(a) + " of " +
                                    x.describe() + " has size " +
                                    std::to_string(x.dim(axis)) + ", not 1");
      drop[axis] = true;
    }
  }
  int64_t dims[Shape::kMaxRank];
  int r = 0;
  for (int i = 0; i < x.rank(); ++i)
    if (!drop[i])
      dims[r++] = x.dim(i);
  return aliasWithShape(ctx, x, dims, r);
}

Status unsqueezeKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateAxes(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  const std::vector<int64_t> &axes = **findInts(ctx.attrs(), "axes");
  int64_t outRank = x.rank() + static_cast<int64_t>(axes.size());
  if (outRank > Shape::kMaxRank)
    return kernelError(ctx, "unsqueeze: result rank " +
                                std::to_string(outRank) + " exceeds " +
                                std::to_string(Shape::kMaxRank));
  bool inserted[Shape::kMaxRank] = {};
  for (int64_t a : axes) {
    EMBER_ASSIGN_OR_RETURN(
        int axis, normalizeAxis(ctx, a, static_cast<int>(outRank), "axes"));
    if (inserted[axis])
      return kernelError(ctx,
                         "unsqueeze: axis " + std::to_string(a) + " repeats");
    inserted[axis] = true;
  }
  int64_t dims[Shape::kMaxRank];
  for (int i = 0, j = 0; i < outRank; ++i)
    dims[i] = inserted[i] ? 1 : x.dim(j++);
  return aliasWithShape(ctx, x, dims, static_cast<int>(outRank));
}

//===----------------------------------------------------------------------===//
// shape
//===----------------------------------------------------------------------===//

Status shapeKernel(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(ShapeOpRange range, shapeOpRange(ctx));
  const Tensor &x = ctx.input(0);
  const int64_t start = range.start, n = range.count;
  EMBER_ASSIGN_OR_RETURN(Tensor * out, allocateOutput(ctx, DType::kInt64, {n}));
  for (int64_t i = 0; i < n; ++i)
    out->data<int64_t>()[i] = x.dim(static_cast<int>(start + i));
  return Status::ok();
}

} // namespace

Status registerReshapeKernels(KernelRegistry &registry) {
  return addKernels(
      registry,
      {
          {"reshape", reshapeKernel, validateReshape,
           "view with attr shape (-1 infers, 0 copies the input dim), no "
           "copy"},
          {"flatten", flattenKernel, validateFlatten,
           "view as [prod(dims[:axis]), prod(dims[axis:])], no copy"},
          {"squeeze", squeezeKernel, validateAxes,
           "drops size-1 dims (attr axes, or all), no copy"},
          {"unsqueeze", unsqueezeKernel, validateAxes,
           "inserts size-1 dims at attr axes of the result, no copy"},
          {"shape", shapeKernel, validateShape,
           "the input's dims as int64 [rank]"},
      });
}

} // namespace ember::cpu
