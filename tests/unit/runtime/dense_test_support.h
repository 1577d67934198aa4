//===- dense_test_support.h - Helpers for the dense/shape kernel tests -*- C++
//-*-===//
//
// Random tensors with fixed seeds, tensors from literal values, naive
// broadcasting index math for references, and comparisons.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_DENSE_TEST_SUPPORT_H
#define EMBER_TESTS_DENSE_TEST_SUPPORT_H

#include "support/test_kernel_context.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace ember {
/// gtest prints shapes as "[2, 3]".
inline void PrintTo(const Shape &shape, std::ostream *os) {
  *os << shape.toString();
}
} // namespace ember

namespace ember::testing {

/// Uniform float32 values in [lo, hi) from `seed`.
inline Tensor randomFloats(const Shape &shape, uint32_t seed, float lo = -1.f,
                           float hi = 1.f) {
  Tensor t = *Tensor::allocate(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = dist(rng);
  return t;
}

/// Uniform int64 values in [lo, hi] from `seed`.
inline Tensor randomInts(const Shape &shape, uint32_t seed, int64_t lo,
                         int64_t hi, DType dtype = DType::kInt64) {
  Tensor t = *Tensor::allocate(dtype, shape);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t v = dist(rng);
    if (dtype == DType::kInt64)
      t.data<int64_t>()[i] = v;
    else if (dtype == DType::kInt32)
      t.data<int32_t>()[i] = static_cast<int32_t>(v);
    else
      t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
  }
  return t;
}

template <typename T>
Tensor tensorOf(DType dtype, const Shape &shape, const std::vector<T> &values) {
  Tensor t = *Tensor::allocate(dtype, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  if (!values.empty())
    std::memcpy(t.data(), values.data(), values.size() * sizeof(T));
  return t;
}

inline Tensor floats(const Shape &shape, const std::vector<float> &v) {
  return tensorOf(DType::kFloat32, shape, v);
}
inline Tensor int64s(const Shape &shape, const std::vector<int64_t> &v) {
  return tensorOf(DType::kInt64, shape, v);
}

template <typename T> std::vector<T> valuesOf(const Tensor &t) {
  std::vector<T> v(static_cast<size_t>(t.numel()));
  if (!v.empty())
    std::memcpy(v.data(), t.data(), v.size() * sizeof(T));
  return v;
}

/// Row-major multi-index of flat position `flat` in `shape`.
inline std::vector<int64_t> unravel(int64_t flat, const Shape &shape) {
  std::vector<int64_t> idx(shape.rank());
  for (int i = shape.rank() - 1; i >= 0; --i) {
    idx[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
  return idx;
}

/// Flat offset in `in` of the output multi-index `outIdx` under numpy
/// broadcasting (in aligned at the trailing dims, size-1 dims repeat).
inline int64_t broadcastSource(const std::vector<int64_t> &outIdx,
                               const Shape &in) {
  int64_t off = 0;
  int shift = static_cast<int>(outIdx.size()) - in.rank();
  for (int i = 0; i < in.rank(); ++i) {
    int64_t c = in[i] == 1 ? 0 : outIdx[i + shift];
    off = off * in[i] + c;
  }
  return off;
}

/// Expects every element of float tensor `t` within tol of `ref`
/// (relative to max(1, |ref|)).
inline void expectClose(const Tensor &t, const std::vector<double> &ref,
                        double tol = 1e-5, const std::string &what = "") {
  ASSERT_EQ(t.dtype(), DType::kFloat32) << what;
  ASSERT_EQ(t.numel(), static_cast<int64_t>(ref.size())) << what;
  const float *p = t.data<float>();
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(ref[i])) {
      ASSERT_TRUE(std::isnan(p[i])) << what << " at " << i;
      continue;
    }
    double scale = std::max(1.0, std::fabs(ref[i]));
    ASSERT_NEAR(p[i], ref[i], tol * scale) << what << " at " << i;
  }
}

/// Expects two tensors to be bit-identical (dtype, shape, bytes).
inline void expectIdentical(const Tensor &a, const Tensor &b,
                            const std::string &what = "") {
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.nbytes())) << what;
}

/// Runs kernel `name` on a fresh context built by `setup` with `threads`
/// threads; fails the test if the kernel fails. Returns output 0.
inline Tensor runOk(const std::string &name,
                    const std::function<void(TestKernelContext &)> &setup,
                    int threads = 1) {
  TestKernelContext ctx(threads);
  setup(ctx);
  if (ctx.numOutputs() == 0)
    ctx.setNumOutputs(1);
  Status s = runKernel(name, ctx);
  EXPECT_TRUE(s.isOk()) << name << ": " << s.toString();
  return s.isOk() ? ctx.output(0) : Tensor();
}

/// Runs kernel `name` and returns its Status (expected to be an error).
inline Status runStatus(const std::string &name,
                        const std::function<void(TestKernelContext &)> &setup,
                        int threads = 1) {
  TestKernelContext ctx(threads);
  setup(ctx);
  if (ctx.numOutputs() == 0)
    ctx.setNumOutputs(1);
  return runKernel(name, ctx);
}

/// Expects `s` to be an error whose message contains every one of `parts`.
inline void expectError(const Status &s,
                        std::initializer_list<const char *> parts) {
  ASSERT_FALSE(s.isOk()) << "expected an error";
  for (const char *p : parts)
    EXPECT_NE(s.message().find(p), std::string::npos)
        << "message '" << s.message() << "' lacks '" << p << "'";
}

} // namespace ember::testing

#endif // EMBER_TESTS_DENSE_TEST_SUPPORT_H
