//===- elementwise_device.cuh - Per-element bodies of the dense kernels -*- C++
//-*-===//
//
// The per-thread code of the CUDA elementwise kernels (unary, binary,
// comparison, where, cast, expand, activation epilogues, dcn_cross's
// combine), written once as EMBER_HD functions: nvcc compiles them into the
// kernels of elementwise.cu and cast.cu, and
// tests/unit/gpu/dense_emulation_test.cpp runs them with the host compiler
// over an emulated grid against the CPU kernels. Every function computes
// exactly what the CPU kernel of the same name computes for one element.
//
// Broadcasting: BroadcastIndex is the CPU's BroadcastLayout (dims merged,
// stride 0 along stretched dims) flattened for the device: output element
// `linear` reads operand k at offsets(linear)[k].
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_CUDA_DENSE_ELEMENTWISE_DEVICE_CUH
#define EMBER_CUDA_DENSE_ELEMENTWISE_DEVICE_CUH

#include "cuda/host_device.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace ember::cuda::dense {

constexpr int kMaxDims = 8;     // Shape::kMaxRank
constexpr int kMaxOperands = 3; // cpu::kMaxBroadcastOperands

/// Operand offsets of every output element of a broadcast.
struct BroadcastIndex {
  int rank = 1; // >= 1
  int count = 1;
  int64_t dims[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};

  EMBER_HD_INLINE void offsets(int64_t linear, int64_t *off) const {
    if (rank == 1) {
      for (int k = 0; k < count; ++k)
        off[k] = linear * strides[k][0];
      return;
    }
    for (int k = 0; k < count; ++k)
      off[k] = 0;
    for (int i = rank - 1; i >= 0; --i) {
      int64_t d = dims[i];
      int64_t idx = linear % d;
      linear /= d;
      for (int k = 0; k < count; ++k)
        off[k] += idx * strides[k][i];
    }
  }
};

//===----------------------------------------------------------------------===//
// Activations and unary math (float32)
//===----------------------------------------------------------------------===//

/// The values of cpu::Activation.
enum ActivationCode : int {
  kActNone = 0,
  kActRelu = 1,
  kActSigmoid = 2,
  kActTanh = 3
};

EMBER_HD_INLINE float reluOf(float x) {
  return x > 0.f ? x : (x != x ? x : 0.f);
}
EMBER_HD_INLINE float sigmoidOf(float x) { return 1.f / (1.f + expf(-x)); }

EMBER_HD_INLINE float activationValue(int act, float x) {
  switch (act) {
  case kActRelu:
    return reluOf(x);
  case kActSigmoid:
    return sigmoidOf(x);
  case kActTanh:
    return tanhf(x);
  default:
    return x;
  }
}

/// out[i] = act(out[i] + bias[i % n]) (bias may be null): linear's epilogue
/// for activations cuBLASLt has none of, and for K = 0.
EMBER_HD_INLINE void biasActivationElement(float *out, const float *bias,
                                           int64_t n, int act, int64_t i) {
  float v = out[i];
  if (bias)
    v += bias[i % n];
  out[i] = activationValue(act, v);
}

/// dcn_cross: out[i] = x0[i] * out[i] + xl[i] (out holds xl·Wᵀ + bias).
EMBER_HD_INLINE void crossCombineElement(const float *x0, const float *xl,
                                         float *out, int64_t i) {
  out[i] = x0[i] * out[i] + xl[i];
}

enum UnaryCode : int {
  kUnaryRelu = 0,
  kUnarySigmoid,
  kUnaryTanh,
  kUnaryNeg,
  kUnaryExp,
  kUnaryLog,
  kUnarySqrt,
  kUnaryAbs,
};

EMBER_HD_INLINE float unaryValue(int op, float x) {
  switch (op) {
  case kUnaryRelu:
    return reluOf(x);
  case kUnarySigmoid:
    return sigmoidOf(x);
  case kUnaryTanh:
    return tanhf(x);
  case kUnaryNeg:
    return -x;
  case kUnaryExp:
    return expf(x);
  case kUnaryLog:
    return logf(x);
  case kUnarySqrt:
    return sqrtf(x);
  case kUnaryAbs:
    return fabsf(x);
  default:
    return x;
  }
}

