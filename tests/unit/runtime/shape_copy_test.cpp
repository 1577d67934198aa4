//===- shape_copy_test.cpp - concat transpose slice expand vs naive -------===//
#include "dense_test_support.h"

#include <limits>

using namespace ember;
using namespace ember::testing;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(Concat, MatchesNaiveOnEveryAxisAndDtype) {
  uint32_t seed = 1;
  for (int axis = -3; axis < 3; ++axis) {
    int a = axis < 0 ? axis + 3 : axis;
    std::vector<Tensor> parts;
    for (int64_t len : {2, 0, 3, 1}) {
      Shape s{4, 5, 6};
      s[a] = len;
      parts.push_back(randomInts(s, seed++, -50, 50, DType::kInt32));
    }
    for (int threads : {1, 4}) {
      Tensor y = runOk(
          "concat",
          [&](TestKernelContext &c) {
            for (const Tensor &p : parts)
              c.addInput(p);
            c.attrs().set("axis", int64_t{axis});
          },
          threads);
      Shape expect{4, 5, 6};
      expect[a] = 6;
      ASSERT_EQ(y.shape(), expect);
      ASSERT_EQ(y.dtype(), DType::kInt32);
      for (int64_t i = 0; i < y.numel(); ++i) {
        std::vector<int64_t> idx = unravel(i, y.shape());
        int part = 0;
        while (idx[a] >= parts[part].dim(a))
          idx[a] -= parts[part++].dim(a);
        int64_t off = 0;
        for (int k = 0; k < 3; ++k)
          off = off * parts[part].dim(k) + idx[k];
        ASSERT_EQ(y.data<int32_t>()[i], parts[part].data<int32_t>()[off])
            << axis << " " << i;
      }
    }
  }
}

TEST(Concat, MalformedInputsAreClearErrors) {
  Tensor a = randomFloats({2, 3}, 1);
  expectError(runStatus("concat",
                        [&](TestKernelContext &c) {
                          c.addInput(a).addInput(randomFloats({3, 3}, 2));
                          c.attrs().set("axis", int64_t{1});
                        }),
              {"test kernel", "input 1 float32[3, 3]", "outside axis 1"});
  expectError(runStatus("concat",
                        [&](TestKernelContext &c) {
                          c.addInput(a).addInput(randomInts({2, 3}, 2, 0, 1));
                          c.attrs().set("axis", int64_t{0});
                        }),
              {"input 1 int64[2, 3]"});
  expectError(runStatus("concat",
                        [&](TestKernelContext &c) {
                          c.addInput(a);
                          c.attrs().set("axis", int64_t{2});
                        }),
              {"axis", "out of range"});
  expectError(runStatus("concat", [&](TestKernelContext &c) { c.addInput(a); }),
              {"kernel 'concat' needs the attribute 'axis' (an int)"});
}

TEST(Transpose, MatchesNaiveForEveryPermOfRank3And4) {
  Tensor x = randomInts({2, 3, 4}, 5, -100, 100);
  std::vector<int64_t> perm = {0, 1, 2};
  do {
    Tensor y = runOk("transpose", [&](TestKernelContext &c) {
      c.addInput(x);
      c.attrs().set("perm", perm);
    });
    for (int64_t i = 0; i < y.numel(); ++i) {
      std::vector<int64_t> idx = unravel(i, y.shape()), src(3);
      for (int k = 0; k < 3; ++k)
        src[perm[k]] = idx[k];
      ASSERT_EQ(y.data<int64_t>()[i],
                x.data<int64_t>()[(src[0] * 3 + src[1]) * 4 + src[2]]);
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  // Default reverses; 2-byte elements; large enough for threads.
  Tensor h = randomInts({33, 65, 17}, 6, 0, 60000, DType::kInt32);
  Tensor hh = *Tensor::allocate(DType::kFloat16, h.shape());
  for (int64_t i = 0; i < h.numel(); ++i)
    hh.data<uint16_t>()[i] = static_cast<uint16_t>(h.data<int32_t>()[i]);
  Tensor one = runOk(
      "transpose", [&](TestKernelContext &c) { c.addInput(hh); }, 1);
  Tensor four = runOk(
      "transpose", [&](TestKernelContext &c) { c.addInput(hh); }, 4);
  ASSERT_EQ(one.shape(), Shape({17, 65, 33}));
  expectIdentical(one, four);
  for (int64_t i = 0; i < one.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, one.shape());
    ASSERT_EQ(one.data<uint16_t>()[i],
              hh.data<uint16_t>()[(idx[2] * 65 + idx[1]) * 17 + idx[0]]);
  }
  expectError(runStatus("transpose",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("perm", std::vector<int64_t>{0, 1});
                        }),
              {"test kernel", "not a permutation", "int64[2, 3, 4]"});
  expectError(runStatus("transpose",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("perm", std::vector<int64_t>{0, 0, 1});
                        }),
              {"not a permutation"});
}

/// ONNX Slice semantics written out independently for the reference.
std::vector<int64_t> sliceIndices(int64_t dim, int64_t start, int64_t end,
                                  int64_t step) {
  std::vector<int64_t> out;
  if (start < 0)
    start = std::max<int64_t>(start + dim, step > 0 ? 0 : -1);
  if (end < 0)
    end = std::max<int64_t>(end + dim, -1);
  if (step > 0) {
    start = std::min(start, dim);
    end = std::min(end, dim);
    for (int64_t i = start; i < end;
         i += step) { // stops before i + step overflows
      out.push_back(i);
      if (end - i <= step)
        break;
    }
  } else {
    start = std::min(start, dim - 1);
    end = std::min(end, dim - 1);
    uint64_t magnitude = uint64_t{0} - static_cast<uint64_t>(step);
    for (int64_t i = start; i > end && i >= 0; i += step) {
      out.push_back(i);
      if (static_cast<uint64_t>(i - end) <= magnitude)
        break;
    }
  }
  return out;
}

