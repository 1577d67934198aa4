//===- cast.cpp - The cast kernel and element conversions -----------------===//
#include "kernels/cpu/cast.h"

#include "kernels/cpu/dense_registration.h"
#include "kernels/kernel_registry.h"
#include "kernels/shared/dense_common.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace ember::cpu {
namespace {

// Storage tags for the 16-bit float formats.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
struct Bool {
  uint8_t bits;
};

template <typename T> constexpr bool isFloatSource() {
  return std::is_same_v<T, float> || std::is_same_v<T, double> ||
         std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
}

template <typename S> double loadFloat(S v) {
  if constexpr (std::is_same_v<S, Half>)
    return halfToFloat(v.bits);
  else if constexpr (std::is_same_v<S, BFloat16>)
    return bfloat16ToFloat(v.bits);
  else
    return static_cast<double>(v);
}

template <typename S> int64_t loadInt(S v) {
  if constexpr (std::is_same_v<S, Bool>)
    return v.bits != 0;
  else
    return static_cast<int64_t>(v);
}

template <typename D> D saturate(double x) {
  if (x != x)
    return D(0);
  if (x >= static_cast<double>(std::numeric_limits<D>::max()))
    return std::numeric_limits<D>::max();
  if (x <= static_cast<double>(std::numeric_limits<D>::min()))
    return std::numeric_limits<D>::min();
  return static_cast<D>(x);
}

template <typename S, typename D> D convertOne(S v) {
  if constexpr (isFloatSource<S>()) {
    double x = loadFloat(v);
    if constexpr (std::is_same_v<D, Half>)
      return Half{floatToHalf(static_cast<float>(x))};
    else if constexpr (std::is_same_v<D, BFloat16>)
      return BFloat16{floatToBFloat16(static_cast<float>(x))};
    else if constexpr (std::is_same_v<D, Bool>)
      return Bool{static_cast<uint8_t>(x != 0)};
    else if constexpr (std::is_floating_point_v<D>)
      return static_cast<D>(x);
    else
      return saturate<D>(std::trunc(x));
  } else {
    int64_t i = loadInt(v);
    if constexpr (std::is_same_v<D, Half>)
      return Half{floatToHalf(static_cast<float>(i))};
    else if constexpr (std::is_same_v<D, BFloat16>)
      return BFloat16{floatToBFloat16(static_cast<float>(i))};
    else if constexpr (std::is_same_v<D, Bool>)
      return Bool{static_cast<uint8_t>(i != 0)};
    else if constexpr (std::is_floating_point_v<D>)
      return static_cast<D>(i);
    else
      return static_cast<D>(static_cast<std::make_unsigned_t<D>>(i)); // wraps
  }
}

template <typename S, typename D>
void convertLoop(const void *in, void *out, int64_t b, int64_t e) {
  const S *src = static_cast<const S *>(in);
  D *dst = static_cast<D *>(out);
  for (int64_t i = b; i < e; ++i)
    dst[i] = convertOne<S, D>(src[i]);
}

template <typename S>
void convertFrom(const void *in, void *out, DType to, int64_t b, int64_t e) {
  switch (to) {
  case DType::kFloat32:
    return convertLoop<S, float>(in, out, b, e);
  case DType::kFloat16:
    return convertLoop<S, Half>(in, out, b, e);
  case DType::kBFloat16:
    return convertLoop<S, BFloat16>(in, out, b, e);
  case DType::kInt8:
    return convertLoop<S, int8_t>(in, out, b, e);
  case DType::kUInt8:
    return convertLoop<S, uint8_t>(in, out, b, e);
  case DType::kInt32:
    return convertLoop<S, int32_t>(in, out, b, e);
  case DType::kInt64:
    return convertLoop<S, int64_t>(in, out, b, e);
  case DType::kBool:
    return convertLoop<S, Bool>(in, out, b, e);
  case DType::kFloat64:
    return convertLoop<S, double>(in, out, b, e);
  }
}

Status validateCast(const Attributes &attrs, int, int) {
  EMBER_ASSIGN_OR_RETURN(std::string to, attrs.getString("to"));
  if (!parseDType(to))
    return invalidArgument("attribute 'to' names the unknown dtype '" + to +
                           "'");
  return Status::ok();
}

Status castKernel(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(atLocation(ctx, validateCast(ctx.attrs(), 0, 0)));
  EMBER_RETURN_IF_ERROR(requireInput(ctx, 0, "x"));
  const Tensor &x = ctx.input(0);
  DType to = *parseDType(*ctx.attrs().getString("to"));
  if (to == x.dtype())
    return ctx.setOutput(0, x); // no conversion: alias
  EMBER_ASSIGN_OR_RETURN(Tensor * out, allocateOutput(ctx, to, x.shape()));
  const void *in = x.data();
  void *o = out->data();
  DType from = x.dtype();
  parallelFor(ctx, x.numel(), 1 << 15, [&](int64_t b, int64_t e) {
    convertElements(in, from, o, to, b, e);
  });
  return Status::ok();
}

} // namespace

void convertElements(const void *in, DType from, void *out, DType to,
                     int64_t begin, int64_t end) {
  switch (from) {
  case DType::kFloat32:
    return convertFrom<float>(in, out, to, begin, end);
  case DType::kFloat16:
    return convertFrom<Half>(in, out, to, begin, end);
  case DType::kBFloat16:
    return convertFrom<BFloat16>(in, out, to, begin, end);
  case DType::kInt8:
    return convertFrom<int8_t>(in, out, to, begin, end);
  case DType::kUInt8:
    return convertFrom<uint8_t>(in, out, to, begin, end);
  case DType::kInt32:
    return convertFrom<int32_t>(in, out, to, begin, end);
  case DType::kInt64:
    return convertFrom<int64_t>(in, out, to, begin, end);
  case DType::kBool:
    return convertFrom<Bool>(in, out, to, begin, end);
  case DType::kFloat64:
    return convertFrom<double>(in, out, to, begin, end);
  }
}

Status registerCastKernels(KernelRegistry &registry) {
  return addKernels(
      registry, {{"cast", castKernel, validateCast,
                  "converts to attr to (a dtype name); same dtype aliases"}});
}

} // namespace ember::cpu
