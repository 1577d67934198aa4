//===- dense_common.cpp - Helpers shared by the dense and shape kernels ---===//
#include "kernels/shared/dense_common.h"

#include <variant>

namespace ember::cpu {

Status kernelError(const KernelContext &ctx, const std::string &what) {
  return invalidArgument(ctx.location() + ": " + what);
}

Status kernelRangeError(const KernelContext &ctx, const std::string &what) {
  return outOfRange(ctx.location() + ": " + what);
}

Status requireInput(const KernelContext &ctx, int index, const char *name) {
  if (index >= ctx.numInputs() || !ctx.input(index).defined())
    return kernelError(ctx, std::string("input ") + std::to_string(index) +
                                " (" + name + ") is missing");
  return Status::ok();
}

Status requireDType(const KernelContext &ctx, const Tensor &t, const char *name,
                    DType dtype) {
  if (t.dtype() != dtype)
    return kernelError(ctx, std::string(name) + " must be " +
                                std::string(dtypeName(dtype)) + ", got " +
                                t.describe());
  return Status::ok();
}

Status requireRank(const KernelContext &ctx, const Tensor &t, const char *name,
                   int rank) {
  if (t.rank() != rank)
    return kernelError(ctx, std::string(name) + " must have rank " +
                                std::to_string(rank) + ", got " + t.describe());
  return Status::ok();
}

bool isFloatLike(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

Result<const float *> floatInput(KernelContext &ctx, const Tensor &t,
                                 const char *name) {
  if (t.dtype() == DType::kFloat32)
    return t.data<float>();
  if (t.dtype() != DType::kFloat16 && t.dtype() != DType::kBFloat16)
    return kernelError(ctx, std::string(name) +
                                " must be float32, float16 or bfloat16, got " +
                                t.describe());
  int64_t n = t.numel();
  EMBER_ASSIGN_OR_RETURN(void *mem, ctx.scratch(static_cast<size_t>(n) * 4));
  float *out = static_cast<float *>(mem);
  const uint16_t *in = t.data<uint16_t>();
  bool half = t.dtype() == DType::kFloat16;
  parallelFor(ctx, n, 65536, [&](int64_t b, int64_t e) {
    if (half)
      for (int64_t i = b; i < e; ++i)
        out[i] = halfToFloat(in[i]);
    else
      for (int64_t i = b; i < e; ++i)
        out[i] = bfloat16ToFloat(in[i]);
  });
  return static_cast<const float *>(out);
}

Result<int> normalizeAxis(const KernelContext &ctx, int64_t axis, int rank,
                          const char *attr) {
  if (axis < -rank || axis >= rank)
    return kernelError(
        ctx, std::string("attribute '") + attr + "' = " + std::to_string(axis) +
                 " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

Result<const std::vector<int64_t> *> findInts(const Attributes &attrs,
                                              const char *name) {
  const Attributes::Value *v = attrs.find(name);
  if (!v)
    return static_cast<const std::vector<int64_t> *>(nullptr);
  if (auto *ints = std::get_if<std::vector<int64_t>>(v))
    return ints;
  return invalidArgument(std::string("attribute '") + name +
                         "' must be a list of integers");
}

Status validateBoolAttr(const Attributes &attrs, const char *name) {
  EMBER_ASSIGN_OR_RETURN(int64_t v, attrs.getInt(name));
  if (v != 0 && v != 1)
    return invalidArgument(std::string("attribute '") + name +
                           "' must be 0 or 1, got " + std::to_string(v));
  return Status::ok();
}

void contiguousStrides(const Shape &shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i];
  }
}

} // namespace ember::cpu