//===----------------------------------------------------------------------===//
// Binary arithmetic and comparisons with broadcasting
//===----------------------------------------------------------------------===//

enum BinaryCode : int {
  kBinaryAdd = 0,
  kBinarySub,
  kBinaryMul,
  kBinaryDiv,
  kBinaryMax,
  kBinaryMin,
};

/// Integer ops wrap (unsigned arithmetic); div is float only.
template <typename T> EMBER_HD_INLINE T binaryValue(int op, T a, T b) {
  if constexpr (std::is_same_v<T, float>) {
    switch (op) {
    case kBinaryAdd:
      return a + b;
    case kBinarySub:
      return a - b;
    case kBinaryMul:
      return a * b;
    case kBinaryDiv:
      return a / b;
    case kBinaryMax: // NaN propagates (numpy maximum)
      return (a > b || a != a) ? a : b;
    case kBinaryMin:
      return (a < b || a != a) ? a : b;
    default:
      return 0.f;
    }
  } else {
    using U = std::make_unsigned_t<T>;
    switch (op) {
    case kBinaryAdd:
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    case kBinarySub:
      return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
    case kBinaryMul:
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    case kBinaryMax:
      return a > b ? a : b;
    case kBinaryMin:
      return a < b ? a : b;
    default:
      return T();
    }
  }
}

template <typename T>
EMBER_HD_INLINE void binaryElement(const BroadcastIndex &ix, int op, const T *a,
                                   const T *b, T *out, int64_t i) {
  int64_t off[kMaxOperands];
  ix.offsets(i, off);
  out[i] = binaryValue<T>(op, a[off[0]], b[off[1]]);
}

enum CompareCode : int {
  kCompareEqual = 0,
  kCompareGreater,
  kCompareGreaterEqual,
};

template <typename T> EMBER_HD_INLINE uint8_t compareValue(int op, T a, T b) {
  switch (op) {
  case kCompareEqual:
    return a == b;
  case kCompareGreaterEqual:
    return a >= b;
  default:
    return a > b;
  }
}

template <typename T>
EMBER_HD_INLINE void compareElement(const BroadcastIndex &ix, int op,
                                    const T *a, const T *b, uint8_t *out,
                                    int64_t i) {
  int64_t off[kMaxOperands];
  ix.offsets(i, off);
  out[i] = compareValue<T>(op, a[off[0]], b[off[1]]);
}

/// where: operands (condition, a, b); T is an unsigned type of the element
/// size (the values are only moved).
template <typename T>
EMBER_HD_INLINE void whereElement(const BroadcastIndex &ix, const uint8_t *cond,
                                  const T *a, const T *b, T *out, int64_t i) {
  int64_t off[kMaxOperands];
  ix.offsets(i, off);
  out[i] = cond[off[0]] ? a[off[1]] : b[off[2]];
}

/// expand: one operand broadcast to the output.
template <typename T>
EMBER_HD_INLINE void expandElement(const BroadcastIndex &ix, const T *x, T *out,
                                   int64_t i) {
  int64_t off[kMaxOperands];
  ix.offsets(i, off);
  out[i] = x[off[0]];
}

//===----------------------------------------------------------------------===//
// cast (the rules of kernels/cpu/cast.h)
//===----------------------------------------------------------------------===//

/// The values of ember::DType.
enum DTypeCode : int {
  kF32 = 0,
  kF16 = 1,
  kBF16 = 2,
  kI8 = 3,
  kU8 = 4,
  kI32 = 5,
  kI64 = 6,
  kBool = 7,
  kF64 = 8,
};

EMBER_HD_INLINE bool isFloatCode(int t) {
  return t == kF32 || t == kF16 || t == kBF16 || t == kF64;
}

EMBER_HD_INLINE float halfBitsToFloat(uint16_t bits) {
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}
EMBER_HD_INLINE uint16_t floatToHalfBits(float f) {
  __half_raw raw = static_cast<__half_raw>(__float2half_rn(f));
  return raw.x;
}
EMBER_HD_INLINE float bf16BitsToFloat(uint16_t bits) {
  __nv_bfloat16_raw raw;
  raw.x = bits;
  return __bfloat162float(__nv_bfloat16(raw));
}
EMBER_HD_INLINE uint16_t floatToBf16Bits(float f) {
  __nv_bfloat16_raw raw =
      static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(f));
  return raw.x;
}