TEST(Slice, MatchesOnnxSemanticsIncludingNegativeAndClampedBounds) {
  Tensor x = randomInts({5, 6, 7}, 7, -1000, 1000);
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const Case cases[] = {
      {{1}, {3}, {}, {}},
      {{0, 1}, {kMax, -1}, {0, 2}, {}},
      {{-1}, {kMin}, {1}, {-1}}, // reverse a whole axis
      {{4, 5}, {-10, 0}, {0, 1}, {-2, -3}},
      {{-100}, {100}, {-1}, {3}},
      {{2}, {2}, {0}, {1}}, // empty
      {{3}, {1}, {2}, {1}}, // empty (start > end)
      {{0, 0, 0}, {kMax, kMax, kMax}, {2, 1, 0}, {2, 2, 2}},
      {{10}, {kMax}, {1}, {1}},                      // start past the end
      {{1, -1}, {kMax, kMin}, {0, 2}, {kMax, kMin}}, // huge steps: one element
  };
  for (const Case &c : cases) {
    Tensor y = runOk("slice", [&](TestKernelContext &ctx) {
      ctx.addInput(x);
      ctx.attrs().set("starts", c.starts);
      ctx.attrs().set("ends", c.ends);
      if (!c.axes.empty())
        ctx.attrs().set("axes", c.axes);
      if (!c.steps.empty())
        ctx.attrs().set("steps", c.steps);
    });
    std::vector<std::vector<int64_t>> sel(3);
    for (int k = 0; k < 3; ++k)
      for (int64_t i = 0; i < x.dim(k); ++i)
        sel[k].push_back(i);
    for (size_t i = 0; i < c.starts.size(); ++i) {
      int64_t axis = c.axes.empty() ? int64_t(i) : c.axes[i];
      if (axis < 0)
        axis += 3;
      sel[axis] = sliceIndices(x.dim(axis), c.starts[i], c.ends[i],
                               c.steps.empty() ? 1 : c.steps[i]);
    }
    ASSERT_EQ(y.shape(), Shape({int64_t(sel[0].size()), int64_t(sel[1].size()),
                                int64_t(sel[2].size())}));
    for (int64_t i = 0; i < y.numel(); ++i) {
      std::vector<int64_t> idx = unravel(i, y.shape());
      int64_t off = (sel[0][idx[0]] * 6 + sel[1][idx[1]]) * 7 + sel[2][idx[2]];
      ASSERT_EQ(y.data<int64_t>()[i], x.data<int64_t>()[off]) << i;
    }
  }
}

TEST(Slice, MalformedAttributesAreClearErrors) {
  Tensor x = randomFloats({4, 4}, 1);
  auto run = [&](std::vector<int64_t> starts, std::vector<int64_t> ends,
                 std::vector<int64_t> axes, std::vector<int64_t> steps) {
    return runStatus("slice", [&](TestKernelContext &c) {
      c.addInput(x);
      c.attrs().set("starts", starts);
      c.attrs().set("ends", ends);
      if (!axes.empty())
        c.attrs().set("axes", axes);
      if (!steps.empty())
        c.attrs().set("steps", steps);
    });
  };
  expectError(run({0}, {1}, {}, {0}), {"steps", "0"});
  expectError(run({0}, {1, 2}, {}, {}), {"same length"});
  expectError(run({0}, {1}, {2}, {}), {"test kernel", "axes", "out of range"});
  expectError(run({0, 0}, {1, 1}, {1, -1}, {}), {"repeats"});
  expectError(runStatus("slice", [&](TestKernelContext &c) { c.addInput(x); }),
              {"kernel 'slice' needs the attribute 'starts'"});
  expectError(runStatus("slice",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("starts", std::vector<int64_t>{0});
                        }),
              {"kernel 'slice' needs the attribute 'ends'"});
}

TEST(Expand, BroadcastsLikeNumpy) {
  Tensor x = randomFloats({3, 1}, 8);
  for (int threads : {1, 4}) {
    Tensor y = runOk(
        "expand",
        [&](TestKernelContext &c) {
          c.addInput(x);
          c.attrs().set("shape", std::vector<int64_t>{2, 1, 500});
        },
        threads);
    ASSERT_EQ(y.shape(), Shape({2, 3, 500}));
    for (int64_t i = 0; i < y.numel(); ++i)
      ASSERT_EQ(y.data<float>()[i], x.data<float>()[unravel(i, y.shape())[1]]);
  }
  // Shape smaller than the input's rank and an ONNX shape input.
  Tensor z = runOk("expand", [&](TestKernelContext &c) {
    c.addInput(x).addInput(int64s({1}, {4}));
  });
  EXPECT_EQ(z.shape(), Shape({3, 4}));
  expectError(runStatus("expand",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("shape", std::vector<int64_t>{2, 2});
                        }),
              {"test kernel", "[3, 1]", "[2, 2]", "not broadcastable"});
  // A result too large to allocate is an error with the location, not a
  // crash.
  Status huge = runStatus("expand", [&](TestKernelContext &c) {
    c.addInput(x);
    c.attrs().set("shape", std::vector<int64_t>{int64_t{1} << 40, 3, 1 << 20});
  });
  EXPECT_EQ(huge.code(), StatusCode::kResourceExhausted);
  expectError(huge, {"test kernel", "too large"});
}

} // namespace