EMBER_HD_INLINE double loadAsDouble(const void *p, int t, int64_t i) {
  switch (t) {
  case kF32:
    return static_cast<const float *>(p)[i];
  case kF16:
    return halfBitsToFloat(static_cast<const uint16_t *>(p)[i]);
  case kBF16:
    return bf16BitsToFloat(static_cast<const uint16_t *>(p)[i]);
  default:
    return static_cast<const double *>(p)[i];
  }
}

EMBER_HD_INLINE int64_t loadAsInt(const void *p, int t, int64_t i) {
  switch (t) {
  case kI8:
    return static_cast<const int8_t *>(p)[i];
  case kU8:
    return static_cast<const uint8_t *>(p)[i];
  case kBool:
    return static_cast<const uint8_t *>(p)[i] != 0;
  case kI32:
    return static_cast<const int32_t *>(p)[i];
  default:
    return static_cast<const int64_t *>(p)[i];
  }
}

template <typename D> EMBER_HD_INLINE D saturateTo(double x) {
  if (x != x)
    return D(0);
  if (x >= static_cast<double>(std::numeric_limits<D>::max()))
    return std::numeric_limits<D>::max();
  if (x <= static_cast<double>(std::numeric_limits<D>::min()))
    return std::numeric_limits<D>::min();
  return static_cast<D>(x);
}

/// out[i] (dtype `to`) = in[i] (dtype `from`) converted.
EMBER_HD_INLINE void castElement(const void *in, int from, void *out, int to,
                                 int64_t i) {
  if (isFloatCode(from)) {
    double x = loadAsDouble(in, from, i);
    switch (to) {
    case kF32:
      static_cast<float *>(out)[i] = static_cast<float>(x);
      return;
    case kF64:
      static_cast<double *>(out)[i] = x;
      return;
    case kF16:
      static_cast<uint16_t *>(out)[i] = floatToHalfBits(static_cast<float>(x));
      return;
    case kBF16:
      static_cast<uint16_t *>(out)[i] = floatToBf16Bits(static_cast<float>(x));
      return;
    case kBool:
      static_cast<uint8_t *>(out)[i] = x != 0;
      return;
    case kI8:
      static_cast<int8_t *>(out)[i] = saturateTo<int8_t>(trunc(x));
      return;
    case kU8:
      static_cast<uint8_t *>(out)[i] = saturateTo<uint8_t>(trunc(x));
      return;
    case kI32:
      static_cast<int32_t *>(out)[i] = saturateTo<int32_t>(trunc(x));
      return;
    default:
      static_cast<int64_t *>(out)[i] = saturateTo<int64_t>(trunc(x));
      return;
    }
  }
  int64_t v = loadAsInt(in, from, i);
  switch (to) {
  case kF32:
    static_cast<float *>(out)[i] = static_cast<float>(v);
    return;
  case kF64:
    static_cast<double *>(out)[i] = static_cast<double>(v);
    return;
  case kF16:
    static_cast<uint16_t *>(out)[i] = floatToHalfBits(static_cast<float>(v));
    return;
  case kBF16:
    static_cast<uint16_t *>(out)[i] = floatToBf16Bits(static_cast<float>(v));
    return;
  case kBool:
    static_cast<uint8_t *>(out)[i] = v != 0;
    return;
  case kI8: // two's-complement wrap
    static_cast<int8_t *>(out)[i] =
        static_cast<int8_t>(static_cast<uint8_t>(v));
    return;
  case kU8:
    static_cast<uint8_t *>(out)[i] = static_cast<uint8_t>(v);
    return;
  case kI32:
    static_cast<int32_t *>(out)[i] =
        static_cast<int32_t>(static_cast<uint32_t>(v));
    return;
  default:
    static_cast<int64_t *>(out)[i] = v;
    return;
  }
}

} // namespace ember::cuda::dense

#endif // EMBER_CUDA_DENSE_ELEMENTWISE_DEVICE_CUH
